#pragma once
// Rounding to f16 and bf16, written here rather than taken from infer so that a conversion bug
// in the library cannot shift inputs and reference together and cancel out.
#include <infer/dtype.hpp>

#include <cstdint>

namespace ref {

// The value a float32 `x` takes when stored as `type` (round to nearest even).
double round_to(infer::DType type, float x);
// Bit patterns of values already representable in the narrow type.
uint16_t half_bits(double value);
uint16_t bfloat16_bits(double value);

}  // namespace ref
