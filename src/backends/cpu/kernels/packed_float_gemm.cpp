#include "backends/cpu/kernels/packed_float_gemm.hpp"

#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/gemm_grid.hpp"
#include "backends/cpu/kernels/half_convert.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <infer/error.hpp>

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace infer::cpu {

namespace {

constexpr int64_t kPanel = 16;  // columns per panel
constexpr int64_t kTilePanels = kFloatTileColumns / kPanel;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool cpu_has(FloatGemmKernel kernel) {
    switch (kernel) {
        case FloatGemmKernel::avx512_bf16:
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512bf16");
        case FloatGemmKernel::avx512: return __builtin_cpu_supports("avx512f");
        case FloatGemmKernel::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case FloatGemmKernel::blas: return true;
    }
    return false;
}

// INFER_FLOAT_GEMM, checked: the f32 kernel it asks for, or nothing when unset.
bool wanted_kernel(FloatGemmKernel& wanted) {
    const char* name = std::getenv("INFER_FLOAT_GEMM");
    if (!name || !*name) return false;
    for (FloatGemmKernel k : {FloatGemmKernel::blas, FloatGemmKernel::avx2, FloatGemmKernel::avx512})
        if (float_gemm_kernel_name(k) == name) {
            if (!cpu_has(k))
                throw Unsupported("INFER_FLOAT_GEMM=" + std::string(name) + ": this CPU cannot run that kernel");
            wanted = k;
            return true;
        }
    throw InvalidArgument("INFER_FLOAT_GEMM=" + std::string(name) + ": expected blas, avx2 or avx512");
}

// The AVX-512 tiles' R × P accumulators: from zero, or (a later K block) from the sums in
// `acc` [R][kFloatTileColumns]; and back there at the end.
template <int R, int P>
__attribute__((target("avx512f"), always_inline)) inline void start_sums(__m512 (&sum)[R][P], bool accumulate,
                                                                         const float* acc) {
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p)
            sum[r][p] = accumulate ? _mm512_loadu_ps(acc + r * kFloatTileColumns + p * kPanel) : _mm512_setzero_ps();
}

template <int R, int P>
__attribute__((target("avx512f"), always_inline)) inline void store_sums(const __m512 (&sum)[R][P], float* acc) {
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) _mm512_storeu_ps(acc + r * kFloatTileColumns + p * kPanel, sum[r][p]);
}

// B's row k of a tile read in place: k·ldb elements on, or with row offsets (a convolution's
// taps over its padded image) offsets[k] on.
template <bool Gathered>
inline const float* row_of(const float* b, int64_t ldb, const int64_t* offsets, int64_t k) {
    if constexpr (Gathered) return b + offsets[k];
    return b + k * ldb;
}

// ---- f32, AVX-512: R rows × P panels of 16 columns, one zmm accumulator each, B read in place
// (row k of panel p at row_of(k) + p·16). `tail` < 16: the last panel has that many columns, read
// through a mask (nothing past B's row is touched; its missing columns add zeros).
template <int R, int P, bool Gathered>
__attribute__((target("avx512f"))) void tile_f32_avx512(const float* a, int64_t lda, const float* b, int64_t ldb,
                                                         const int64_t* offsets, int64_t steps, int tail, bool accumulate,
                                                         float* acc) {
    __m512 sum[R][P];
    start_sums<R, P>(sum, accumulate, acc);
    const __mmask16 last = static_cast<__mmask16>((1u << tail) - 1u);
    for (int64_t k = 0; k < steps; ++k) {
        const float* row = row_of<Gathered>(b, ldb, offsets, k);
        __m512 w[P];
#pragma GCC unroll 4
        for (int p = 0; p + 1 < P; ++p) w[p] = _mm512_loadu_ps(row + p * kPanel);
        w[P - 1] = _mm512_maskz_loadu_ps(last, row + (P - 1) * kPanel);
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            const __m512 x = _mm512_set1_ps(a[r * lda + k]);
#pragma GCC unroll 4
            for (int p = 0; p < P; ++p) sum[r][p] = _mm512_fmadd_ps(x, w[p], sum[r][p]);
        }
    }
    store_sums<R, P>(sum, acc);
}

