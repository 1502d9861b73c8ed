#pragma once
// Products A·B by a constant weight B [K, N] in f32 or bf16 on kernels of our own, chosen at run
// time from CPUID:
//  - f32, avx512: 6 rows × 4 panels of 16 columns in zmm accumulators (24 of 32 registers), one
//    FMA per row, panel and K step.
//  - f32, avx2: 6 rows × 1 panel (two ymm each, 12 of 16 registers).
//  - bf16, avx512_bf16: K in pairs: one vdpbf16ps multiplies a pair of A (a 32-bit broadcast
//    straight from A's bf16 row) by 16 columns' pairs and adds both products into f32 lanes,
//    twice the f32 FMA's work per instruction. Results are rounded once, at the end.
//  - bf16, amx_bf16 (amx_gemm.hpp): the same pairs as tiles of 16 × 16 for AMX's TDPBF16PS,
//    where the CPU has AMX and the OS grants it.
// Sessions give both f32 kernels their weights packed in panels once (a second copy): read in
// place, a tile's K steps are rows 4N bytes apart. avx2 ran at 33–38 against 84–87 GFLOP/s packed
// on a Zen 3 core, avx512 at 184 against 289 on 2 cores of an AMX Xeon (BERT's 128 × 768 × 3072;
// packed_weight_product.cpp). The avx512 kernel still reads in place where packing cannot go
// (a convolution's taps over its image).
// The bf16 kernel needs (B[k, c], B[k+1, c]) side by side, so its weight is packed once per
// session, a copy beside the session's bf16 constant that the weight bytes count.
// Every finished tile of f32 sums goes to an epilogue (bias, activation, narrowing) while it is
// in cache. Threads split the product into a grid of blocks (gemm_grid.hpp), each block
// sweeping its columns a tile of panels at a time with its rows passing under them.
#include "backends/cpu/kernels/gelu_rows.hpp"
#include "core/ops/fused_conv_activation.hpp"

#include <infer/tensor.hpp>

#include <cstdint>
#include <string_view>

