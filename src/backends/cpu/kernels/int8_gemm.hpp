#pragma once
// u8 × s8 matrix products with exact 32-bit accumulation, the core of every int8 kernel on the
// CPU (MatMulInteger, QuantizedMatMul). The weight B [K, N] is packed once into panels of
// columns for the instruction set chosen at run time; A arrives as u8 rows; every finished tile
// of i32 sums goes to an epilogue (zero-point correction, dequantization, bias, activation)
// while it is still in cache.
//
// Kernels, best first, chosen once per process from CPUID:
//  - amx_int8 (amx_gemm.hpp): TDPBUSD on 16 × 64-byte tiles of the avx512_vnni layout, where
//    the CPU has AMX and the OS grants it.
//  - avx512_vnni: vpdpbusd multiplies 4 u8 by 4 s8 and adds them into an i32 lane in one step,
//    with no intermediate saturation.
//  - avx2: vpmaddwd on operands widened to i16 (the weight at packing time, A per tile). The
//    u8×s8 instruction AVX2 has, vpmaddubsw, adds pairs into a saturating i16 (255·127·2 does
//    not fit), so it would need 7-bit weights or activations; widening keeps results exact.
//  - portable: the avx2 layout in plain C++, for CPUs below x86-64-v3.
// Not here yet: AVX-VNNI on 256-bit registers.
#include <infer/tensor.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace infer::cpu {

enum class Int8Kernel { portable, avx2, avx512_vnni, amx_int8 };

// The best kernel this CPU runs; INFER_INT8_KERNEL=portable|avx2|avx512_vnni|amx_int8 picks another (tests
// cover every kernel on one machine; a kernel the CPU lacks is never chosen).
Int8Kernel int8_kernel();
std::string_view int8_kernel_name(Int8Kernel kernel);
// Kernels this CPU can run, best first.
bool int8_kernel_supported(Int8Kernel kernel);

// Where a packed weight keeps its parts. Panels of `panel_width` columns, each holding the K
// rows in groups of `group` (zero-padded), then the column sums Σ_k B[k, n] as i32.
struct Int8WeightLayout {
    Int8Kernel kernel;
    int64_t k = 0, n = 0;
    int64_t group = 0, groups = 0;  // K values per group, groups per panel
    int64_t panel_width = 0, panels = 0;
    int64_t panel_bytes = 0;  // one panel's packed weights
    int64_t sums_offset = 0;  // bytes from the start to the column sums
    int64_t bytes = 0;        // the whole packed weight
};
Int8WeightLayout int8_weight_layout(Int8Kernel kernel, int64_t k, int64_t n);

// Packs B [K, N] (s8, rows `ldb` apart) as `layout` says into a u8 tensor of layout.bytes.
Tensor pack_int8_weight(const Int8WeightLayout& layout, const int8_t* b, int64_t ldb);
inline const int32_t* packed_column_sums(const Int8WeightLayout& layout, const uint8_t* packed) {
    return reinterpret_cast<const int32_t*>(packed + layout.sums_offset);
}

// Row stride, in bytes, of A as the products read it: K rounded up to the group, zero-padded.
inline int64_t int8_row_stride(const Int8WeightLayout& layout) { return layout.groups * layout.group; }

// Element i of a u8 or i8 tensor (a zero point), as i32.
inline int32_t int8_value(const Tensor& t, int64_t i) {
    return t.dtype() == DType::u8 ? t.data<uint8_t>()[i] : t.data<int8_t>()[i];
}

// The most columns (and rows) of one tile handed to an epilogue.
inline constexpr int64_t kInt8TileColumns = 64, kInt8TileRows = 6;

// Receives the exact sums acc[r * ld + c] = Σ_k A[row0 + r, k] · B[k, col0 + c] for
// r < rows, c < cols, once per tile; tiles are disjoint and may come from several threads.
using Int8Epilogue = void (*)(void* state, int64_t row0, int64_t rows, int64_t col0, int64_t cols,
                              const int32_t* acc, int64_t ld);

// A's rows as the products read them: `rows` rows of k bytes from `from` (an i8 A moved up by 128
// into u8 when `signed_a`), `stride` apart with zero padding, and each row's sum into `sums`;
// in parallel over rows (inline inside a pool task).
void pack_int8_rows(const uint8_t* from, int64_t rows, int64_t k, int64_t stride, bool signed_a, uint8_t* to, int32_t* sums);

// QLinear ops' output elements: round(v · multiplier) + zero (ties to even, in f64), saturated
// to Q (u8 or i8). requantize_row does `count` of them, multiplier[i] for v[i], four at a time
// where AVX2 is there (a libm call per element was most of a QLinearMatMul's time).
template <class Q>
Q requantized(int32_t v, double multiplier, int32_t zero);
template <class Q>
void requantize_row(const int32_t* v, const double* multiplier, int32_t zero, Q* y, int64_t count);

// The *IntegerToFloat ops' Y quantization: a value through QuantizeLinear and DequantizeLinear
// with Y's scale and zero point (the CPU's QuantizeLinear arithmetic: x / s rounded to nearest
// even, plus z, saturated), in f32.
struct YGrid {
    float scale, zero, lowest, highest;
    static YGrid of(const Tensor& scale, const Tensor& zero) {
        const bool u8 = zero.dtype() == DType::u8;
        return {scale.data<float>()[0], static_cast<float>(u8 ? zero.data<uint8_t>()[0] : zero.data<int8_t>()[0]),
                u8 ? 0.0f : -128.0f, u8 ? 255.0f : 127.0f};
    }
    float round(float v) const { return (std::clamp(std::rint(v / scale) + zero, lowest, highest) - zero) * scale; }
};

// Scratch gemm_u8s8 uses for m rows of A: A widened to i16 for the avx2 and portable kernels
// (read once per call, not once per column tile), nothing for the others.
size_t int8_gemm_scratch_bytes(const Int8WeightLayout& layout, int64_t m);

// A [m, row stride] (u8, padding zero) times the packed B, over the calling thread's pool.
// `scratch`: int8_gemm_scratch_bytes of memory (a kernel's workspace), or null to allocate it
// per call (a fresh buffer of megabytes is page faults on every call: 4% of an int8 MiniLM run).
void gemm_u8s8(const Int8WeightLayout& layout, const uint8_t* packed, const uint8_t* a, int64_t m,
               Int8Epilogue epilogue, void* state, void* scratch = nullptr);

}  // namespace infer::cpu