// ---- bf16, AVX512_BF16: the same tile, K two at a time. A pair of A is one 32-bit broadcast
// from A's row; when K is odd the last pair is A's last value alone (its partner zero, as B's
// padding is), so nothing past the row is read.
template <int R, int P>
__attribute__((target("avx512f,avx512bw,avx512bf16"), always_inline)) inline void bf16_step(
    __m512 (&sum)[R][P], const uint16_t* b, int64_t panel_elements, int64_t g, const uint32_t (&pair)[R]) {
    __m512bh w[P];
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) w[p] = (__m512bh)_mm512_loadu_si512(b + p * panel_elements + g * 2 * kPanel);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        const __m512bh x = (__m512bh)_mm512_set1_epi32(static_cast<int>(pair[r]));
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) sum[r][p] = _mm512_dpbf16_ps(sum[r][p], x, w[p]);
    }
}

template <int R, int P>
__attribute__((target("avx512f,avx512bw,avx512bf16"))) void tile_bf16(const uint16_t* a, int64_t lda, const uint16_t* b,
                                                                       int64_t panel_elements, int64_t k, bool accumulate,
                                                                       float* acc) {
    __m512 sum[R][P];
    start_sums<R, P>(sum, accumulate, acc);
    const int64_t pairs = k / 2;
    uint32_t pair[R];
    for (int64_t g = 0; g < pairs; ++g) {
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) std::memcpy(&pair[r], a + r * lda + 2 * g, 4);
        bf16_step<R, P>(sum, b, panel_elements, g, pair);
    }
    if (k % 2) {
        for (int r = 0; r < R; ++r) pair[r] = a[r * lda + 2 * pairs];
        bf16_step<R, P>(sum, b, panel_elements, pairs, pair);
    }
    store_sums<R, P>(sum, acc);
}

// ---- f32, AVX2: R rows × one panel (two ymm accumulators per row), B read in place; a panel
// of fewer than 16 columns (`tail`) is read through masks.
template <int R, bool Gathered>
__attribute__((target("avx2,fma"))) void tile_f32_avx2(const float* a, int64_t lda, const float* b, int64_t ldb,
                                                        const int64_t* offsets, int64_t steps, int tail, bool accumulate,
                                                        float* acc) {
    __m256 lo[R], hi[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        lo[r] = accumulate ? _mm256_loadu_ps(acc + r * kFloatTileColumns) : _mm256_setzero_ps();
        hi[r] = accumulate ? _mm256_loadu_ps(acc + r * kFloatTileColumns + 8) : _mm256_setzero_ps();
    }
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mask_lo = _mm256_cmpgt_epi32(_mm256_set1_epi32(tail), lane);
    const __m256i mask_hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(tail - 8), lane);
    const bool whole = tail == kPanel;
    for (int64_t k = 0; k < steps; ++k) {
        const float* row = row_of<Gathered>(b, ldb, offsets, k);
        const __m256 w0 = whole ? _mm256_loadu_ps(row) : _mm256_maskload_ps(row, mask_lo);
        const __m256 w1 = whole ? _mm256_loadu_ps(row + 8) : _mm256_maskload_ps(row + 8, mask_hi);
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            const __m256 x = _mm256_broadcast_ss(a + r * lda + k);
            lo[r] = _mm256_fmadd_ps(x, w0, lo[r]);
            hi[r] = _mm256_fmadd_ps(x, w1, hi[r]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        _mm256_storeu_ps(acc + r * kFloatTileColumns, lo[r]);
        _mm256_storeu_ps(acc + r * kFloatTileColumns + 8, hi[r]);
    }
}

