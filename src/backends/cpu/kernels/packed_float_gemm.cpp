#include "backends/cpu/kernels/packed_float_gemm.hpp"

#include "backends/cpu/kernels/amx_gemm.hpp"
#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/gemm_grid.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <infer/error.hpp>

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
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
        case FloatGemmKernel::amx_bf16: return amx_bf16_usable();
        case FloatGemmKernel::avx512: return __builtin_cpu_supports("avx512f");
        case FloatGemmKernel::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case FloatGemmKernel::blas: return true;
    }
    return false;
}

// The kernel the environment variable asks for among `choices`, checked (one the CPU lacks, or
// an unknown name, is an error naming the variable), or nothing when it is unset.
bool kernel_from_environment(const char* variable, std::initializer_list<FloatGemmKernel> choices,
                             FloatGemmKernel& wanted) {
    const char* name = std::getenv(variable);
    if (!name || !*name) return false;
    const std::string setting = std::string(variable) + "=" + name;
    std::string expected;
    for (FloatGemmKernel k : choices) {
        if (float_gemm_kernel_name(k) == name) {
            if (!cpu_has(k)) throw Unsupported(setting + ": this CPU cannot run that kernel");
            wanted = k;
            return true;
        }
        expected += (expected.empty() ? "" : k == *(choices.end() - 1) ? " or " : ", ") +
                    std::string(float_gemm_kernel_name(k));
    }
    throw InvalidArgument(setting + ": expected " + expected);
}

// INFER_FLOAT_GEMM (the f32 kernel) and INFER_BF16_GEMM (the bf16 one).
bool wanted_kernel(FloatGemmKernel& wanted) {
    return kernel_from_environment("INFER_FLOAT_GEMM", {FloatGemmKernel::blas, FloatGemmKernel::avx2, FloatGemmKernel::avx512},
                                   wanted);
}
bool wanted_bf16_kernel(FloatGemmKernel& wanted) {
    return kernel_from_environment(
        "INFER_BF16_GEMM", {FloatGemmKernel::blas, FloatGemmKernel::avx512_bf16, FloatGemmKernel::amx_bf16}, wanted);
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

// Where a tile's operands are read: A's rows lda apart and B's rows ldb apart (plain); B's row k
// at offsets[k] (b_offsets: a convolution's taps over its padded planes, convolution_taps.cpp);
// or A's row r at a_rows[r] and its K value k offsets[k] further (a_offsets: a channel-last
// convolution's patches read in its image, channels_last_conv.cpp).
enum class Source { plain, b_offsets, a_offsets };

template <Source S>
inline const float* row_of(const float* b, int64_t ldb, const int64_t* offsets, int64_t k) {
    if constexpr (S == Source::b_offsets) return b + offsets[k];
    return b + k * ldb;
}

// A's R row pointers for a tile.
template <int R, Source S>
inline void a_rows_of(const float* a, int64_t lda, const int64_t* a_rows, const float* (&rows)[R]) {
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) rows[r] = S == Source::a_offsets ? a + a_rows[r] : a + r * lda;
}

template <Source S>
inline int64_t a_column(const int64_t* offsets, int64_t k) {
    if constexpr (S == Source::a_offsets) return offsets[k];
    return k;
}

