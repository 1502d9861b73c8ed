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

}  // namespace infer::detail