// Run-time rows and panels to the template instance that keeps them in registers.
template <class Fn, template <int, int> class Tile, int R = 1>
Fn pick(int rows, int panels) {
    if constexpr (R < kFloatTileRows) {
        if (rows > R) return pick<Fn, Tile, R + 1>(rows, panels);
    }
    switch (panels) {
        case 1: return Tile<R, 1>::fn;
        case 2: return Tile<R, 2>::fn;
        case 3: return Tile<R, 3>::fn;
        default: return Tile<R, 4>::fn;
    }
}
template <int R, int P>
struct F32Avx512 {
    static constexpr auto fn = &tile_f32_avx512<R, P, false>;
};
template <int R, int P>
struct F32Avx512Gathered {
    static constexpr auto fn = &tile_f32_avx512<R, P, true>;
};
template <int R, int P>
struct Bf16Avx512 {
    static constexpr auto fn = &tile_bf16<R, P>;
};
template <int R, int P>
struct F32Avx2 {
    static constexpr auto fn = &tile_f32_avx2<R, false>;
};
template <int R, int P>
struct F32Avx2Gathered {
    static constexpr auto fn = &tile_f32_avx2<R, true>;
};
using F32TileFn = void (*)(const float*, int64_t, const float*, int64_t, const int64_t*, int64_t, int, bool, float*);
using Bf16TileFn = void (*)(const uint16_t*, int64_t, const uint16_t*, int64_t, int64_t, bool, float*);

// One tile: rows of A from `a` (row0 and the first K step applied) by `cols` columns of B from
// `b` (its first column and K step applied; with row offsets, its first column only, and
// `offsets` from the first K step on), over `k` values of K; `accumulate`: onto the sums in
// `acc` from earlier K blocks, else from zero.
void run_tile(const PackedFloatLayout& l, const void* b, const int64_t* offsets, const void* a, int64_t lda, int rows,
              int64_t cols, int64_t k, bool accumulate, float* acc) {
    const int panels = static_cast<int>(ceil_div(cols, kPanel));
    const int tail = static_cast<int>(cols - (panels - 1) * kPanel);
    switch (l.kernel) {
        case FloatGemmKernel::avx512:
            (offsets ? pick<F32TileFn, F32Avx512Gathered>(rows, panels) : pick<F32TileFn, F32Avx512>(rows, panels))(
                static_cast<const float*>(a), lda, static_cast<const float*>(b), l.row_step, offsets, k, tail, accumulate,
                acc);
            return;
        case FloatGemmKernel::avx512_bf16:
            pick<Bf16TileFn, Bf16Avx512>(rows, panels)(static_cast<const uint16_t*>(a), lda,
                                                       static_cast<const uint16_t*>(b), l.panel_step, k, accumulate, acc);
            return;
        case FloatGemmKernel::avx2: {
            const F32TileFn fn = offsets ? pick<F32TileFn, F32Avx2Gathered>(rows, 1) : pick<F32TileFn, F32Avx2>(rows, 1);
            for (int p = 0; p < panels; ++p)
                fn(static_cast<const float*>(a), lda, static_cast<const float*>(b) + p * kPanel, l.row_step, offsets, k,
                   p + 1 < panels ? static_cast<int>(kPanel) : tail, accumulate, acc + p * kPanel);
            return;
        }
        case FloatGemmKernel::blas: break;
    }
    throw Unsupported("packed float product: no kernel of our own for " + std::string(float_gemm_kernel_name(l.kernel)));
}

// K values per block: one tile of B (64 columns) over a block is 64 KB, which stays in L2 while
// every row of the block passes under it. Without blocking, a long K (BERT's FFN output, 3072)
// made that tile 768 KB, and A's rows streaming through L2 pushed it out for every row tile.
constexpr int64_t kKBlockBytes = 64 * 1024;

}  // namespace

std::string_view float_gemm_kernel_name(FloatGemmKernel kernel) {
    switch (kernel) {
        case FloatGemmKernel::blas: return "blas";
        case FloatGemmKernel::avx2: return "avx2";
        case FloatGemmKernel::avx512: return "avx512";
        case FloatGemmKernel::avx512_bf16: return "avx512_bf16";
    }
    return "?";
}

FloatGemmKernel f32_gemm_kernel() {
    FloatGemmKernel wanted;
    if (wanted_kernel(wanted)) return wanted;
    return cpu_has(FloatGemmKernel::avx512) ? FloatGemmKernel::avx512
           : cpu_has(FloatGemmKernel::avx2) ? FloatGemmKernel::avx2
                                            : FloatGemmKernel::blas;
}

FloatGemmKernel bf16_gemm_kernel() {
    FloatGemmKernel wanted;
    if (wanted_kernel(wanted) && wanted == FloatGemmKernel::blas) return wanted;
    return cpu_has(FloatGemmKernel::avx512_bf16) ? FloatGemmKernel::avx512_bf16 : FloatGemmKernel::blas;
}