// The finished sums straight into Y (ChannelOutput): bias, residual, activation in registers,
// the last panel's missing columns masked. max(low, v) and min(high, v) return v when it is NaN
// (the second operand), so NaN stays NaN as in ConvActivation.
template <int R, int P>
__attribute__((target("avx512f"), always_inline)) inline void store_outputs(const __m512 (&sum)[R][P], const ChannelOutput& out,
                                                                            __mmask16 last) {
    const detail::ConvActivation& a = out.activation;
    const bool clamps = a.clamps();
    const __m512 low = _mm512_set1_ps(a.low), high = _mm512_set1_ps(a.high), zero = _mm512_setzero_ps(),
                 one = _mm512_set1_ps(1.0f), alpha = _mm512_set1_ps(detail::kHardSwishAlpha), half = _mm512_set1_ps(0.5f);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) {
            const __mmask16 m = p + 1 < P ? __mmask16{0xFFFF} : last;
            __m512 v = sum[r][p];
            if (out.bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, out.bias + p * kPanel));
            if (out.residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, out.residual + r * out.ld + p * kPanel));
            if (a.hard_swish) {
                const __m512 t = _mm512_min_ps(one, _mm512_max_ps(zero, _mm512_fmadd_ps(v, alpha, half)));
                v = _mm512_mul_ps(v, t);
            } else if (clamps) {
                v = _mm512_min_ps(high, _mm512_max_ps(low, v));
            }
            _mm512_mask_storeu_ps(out.y + r * out.ld + p * kPanel, m, v);
        }
}

// ---- f32, AVX-512: R rows × P panels of 16 columns, one zmm accumulator each, B read in place
// (row k of panel p at row_of(k) + p·16). `tail` < 16: the last panel has that many columns, read
// through a mask (nothing past B's row is touched; its missing columns add zeros).
template <int R, int P, Source S>
__attribute__((target("avx512f"))) void tile_f32_avx512(const float* a, int64_t lda, const int64_t* a_rows, const float* b,
                                                         int64_t ldb, int64_t panel_step, const int64_t* offsets, int64_t steps,
                                                         int tail, bool accumulate, float* acc, const ChannelOutput* out) {
    __m512 sum[R][P];
    start_sums<R, P>(sum, accumulate, acc);
    const float* rows[R];
    a_rows_of<R, S>(a, lda, a_rows, rows);
    const __mmask16 last = static_cast<__mmask16>((1u << tail) - 1u);
    for (int64_t k = 0; k < steps; ++k) {
        const float* row = row_of<S>(b, ldb, offsets, k);
        const int64_t column = a_column<S>(offsets, k);
        __m512 w[P];
#pragma GCC unroll 4
        for (int p = 0; p + 1 < P; ++p) w[p] = _mm512_loadu_ps(row + p * panel_step);
        w[P - 1] = _mm512_maskz_loadu_ps(last, row + (P - 1) * panel_step);
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            const __m512 x = _mm512_set1_ps(rows[r][column]);
#pragma GCC unroll 4
            for (int p = 0; p < P; ++p) sum[r][p] = _mm512_fmadd_ps(x, w[p], sum[r][p]);
        }
    }
    if (out) return store_outputs<R, P>(sum, *out, last);
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

// store_outputs for the AVX2 tile: one panel's two halves per row, the missing columns of a
// short panel (not `whole`) masked (mask_lo, mask_hi). Whole panels take plain loads and
// stores: a masked store is microcoded on AMD's cores. Inlined: passing the accumulators to a
// call takes their address, and the K loop then kept them in memory.
// Halves = 1: a half panel (8 columns or fewer), `lo` alone; `whole` then means all 8 present.
template <int R, int Halves = 2>
__attribute__((target("avx2,fma"), always_inline)) inline void store_outputs_avx2(const __m256 (&lo)[R], const __m256 (&hi)[R],
                                                                                 const ChannelOutput& out, bool whole,
                                                                                 __m256i mask_lo, __m256i mask_hi) {
    const detail::ConvActivation& a = out.activation;
    const bool clamps = a.clamps();
    const __m256 low = _mm256_set1_ps(a.low), high = _mm256_set1_ps(a.high), zero = _mm256_setzero_ps(),
                 one = _mm256_set1_ps(1.0f), alpha = _mm256_set1_ps(detail::kHardSwishAlpha), half = _mm256_set1_ps(0.5f);
    const auto finish = [&](__m256 v, const float* bias, const float* residual, float* y, __m256i mask) {
        if (bias) v = _mm256_add_ps(v, whole ? _mm256_loadu_ps(bias) : _mm256_maskload_ps(bias, mask));
        if (residual) v = _mm256_add_ps(v, whole ? _mm256_loadu_ps(residual) : _mm256_maskload_ps(residual, mask));
        if (a.hard_swish) {
            const __m256 t = _mm256_min_ps(one, _mm256_max_ps(zero, _mm256_fmadd_ps(v, alpha, half)));
            v = _mm256_mul_ps(v, t);
        } else if (clamps) {
            v = _mm256_min_ps(high, _mm256_max_ps(low, v));
        }
        if (whole) _mm256_storeu_ps(y, v);
        else _mm256_maskstore_ps(y, mask, v);
    };
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        const float* residual = out.residual ? out.residual + r * out.ld : nullptr;
        float* y = out.y + r * out.ld;
        finish(lo[r], out.bias, residual, y, mask_lo);
        if constexpr (Halves == 2)
            finish(hi[r], out.bias ? out.bias + 8 : nullptr, residual ? residual + 8 : nullptr, y + 8, mask_hi);
    }
}

