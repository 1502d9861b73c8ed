#pragma once
// What every family's shape functions share: the common dtype rules, shape_unary and the dtype
// check (shapes_common.cpp). Each family declares its own in shapes_<family>.hpp.
#include "core/ops/op_schema.hpp"

namespace infer::detail {

// dtype rules
DType dtype_same_as_kernel_input(const InferenceContext& ctx, size_t output);
DType dtype_bool(const InferenceContext& ctx, size_t output);
DType dtype_i64(const InferenceContext& ctx, size_t output);
DType dtype_from_to_attribute(const InferenceContext& ctx, size_t output);
DType dtype_from_value_attribute(const InferenceContext& ctx, size_t output);
DType dtype_of_input1(const InferenceContext& ctx, size_t output);
// Output 0 in input 0's dtype, the rest i64 (indices: TopK, MaxPool).
DType dtype_same_then_i64(const InferenceContext& ctx, size_t output);

std::vector<Shape> shape_unary(const InferenceContext& ctx);  // the output is input 0's shape

// Fails naming the input when inputs first.. differ in dtype from input `first`.
void check_same_dtypes(const InferenceContext& ctx, size_t first);

}  // namespace infer::detail
