#pragma once
// Bulk conversions between f32 and the 16-bit float types, rounding to nearest even like the
// scalar conversions in <infer/dtype.hpp>. f16 uses the F16C instructions when the CPU has them.
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
void float_to_bfloat16_serial(const float* src, uint16_t* dst, size_t count);
void half_to_float_serial(const uint16_t* src, float* dst, size_t count);
void float_to_half_serial(const float* src, uint16_t* dst, size_t count);
void bfloat16_to_float_serial(const uint16_t* src, float* dst, size_t count);

}  // namespace infer::cpu
