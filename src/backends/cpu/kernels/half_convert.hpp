#pragma once
// Bulk conversions between f32 and the 16-bit float types, rounding to nearest even like the
// scalar conversions in <infer/dtype.hpp>, spread over the session's threads.
#include "core/half_convert.hpp"

#include <cstddef>
#include <cstdint>

namespace infer::cpu {

void half_to_float(const uint16_t* src, float* dst, size_t count);
void float_to_half(const float* src, uint16_t* dst, size_t count);
void bfloat16_to_float(const uint16_t* src, float* dst, size_t count);
void float_to_bfloat16(const float* src, uint16_t* dst, size_t count);
// The same on the calling thread alone: for a kernel's tile or row inside its own parallel task,
// where the bulk form's hand-off to the pool costs more than 32 conversions (an AMX product's
// bf16 output took twice the product's time that way).
using detail::bfloat16_to_float_serial;
using detail::float_to_bfloat16_serial;
using detail::float_to_half_serial;
using detail::half_to_float_serial;

}  // namespace infer::cpu