// ---- f32, AVX2: R rows × one panel (two ymm accumulators per row), B read in place; a panel
// of fewer than 16 columns (`tail`) is read through masks. With `out`, the tile writes Y itself
// as the avx512 one does (a small-K 1x1 layer spent as long passing its sums through memory to
// the epilogue as computing them: MobileNetV2's expansions, K = 16 to 160).
template <int R, Source S>
__attribute__((target("avx2,fma"), always_inline)) inline void tile_f32_avx2(const float* a, int64_t lda, const int64_t* a_rows,
                                                                            const float* b, int64_t ldb, const int64_t* offsets,
                                                                            int64_t steps, int tail, bool accumulate, float* acc,
                                                                            const ChannelOutput* out) {
    const float* rows[R];
    a_rows_of<R, S>(a, lda, a_rows, rows);
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
        const float* row = row_of<S>(b, ldb, offsets, k);
        const int64_t column = a_column<S>(offsets, k);
        const __m256 w0 = whole ? _mm256_loadu_ps(row) : _mm256_maskload_ps(row, mask_lo);
        const __m256 w1 = whole ? _mm256_loadu_ps(row + 8) : _mm256_maskload_ps(row + 8, mask_hi);
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            const __m256 x = _mm256_broadcast_ss(rows[r] + column);
            lo[r] = _mm256_fmadd_ps(x, w0, lo[r]);
            hi[r] = _mm256_fmadd_ps(x, w1, hi[r]);
        }
    }
    if (out) return store_outputs_avx2<R>(lo, hi, *out, whole, mask_lo, mask_hi);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        _mm256_storeu_ps(acc + r * kFloatTileColumns, lo[r]);
        _mm256_storeu_ps(acc + r * kFloatTileColumns + 8, hi[r]);
    }
}

// ---- f32, AVX2, a last panel of 8 columns or fewer (MobileNetV2's and EfficientNet's 24- and
// 40-channel layers end in one): one ymm accumulator per row, so no FMA, load or store is spent
// on the empty upper half, and 8 columns exactly need no mask (masked loads and stores are slow
// microcode on AMD's cores).
template <int R, Source S>
__attribute__((target("avx2,fma"), always_inline)) inline void tile_f32_avx2_half(const float* a, int64_t lda,
                                                                                 const int64_t* a_rows, const float* b,
                                                                                 int64_t ldb, const int64_t* offsets,
                                                                                 int64_t steps, int tail, bool accumulate,
                                                                                 float* acc, const ChannelOutput* out) {
    const float* rows[R];
    a_rows_of<R, S>(a, lda, a_rows, rows);
    __m256 lo[R];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) lo[r] = accumulate ? _mm256_loadu_ps(acc + r * kFloatTileColumns) : _mm256_setzero_ps();
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(tail), lane);
    const bool whole = tail == 8;
    for (int64_t k = 0; k < steps; ++k) {
        const float* row = row_of<S>(b, ldb, offsets, k);
        const int64_t column = a_column<S>(offsets, k);
        const __m256 w = whole ? _mm256_loadu_ps(row) : _mm256_maskload_ps(row, mask);
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) lo[r] = _mm256_fmadd_ps(_mm256_broadcast_ss(rows[r] + column), w, lo[r]);
    }
    if (out) return store_outputs_avx2<R, 1>(lo, lo, *out, whole, mask, mask);
    // The sums' upper half is never read (the caller takes `tail` columns).
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) _mm256_storeu_ps(acc + r * kFloatTileColumns, lo[r]);
}