namespace infer::cpu {

enum class FloatGemmKernel { blas, avx2, avx512, avx512_bf16, amx_bf16 };

// The kernel for products by an f32 (or bf16) weight on this CPU: avx512 where AVX-512F is
// there, else avx2; bf16 weights get amx_bf16 where AMX is usable, else avx512_bf16 where
// AVX512_BF16 is there, else blas (the weight widened at every run). INFER_FLOAT_GEMM=
// blas|avx2|avx512 lowers the f32 choice (blas the bf16 one too), INFER_BF16_GEMM=
// blas|avx512_bf16|amx_bf16 the bf16 one (tests run every kernel on one machine; a kernel the
// CPU lacks is an error).
FloatGemmKernel f32_gemm_kernel();
FloatGemmKernel bf16_gemm_kernel();
std::string_view float_gemm_kernel_name(FloatGemmKernel kernel);
// This CPU (and OS) can run the kernel.
bool float_gemm_kernel_supported(FloatGemmKernel kernel);

struct PackedFloatLayout {
    FloatGemmKernel kernel = FloatGemmKernel::blas;
    int64_t k = 0, n = 0;
    bool packed = false;      // B packed (bf16 pairs by pack_float_weight, f32 panels), else read in place, rows row_step apart
    int64_t steps = 0;        // K steps per panel: K (f32) or K / 2 rounded up (bf16 pairs; amx_bf16: to 16 pairs)
    int64_t panels = 0;       // N / 16 rounded up
    int64_t panel_step = 0;   // elements from one panel of B to the next
    int64_t row_step = 0;     // elements from one K step of a panel to the next
    // f32 B read in place with its rows anywhere: row k starts row_offsets[k] elements from B's
    // pointer (a convolution's taps over its padded image: convolution_taps.cpp), else k·row_step.
    const int64_t* row_offsets = nullptr;
};
// `ldb`: for a B read in place, the elements between its rows (0: n).
PackedFloatLayout packed_float_layout(FloatGemmKernel kernel, int64_t k, int64_t n, int64_t ldb = 0);
// An f32 B packed in panels of 16 columns, each panel's K rows one after another (the last
// panel zero-padded): a tile then reads its panels as sequential streams. A weight too large
// for L2, read in place, came in rows thousands of bytes apart that the prefetchers did not
// follow (ResNet-50's last stage: 9 MB weights by 49 positions ran at 70% of the core's peak).
// For the blas kernel, the layout of B as it is. Fill with f32_panel_element.
PackedFloatLayout packed_f32_layout(FloatGemmKernel kernel, int64_t k, int64_t n);
// Where B[k, n] goes in a packed f32 B (packed_elements(layout) floats, zeroed first).
float* f32_panel_element(const PackedFloatLayout& layout, float* packed, int64_t k, int64_t n);

// Packs B [K, N] (bf16 bits) for a layout with `packed` set into `out` (packed_elements of it):
// panels of 16 columns, K in pairs, the last panel and an odd K's last pair zero-padded. B[k, n]
// is b[k·ldb + n], or with `transposed` b[n·ldb + k] (B given as its transpose: attention's
// keys, whose pairs then sit side by side already).
void pack_bf16_pairs(const PackedFloatLayout& layout, const uint16_t* b, int64_t ldb, bool transposed, uint16_t* out);
// The same for a B whose row k starts at base + row_offsets[k] (a convolution's taps over its
// image's phases: convolution_taps.hpp), its columns contiguous.
void pack_bf16_pairs_gathered(const PackedFloatLayout& layout, const uint16_t* base, const int64_t* row_offsets,
                              uint16_t* out);
inline int64_t packed_elements(const PackedFloatLayout& layout) { return layout.panels * layout.panel_step; }
// The same into a new tensor: a weight packed once per session.
Tensor pack_float_weight(const PackedFloatLayout& layout, const uint16_t* b, int64_t ldb);
// An f32 B [K, N] (rows `ldb` apart) into the panels of packed_f32_layout, as a new tensor.
Tensor pack_f32_weight(const PackedFloatLayout& layout, const float* b, int64_t ldb);

// The most rows and columns of one tile handed to an epilogue.
inline constexpr int64_t kFloatTileRows = 6, kFloatTileColumns = 64;

// Receives acc[r * ld + c] = Σ_k A[row0 + r, k] · B[k, col0 + c] for r < rows, c < cols, once
// per tile; tiles are disjoint and may come from several threads at once.
using FloatEpilogue = void (*)(void* state, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc,
                               int64_t ld);

// The usual epilogue: y[r, c] = activation(scale · acc[r, c] + bias[c]), Y f32 or bf16 (narrowed
// here), rows `ld` elements apart.
struct TileWriter {
    void* y;
    bool bf16_out;
    int64_t ld;
    const float* bias = nullptr;  // [N] or null
    RowActivation activation = RowActivation::none;
    float scale = 1.0f;
    static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc, int64_t ld);
};

// Y [m, N] (rows `ld` apart) = act(A·B + bias + residual), written by the avx512 and avx2 f32
// tiles from their registers (a convolution's epilogue without the trip through the sums in
// memory and a call per row: 15% of a 64 → 256 1x1 layer's time went to that epilogue). Other
// kernels hand their tiles to the FloatEpilogue as before, which must compute the same.
struct ChannelOutput {
    float* y;
    int64_t ld;
    const float* bias;      // [N] or null
    const float* residual;  // laid out as Y, or null
    detail::ConvActivation activation;
};

// A [m, K] (rows `lda` elements apart: f32, or bf16 bits for avx512_bf16) times B (packed, or
// the weight itself), over the calling thread's pool.
void gemm_packed_float(const PackedFloatLayout& layout, const void* b, const void* a, int64_t lda, int64_t m,
                       FloatEpilogue epilogue, void* state);
// The same in f32 (avx512 or avx2 kernel, B read in place) with A's rows gathered: A[i, k] is
// a[a_rows[i] + a_offsets[k]]. A channel-last convolution's patches, read in its image: row i
// an output position's first input pixel, offset k a tap's pixel and channel from there.
// With `output`, the avx512 and avx2 kernels write Y themselves (ChannelOutput).
void gemm_packed_float_rows(const PackedFloatLayout& layout, const float* b, const float* a, const int64_t* a_rows,
                            const int64_t* a_offsets, int64_t m, FloatEpilogue epilogue, void* state,
                            const ChannelOutput* output = nullptr);
// gemm_packed_float (f32) with Y written as ChannelOutput says on the avx512 kernel.
void gemm_packed_float_to_channels(const PackedFloatLayout& layout, const float* b, const float* a, int64_t lda, int64_t m,
                                   FloatEpilogue epilogue, void* state, const ChannelOutput& output);

}  // namespace infer::cpu
