#include "backends/cpu/kernels/transpose_bytes.hpp"

#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>

namespace infer::cpu {

namespace {

// The edges element by element: columns [c0, c1), rows [r0, rows). Restrict pointers and
// values, not references: byte stores may alias anything, and the loop reloaded its bounds
// after every one (an image's 3 colour planes turned channel-last took 0.24 ms of 150 KB).
template <class T>
void transpose_edge(const T* __restrict from, int64_t rows, int64_t cols, int64_t c0, int64_t c1, int64_t r0,
                    T* __restrict to) {
    for (int64_t c = c0; c < c1; ++c)
        for (int64_t r = r0; r < rows; ++r) to[c * rows + r] = from[r * cols + c];
}

// dst[j * dst_stride + i] = src[i * src_stride + j] for i, j < 4: shuffles only.
inline void transpose4x4_words(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride) {
    const auto* s = reinterpret_cast<const float*>(src);
    auto* d = reinterpret_cast<float*>(dst);
    __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + src_stride), r2 = _mm_loadu_ps(s + 2 * src_stride),
           r3 = _mm_loadu_ps(s + 3 * src_stride);
    _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
    _mm_storeu_ps(d, r0);
    _mm_storeu_ps(d + dst_stride, r1);
    _mm_storeu_ps(d + 2 * dst_stride, r2);
    _mm_storeu_ps(d + 3 * dst_stride, r3);
}

// Both sizes: blocks of sixteen columns over the pool, each block's whole 16-row stretches by
// `block` (from, cols, to + c0 * rows + r, rows), the rest element by element.
template <class T, class Block>
void transpose_matrix(const T* from, int64_t rows, int64_t cols, T* to, Block block) {
    const int64_t whole_rows = rows / 16 * 16;
    parallel_for((cols + 15) / 16, grain_for(16 * rows * static_cast<int64_t>(sizeof(T)), int64_t{1} << 16),
                 [&](int64_t begin, int64_t end) {
                     for (int64_t b = begin; b < end; ++b) {
                         const int64_t c0 = b * 16, last = std::min(cols, c0 + 16);
                         const bool whole_block = c0 + 16 <= cols;
                         if (whole_block)
                             for (int64_t r = 0; r < whole_rows; r += 16) block(from + r * cols + c0, cols, to + c0 * rows + r, rows);
                         transpose_edge(from, rows, cols, c0, last, whole_block ? whole_rows : 0, to);
                     }
                 });
}

}  // namespace

void transpose_byte_matrix(const uint8_t* from, int64_t rows, int64_t cols, uint8_t* to) {
    transpose_matrix(from, rows, cols, to, transpose16x16_bytes);
}

void transpose_word_matrix(const uint32_t* from, int64_t rows, int64_t cols, uint32_t* to) {
    transpose_matrix(from, rows, cols, to, [](const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride) {
        for (int64_t i = 0; i < 16; i += 4)
            for (int64_t j = 0; j < 16; j += 4) transpose4x4_words(src + i * src_stride + j, src_stride, dst + j * dst_stride + i, dst_stride);
    });
}

}  // namespace infer::cpu
