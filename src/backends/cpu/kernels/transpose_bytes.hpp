#pragma once
// A 16x16 block of bytes transposed in SSE2 registers (four rounds of unpacks: bytes, 16-bit
// pairs, 32-bit quads, 64-bit halves), and whole byte matrices sixteen by sixteen: an 8-bit
// image's channel planes to pixels of contiguous channels (NCHW to NHWC) and back, in the
// integer convolution and in Transpose.
#include <emmintrin.h>
#include <xmmintrin.h>

#include <cstdint>

namespace infer::cpu {

// dst[j * dst_stride + i] = src[i * src_stride + j] for i, j < 16.
inline void transpose16x16_bytes(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride) {
    __m128i r[16], t[16], u[16], v[16];
    for (int i = 0; i < 16; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_stride));
    // t[k] (k < 8): rows 2k and 2k+1 interleaved for columns 0-7; t[k + 8]: columns 8-15.
    for (int k = 0; k < 8; ++k) {
        t[k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
        t[k + 8] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
    }
    // u[h + m]: rows 4m..4m+3 of columns h..h+3; u[h + m + 4]: of columns h+4..h+7 (h = 0, 8).
    for (int h = 0; h < 16; h += 8)
        for (int m = 0; m < 4; ++m) {
            u[h + m] = _mm_unpacklo_epi16(t[h + 2 * m], t[h + 2 * m + 1]);
            u[h + m + 4] = _mm_unpackhi_epi16(t[h + 2 * m], t[h + 2 * m + 1]);
        }
    // For columns q..q+3 (u[q..q+3]): v[q], v[q+1] rows 0-7 of columns q, q+1 and q+2, q+3;
    // v[q+2], v[q+3] rows 8-15 of the same; then each column's two halves joined.
    for (int q = 0; q < 16; q += 4) {
        v[q] = _mm_unpacklo_epi32(u[q], u[q + 1]);
        v[q + 1] = _mm_unpackhi_epi32(u[q], u[q + 1]);
        v[q + 2] = _mm_unpacklo_epi32(u[q + 2], u[q + 3]);
        v[q + 3] = _mm_unpackhi_epi32(u[q + 2], u[q + 3]);
        const __m128i columns[4] = {_mm_unpacklo_epi64(v[q], v[q + 2]), _mm_unpackhi_epi64(v[q], v[q + 2]),
                                    _mm_unpacklo_epi64(v[q + 1], v[q + 3]), _mm_unpackhi_epi64(v[q + 1], v[q + 3])};
        for (int j = 0; j < 4; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + (q + j) * dst_stride), columns[j]);
    }
}

// to[c * rows + r] = from[r * cols + c]: 16x16 blocks in registers, the edges byte by byte; in
// parallel over blocks of sixteen columns (transpose_bytes.cpp).
void transpose_byte_matrix(const uint8_t* from, int64_t rows, int64_t cols, uint8_t* to);
// The same for 4-byte elements (an f32 CNN's channel-last stretch entered and left), 4x4
// blocks in SSE registers: the bits are moved, never computed on.
void transpose_word_matrix(const uint32_t* from, int64_t rows, int64_t cols, uint32_t* to);

}  // namespace infer::cpu