// R rows × every panel of a tile of columns in one call, the last panel (`tail` columns) as a
// half tile when it has 8 or fewer: a small-K 1x1 layer (MobileNetV2's K = 16 and 24
// expansions) spent a sixth of its time in a call and its setup per 16 columns.
template <int R, Source S>
__attribute__((target("avx2,fma"))) void panels_f32_avx2(const float* a, int64_t lda, const int64_t* a_rows, const float* b,
                                                          int64_t ldb, int64_t panel_step, const int64_t* offsets,
                                                          int64_t steps, int panels, int tail, bool accumulate, float* acc,
                                                          const ChannelOutput* out) {
    for (int p = 0; p < panels; ++p) {
        ChannelOutput panel_out;
        if (out) {  // the panel's columns of Y, its bias and residual
            panel_out = *out;
            panel_out.y += p * kPanel;
            if (panel_out.bias) panel_out.bias += p * kPanel;
            if (panel_out.residual) panel_out.residual += p * kPanel;
        }
        const float* bp = b + p * panel_step;
        float* ap = acc + p * kPanel;
        const ChannelOutput* o = out ? &panel_out : nullptr;
        if (p + 1 < panels)
            tile_f32_avx2<R, S>(a, lda, a_rows, bp, ldb, offsets, steps, static_cast<int>(kPanel), accumulate, ap, o);
        else if (tail <= 8)
            tile_f32_avx2_half<R, S>(a, lda, a_rows, bp, ldb, offsets, steps, tail, accumulate, ap, o);
        else
            tile_f32_avx2<R, S>(a, lda, a_rows, bp, ldb, offsets, steps, tail, accumulate, ap, o);
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
template <Source S>
struct F32Avx512 {
    template <int R, int P>
    struct Tile {
        static constexpr auto fn = &tile_f32_avx512<R, P, S>;
    };
};
template <int R, int P>
struct Bf16Avx512 {
    static constexpr auto fn = &tile_bf16<R, P>;
};
template <Source S>
struct F32Avx2 {
    template <int R, int P>
    struct Tile {
        static constexpr auto fn = &panels_f32_avx2<R, S>;
    };
};
using F32TileFn = void (*)(const float*, int64_t, const int64_t*, const float*, int64_t, int64_t, const int64_t*, int64_t, int,
                           bool, float*, const ChannelOutput*);
using Bf16TileFn = void (*)(const uint16_t*, int64_t, const uint16_t*, int64_t, int64_t, bool, float*);

using F32PanelsFn = void (*)(const float*, int64_t, const int64_t*, const float*, int64_t, int64_t, const int64_t*, int64_t,
                             int, int, bool, float*, const ChannelOutput*);

// The f32 instance of a kernel for a source and shape (Fn: its function type; the avx2 kernel
// takes its panels as a run-time count).
template <class Fn, template <Source> class Kernel>
Fn pick_f32(Source s, int rows, int panels) {
    switch (s) {
        case Source::plain: return pick<Fn, Kernel<Source::plain>::template Tile>(rows, panels);
        case Source::b_offsets: return pick<Fn, Kernel<Source::b_offsets>::template Tile>(rows, panels);
        case Source::a_offsets: return pick<Fn, Kernel<Source::a_offsets>::template Tile>(rows, panels);
    }
    return nullptr;
}

// Where one tile reads A and B (see Source). plain: `a` at the tile's first row and K step, rows
// `lda` apart; `b` at its first column and K step. b_offsets: `b` at its first column only,
// `offsets` from the first K step on. a_offsets: `a` is A's base, `a_rows` from the tile's first
// row, `offsets` from its first K step; `b` as plain.
struct TileOperands {
    Source source;
    const void* a;
    int64_t lda;
    const int64_t* a_rows;
    const void* b;
    const int64_t* offsets;
    const ChannelOutput* out = nullptr;  // the f32 kernels' last K block: Y written by the tile
};

// One tile of `rows` × `cols` over `k` values of K; `accumulate`: onto the sums in `acc` from
// earlier K blocks, else from zero.
void run_tile(const PackedFloatLayout& l, const TileOperands& t, int rows, int64_t cols, int64_t k, bool accumulate,
              float* acc) {
    const int panels = static_cast<int>(ceil_div(cols, kPanel));
    const int tail = static_cast<int>(cols - (panels - 1) * kPanel);
    const auto* a = static_cast<const float*>(t.a);
    const auto* b = static_cast<const float*>(t.b);
    switch (l.kernel) {
        case FloatGemmKernel::avx512:
            pick_f32<F32TileFn, F32Avx512>(t.source, rows, panels)(a, t.lda, t.a_rows, b, l.row_step, l.panel_step,
                                                                   t.offsets, k, tail, accumulate, acc, t.out);
            return;
        case FloatGemmKernel::avx512_bf16:
            pick<Bf16TileFn, Bf16Avx512>(rows, panels)(static_cast<const uint16_t*>(t.a), t.lda,
                                                       static_cast<const uint16_t*>(t.b), l.panel_step, k, accumulate, acc);
            return;
        case FloatGemmKernel::avx2:
            pick_f32<F32PanelsFn, F32Avx2>(t.source, rows, 1)(a, t.lda, t.a_rows, b, l.row_step, l.panel_step, t.offsets, k,
                                                               panels, tail, accumulate, acc, t.out);
            return;
        case FloatGemmKernel::amx_bf16:  // whole products only (multiply)
        case FloatGemmKernel::blas: break;
    }
    throw Unsupported("packed float product: no kernel of our own for " + std::string(float_gemm_kernel_name(l.kernel)));
}

// K values per block: one tile of B (64 columns) over a block is 64 KB, which stays in L2 while
// every row of the block passes under it. Without blocking, a long K (BERT's FFN output, 3072)
// made that tile 768 KB, and A's rows streaming through L2 pushed it out for every row tile.
constexpr int64_t kKBlockBytes = 64 * 1024;
// The most of B (one K block, a block's columns) read under each row tile in turn.
constexpr int64_t kShortKBytes = 256 * 1024;

}  // namespace

bool float_gemm_kernel_supported(FloatGemmKernel kernel) { return cpu_has(kernel); }

std::string_view float_gemm_kernel_name(FloatGemmKernel kernel) {
    switch (kernel) {
        case FloatGemmKernel::blas: return "blas";
        case FloatGemmKernel::avx2: return "avx2";
        case FloatGemmKernel::avx512: return "avx512";
        case FloatGemmKernel::avx512_bf16: return "avx512_bf16";
        case FloatGemmKernel::amx_bf16: return "amx_bf16";
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
    if (wanted_bf16_kernel(wanted)) return wanted;
    if (wanted_kernel(wanted) && wanted == FloatGemmKernel::blas) return wanted;
    return cpu_has(FloatGemmKernel::amx_bf16)      ? FloatGemmKernel::amx_bf16
           : cpu_has(FloatGemmKernel::avx512_bf16) ? FloatGemmKernel::avx512_bf16
                                                   : FloatGemmKernel::blas;
}

PackedFloatLayout packed_float_layout(FloatGemmKernel kernel, int64_t k, int64_t n, int64_t ldb) {
    PackedFloatLayout l;
    l.kernel = kernel;
    l.k = k;
    l.n = n;
    l.packed = kernel == FloatGemmKernel::avx512_bf16 || kernel == FloatGemmKernel::amx_bf16;
    l.steps = l.packed ? ceil_div(k, 2) : k;
    if (kernel == FloatGemmKernel::amx_bf16) l.steps = ceil_div(l.steps, kAmxTileRows) * kAmxTileRows;  // whole B tiles
    l.panels = ceil_div(std::max<int64_t>(n, 1), kPanel);
    l.panel_step = l.packed ? l.steps * 2 * kPanel : kPanel;
    l.row_step = l.packed ? 2 * kPanel : ldb > 0 ? ldb : n;
    return l;
}

PackedFloatLayout packed_f32_layout(FloatGemmKernel kernel, int64_t k, int64_t n) {
    PackedFloatLayout l = packed_float_layout(kernel, k, n);
    if (kernel != FloatGemmKernel::avx512 && kernel != FloatGemmKernel::avx2) return l;  // blas: B as it is
    l.packed = true;
    l.panel_step = k * kPanel;
    l.row_step = kPanel;
    return l;
}

float* f32_panel_element(const PackedFloatLayout& l, float* packed, int64_t k, int64_t n) {
    return packed + (n / kPanel) * l.panel_step + k * l.row_step + n % kPanel;
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
            if (cols < kPanel || l.steps * 2 != l.k || transposed)
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

Tensor pack_f32_weight(const PackedFloatLayout& l, const float* b, int64_t ldb) {
    Tensor packed = Tensor::empty(DType::f32, Shape({packed_elements(l)}));
    auto* out = packed.data<float>();
    std::fill_n(out, packed_elements(l), 0.0f);  // the last panel's padding
    for (int64_t k = 0; k < l.k; ++k)
        for (int64_t col0 = 0; col0 < l.n; col0 += kPanel)
            std::copy_n(b + k * ldb + col0, std::min<int64_t>(kPanel, l.n - col0), f32_panel_element(l, out, k, col0));
    return packed;
}

namespace {

// The product over the pool: A read as `source` says (a_rows and a_offsets for a_offsets).
void multiply(const PackedFloatLayout& l, const void* b, const void* a, int64_t lda, const int64_t* a_rows,
              const int64_t* a_offsets, int64_t m, FloatEpilogue epilogue, void* state, const ChannelOutput* direct) {
    if (m <= 0 || l.n <= 0) return;
    if (l.kernel == FloatGemmKernel::amx_bf16) {
        if (a_rows || direct) throw Unsupported("packed float product: the amx_bf16 kernel reads A's rows as they are");
        gemm_amx_bf16(l, static_cast<const uint16_t*>(b), static_cast<const uint16_t*>(a), lda, m, epilogue, state);
        return;
    }
    const Source source = a_rows ? Source::a_offsets : l.row_offsets ? Source::b_offsets : Source::plain;
    // The bf16 kernel hands its tiles to the epilogue.
    if (l.kernel != FloatGemmKernel::avx512 && l.kernel != FloatGemmKernel::avx2) direct = nullptr;
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
            // B's rows k0... of the tile of columns from col0: k0 rows down (bf16: k0 / 2 pairs
            // down); with row offsets, the tile's first column (the offsets say where rows are).
            const auto operands = [&](int64_t col0, int64_t k0) {
                TileOperands t{source, nullptr, lda, nullptr, nullptr, nullptr};
                t.b = source == Source::b_offsets
                          ? b_bytes + col0 * static_cast<int64_t>(element)
                          : b_bytes + ((col0 / kPanel) * l.panel_step + (element == 2 ? k0 / 2 : k0) * l.row_step) * element;
                if (source == Source::b_offsets) t.offsets = l.row_offsets + k0;
                if (source == Source::a_offsets) {
                    t.a = a;
                    t.offsets = a_offsets + k0;
                }
                return t;
            };
            const auto at_row = [&](TileOperands& t, int64_t row0, int64_t k0) {
                if (source == Source::a_offsets)
                    t.a_rows = a_rows + row0;
                else
                    t.a = a_bytes + (row0 * lda + k0) * element;
            };
            // Y's tile at (row0, col0), for a tile of the last K block to write itself.
            ChannelOutput tile_output;
            const auto output_at = [&](TileOperands& t, int64_t row0, int64_t col0) {
                tile_output = *direct;
                tile_output.y += row0 * direct->ld + col0;
                if (direct->bias) tile_output.bias += col0;
                if (direct->residual) tile_output.residual += row0 * direct->ld + col0;
                t.out = &tile_output;
            };
            // A short K whose block of B fits in L2 (a CNN's 1x1 layers of 64 or 128 channels):
            // each row tile under every tile of columns in turn, so that A's rows are read once
            // and Y's rows written whole; sweeping the columns outside read A once per tile of
            // columns and wrote Y in strips (ResNet-50's 64 → 256 layers ran at 70% of peak).
            // (f32 only: measured there.)
            if (element == 4 && l.k <= k_block && l.k * (col_end - col_begin) * 4 <= kShortKBytes) {
                float* acc = sums.data();
                for (int64_t row0 = row_begin; row0 < row_end; row0 += kFloatTileRows) {
                    const int rows = static_cast<int>(std::min(kFloatTileRows, row_end - row0));
                    for (int64_t col0 = col_begin; col0 < col_end; col0 += kFloatTileColumns) {
                        const int64_t cols = std::min(kFloatTileColumns, col_end - col0);
                        TileOperands t = operands(col0, 0);
                        at_row(t, row0, 0);
                        if (direct) output_at(t, row0, col0);
                        run_tile(l, t, rows, cols, l.k, false, acc);
                        if (!direct) epilogue(state, row0, rows, col0, cols, acc, kFloatTileColumns);
                    }
                }
                continue;
            }
            for (int64_t col0 = col_begin; col0 < col_end; col0 += kFloatTileColumns) {
                const int64_t cols = std::min(kFloatTileColumns, col_end - col0);
                for (int64_t k0 = 0; k0 < l.k; k0 += k_block) {
                    const int64_t k_count = std::min(k_block, l.k - k0);
                    TileOperands t = operands(col0, k0);
                    const bool last = k0 + k_count == l.k;
                    for (int64_t row0 = row_begin, r = 0; row0 < row_end; row0 += kFloatTileRows, ++r) {
                        const int rows = static_cast<int>(std::min(kFloatTileRows, row_end - row0));
                        float* acc = sums.data() + r * kFloatTileRows * kFloatTileColumns;
                        at_row(t, row0, k0);
                        if (last && direct) output_at(t, row0, col0);
                        run_tile(l, t, rows, cols, k_count, k0 > 0, acc);
                        if (last && !direct) epilogue(state, row0, rows, col0, cols, acc, kFloatTileColumns);
                    }
                }
            }
        }
    });
}

}  // namespace

void gemm_packed_float(const PackedFloatLayout& l, const void* b, const void* a, int64_t lda, int64_t m,
                       FloatEpilogue epilogue, void* state) {
    multiply(l, b, a, lda, nullptr, nullptr, m, epilogue, state, nullptr);
}

void gemm_packed_float_to_channels(const PackedFloatLayout& l, const float* b, const float* a, int64_t lda, int64_t m,
                                   FloatEpilogue epilogue, void* state, const ChannelOutput& output) {
    multiply(l, b, a, lda, nullptr, nullptr, m, epilogue, state, &output);
}

void gemm_packed_float_rows(const PackedFloatLayout& l, const float* b, const float* a, const int64_t* a_rows,
                            const int64_t* a_offsets, int64_t m, FloatEpilogue epilogue, void* state,
                            const ChannelOutput* output) {
    if (l.kernel != FloatGemmKernel::avx512 && l.kernel != FloatGemmKernel::avx2)
        throw Unsupported("packed float product with gathered rows: no " + std::string(float_gemm_kernel_name(l.kernel)) +
                          " kernel");
    multiply(l, b, a, 0, a_rows, a_offsets, m, epilogue, state, output);
}

}  // namespace infer::cpu
