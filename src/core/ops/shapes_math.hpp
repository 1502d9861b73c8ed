#pragma once
// Shape functions of the math family (table_math.cpp), and the Einsum equation parser that the
// shape function and the CPU kernel share so both read an equation the same way.
#include "core/ops/shape_functions.hpp"

#include <string>
#include <vector>

namespace infer::detail {

// shapes_math_arithmetic.cpp
std::vector<Shape> shape_broadcast(const InferenceContext& ctx);
std::vector<Shape> shape_matmul(const InferenceContext& ctx);
std::vector<Shape> shape_gemm(const InferenceContext& ctx);
std::vector<Shape> shape_reduce(const InferenceContext& ctx);  // ReduceMean, ReduceSum, ReduceMax

// shapes_math.cpp
std::vector<Shape> shape_along_axis(const InferenceContext& ctx);  // LogSoftmax, Hardmax
std::vector<Shape> shape_arg_reduce(const InferenceContext& ctx);  // ArgMax, ArgMin
std::vector<Shape> shape_math_reduce(const InferenceContext& ctx);  // ReduceMin ... ReduceL2
std::vector<Shape> shape_mod(const InferenceContext& ctx);
std::vector<Shape> shape_clip(const InferenceContext& ctx);
std::vector<Shape> shape_prelu(const InferenceContext& ctx);
std::vector<Shape> shape_cumsum(const InferenceContext& ctx);
std::vector<Shape> shape_size(const InferenceContext& ctx);
std::vector<Shape> shape_einsum(const InferenceContext& ctx);
std::vector<Shape> shape_det(const InferenceContext& ctx);  // [..., M, M] → [...]

// An Einsum equation resolved against its operands' shapes. Every axis gets a label: letters
// map to 0..51 in ASCII order ('A' first), the axes an ellipsis stands for to 52 and up, aligned
// from the right across operands so that they broadcast.
struct EinsumPlan {
    std::vector<std::vector<int>> operand_labels;  // per operand, one label per axis
    std::vector<int> output_labels;
    std::vector<int64_t> label_sizes;  // by label; kDynamic when not known yet
};
// Throws InvalidArgument on a malformed equation or operands that do not fit it.
EinsumPlan plan_einsum(const std::string& equation, const std::vector<Shape>& operands);

}  // namespace infer::detail
