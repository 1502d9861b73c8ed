#pragma once
// Conversions between f32 and the 16-bit float types on the calling thread, rounding to nearest
// even like the scalar conversions in <infer/dtype.hpp>, with vector instructions chosen at run
// time (F16C for f16, AVX-512 for bf16): the core narrows a model's weights through them when a
// session lowers its precision, and the CPU backend's kernels convert their tiles and rows.
#include <cstddef>
#include <cstdint>

namespace infer::detail {

void float_to_bfloat16_serial(const float* src, uint16_t* dst, size_t count);
void half_to_float_serial(const uint16_t* src, float* dst, size_t count);
void float_to_half_serial(const float* src, uint16_t* dst, size_t count);
void bfloat16_to_float_serial(const uint16_t* src, float* dst, size_t count);

// f16 bit patterns with the sign cleared order as magnitudes do: at or above infinity's bits
// is infinity or NaN, below the smallest normal's (and above 0) is a subnormal.
constexpr uint16_t kF16InfinityBits = 0x7c00, kF16SmallestNormalBits = 0x0400;
// The largest magnitude among `count` f16 values, as bits with the sign cleared (0 for none).
uint16_t largest_f16_magnitude_bits(const uint16_t* bits, size_t count);
// Whether f16 values whose largest magnitude is `largest` (bits, as above) left f16's normal
// range: an overflow to infinity, a NaN, or values that all underflowed below the normals.
constexpr bool f16_magnitude_out_of_range(uint16_t largest) {
    return largest >= kF16InfinityBits || (largest > 0 && largest < kF16SmallestNormalBits);
}

}  // namespace infer::detail