PackedFloatLayout packed_float_layout(FloatGemmKernel kernel, int64_t k, int64_t n, int64_t ldb) {
    PackedFloatLayout l;
    l.kernel = kernel;
    l.k = k;
    l.n = n;
    l.packed = kernel == FloatGemmKernel::avx512_bf16;
    l.steps = l.packed ? ceil_div(k, 2) : k;
    l.panels = ceil_div(std::max<int64_t>(n, 1), kPanel);
    l.panel_step = l.packed ? l.steps * 2 * kPanel : kPanel;
    l.row_step = l.packed ? 2 * kPanel : ldb > 0 ? ldb : n;
    return l;
}

namespace {

// Two rows of 16 bf16 values into 16 pairs (a0 b0 a1 b1 ...): 64 bytes of a packed panel.
__attribute__((target("avx2"))) void interleave_16_pairs(const uint16_t* a, const uint16_t* b, uint16_t* to) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
    const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i low = _mm256_unpacklo_epi16(x, y), high = _mm256_unpackhi_epi16(x, y);  // per 128-bit lane
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to), _mm256_permute2x128_si256(low, high, 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + 16), _mm256_permute2x128_si256(low, high, 0x31));
}

}  // namespace

namespace {

// Packs B for the bf16 kernel where row k of B starts at row(k) (its columns contiguous), or,
// `transposed`, where column c starts at column(c) (B given as its transpose).
template <class Row, class Column>
void pack_pairs(const PackedFloatLayout& l, bool transposed, Row row, Column column, uint16_t* out) {
    if (!l.packed) throw InvalidArgument("pack_bf16_pairs: the " + std::string(float_gemm_kernel_name(l.kernel)) +
                                         " kernel reads its B in place");
    // Panels are independent: split between threads when there is enough to move.
    parallel_for(l.panels, grain_for(l.panel_step, int64_t{1} << 15), [&](int64_t first, int64_t last) {
        for (int64_t panel = first; panel < last; ++panel) {
            const int64_t col0 = panel * kPanel, cols = std::min(kPanel, l.n - col0);
            uint16_t* to = out + panel * l.panel_step;
            if (cols < kPanel || l.k % 2 || transposed)
                std::memset(to, 0, sizeof(uint16_t) * static_cast<size_t>(l.panel_step));
            if (transposed) {
                // Column c of the panel is row col0 + c of Bᵀ, whose pairs are already side by side.
                for (int64_t c = 0; c < cols; ++c) {
                    const uint16_t* values = column(col0 + c);
                    for (int64_t kk = 0; kk < l.k; ++kk) to[(kk / 2) * l.row_step + 2 * c + kk % 2] = values[kk];
                }
                continue;
            }
            // Pair g holds (B[2g, c], B[2g + 1, c]) for each column c.
            int64_t g = 0;
            if (cols == kPanel)
                for (; 2 * g + 1 < l.k; ++g) interleave_16_pairs(row(2 * g) + col0, row(2 * g + 1) + col0, to + g * l.row_step);
            for (int64_t kk = 2 * g; kk < l.k; ++kk) {
                const uint16_t* values = row(kk) + col0;
                uint16_t* pairs = to + (kk / 2) * l.row_step + kk % 2;
                for (int64_t c = 0; c < cols; ++c) pairs[2 * c] = values[c];
            }
        }
    });
}

}  // namespace

void pack_bf16_pairs(const PackedFloatLayout& l, const uint16_t* b, int64_t ldb, bool transposed, uint16_t* out) {
    pack_pairs(l, transposed, [&](int64_t k) { return b + k * ldb; }, [&](int64_t c) { return b + c * ldb; }, out);
}

void pack_bf16_pairs_gathered(const PackedFloatLayout& l, const uint16_t* base, const int64_t* row_offsets, uint16_t* out) {
    pack_pairs(l, false, [&](int64_t k) { return base + row_offsets[k]; }, [&](int64_t) { return base; }, out);
}

Tensor pack_float_weight(const PackedFloatLayout& l, const uint16_t* b, int64_t ldb) {
    Tensor packed = Tensor::empty(DType::bf16, Shape({packed_elements(l)}));
    pack_bf16_pairs(l, b, ldb, false, static_cast<uint16_t*>(packed.raw_data()));
    return packed;
}

void TileWriter::tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc, int64_t ld) {
    const auto& w = *static_cast<const TileWriter*>(self);
    alignas(64) float narrowed[kFloatTileColumns];
    for (int64_t r = 0; r < rows; ++r) {
        const float* from = acc + r * ld;
        float* to = w.bf16_out ? narrowed : static_cast<float*>(w.y) + (row0 + r) * w.ld + col0;
        if (w.bias) {
            const float* bias = w.bias + col0;
            for (int64_t c = 0; c < cols; ++c) to[c] = from[c] * w.scale + bias[c];
        } else {
            for (int64_t c = 0; c < cols; ++c) to[c] = from[c] * w.scale;
        }
        activate_row(to, cols, w.activation);
        if (w.bf16_out)
            float_to_bfloat16(narrowed, static_cast<uint16_t*>(w.y) + (row0 + r) * w.ld + col0, static_cast<size_t>(cols));
    }
}

void gemm_packed_float(const PackedFloatLayout& l, const void* b, const void* a, int64_t lda, int64_t m,
                       FloatEpilogue epilogue, void* state) {
    if (m <= 0 || l.n <= 0) return;
    const size_t element = l.kernel == FloatGemmKernel::avx512_bf16 ? 2 : 4;
    const auto* a_bytes = static_cast<const char*>(a);
    const auto* b_bytes = static_cast<const char*>(b);
    const int64_t tasks = m * l.n * l.k >= kParallelGemmWork ? pool_thread_count() : 1;
    const GemmGrid grid = choose_gemm_grid(m, l.n, tasks);
    // Each block sweeps its columns a tile of panels at a time, its rows passing under each tile
    // of B while that stays in cache.
    const int64_t k_block = std::max<int64_t>(2, kKBlockBytes / (kFloatTileColumns * static_cast<int64_t>(element)) / 2 * 2);
    parallel_for(grid.blocks(), 1, [&](int64_t begin, int64_t end) {
        // The block's sums for one tile of columns while K blocks add into them (bounded by m).
        thread_local std::vector<float> sums;
        for (int64_t block = begin; block < end; ++block) {
            const int64_t row_begin = (block / grid.col_blocks) * grid.block_rows;
            const int64_t row_end = std::min(m, row_begin + grid.block_rows);
            const int64_t col_begin = (block % grid.col_blocks) * grid.block_cols;
            const int64_t col_end = std::min(l.n, col_begin + grid.block_cols);
            const int64_t row_tiles = ceil_div(row_end - row_begin, kFloatTileRows);
            sums.resize(static_cast<size_t>(row_tiles * kFloatTileRows * kFloatTileColumns));
            for (int64_t col0 = col_begin; col0 < col_end; col0 += kFloatTileColumns) {
                const int64_t cols = std::min(kFloatTileColumns, col_end - col0);
                for (int64_t k0 = 0; k0 < l.k; k0 += k_block) {
                    const int64_t k_count = std::min(k_block, l.k - k0);
                    // B's rows k0... of this tile: in place k0 rows down; packed, k0 / 2 pairs down;
                    // with row offsets, the tile's first column (the offsets say where rows are).
                    const int64_t* offsets = l.row_offsets ? l.row_offsets + k0 : nullptr;
                    const char* b = offsets ? b_bytes + col0 * static_cast<int64_t>(element)
                                            : b_bytes + ((col0 / kPanel) * l.panel_step +
                                                         (l.packed ? k0 / 2 : k0) * l.row_step) * element;
                    const bool last = k0 + k_count == l.k;
                    for (int64_t row0 = row_begin, t = 0; row0 < row_end; row0 += kFloatTileRows, ++t) {
                        const int rows = static_cast<int>(std::min(kFloatTileRows, row_end - row0));
                        float* acc = sums.data() + t * kFloatTileRows * kFloatTileColumns;
                        run_tile(l, b, offsets, a_bytes + (row0 * lda + k0) * element, lda, rows, cols, k_count, k0 > 0,
                                 acc);
                        if (last) epilogue(state, row0, rows, col0, cols, acc, kFloatTileColumns);
                    }
                }
            }
        }
    });
}

}  // namespace infer::cpu
