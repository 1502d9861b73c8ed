#pragma once
// Float64 references of the math family's ops (reference_math.cpp), from the ONNX
// specification. Elementwise maps use ref::unary and ref::binary with the functions below.
#include "reference.hpp"

namespace ref {

RefTensor log_softmax(const RefTensor& x, int64_t axis);
RefTensor hardmax(const RefTensor& x, int64_t axis);
// ArgMax (largest = true) or ArgMin along `axis`; ties take the first index unless `last`.
RefTensor arg_extreme(const RefTensor& x, int64_t axis, bool keepdims, bool last, bool largest);

enum class MathReduction { min, prod, sum_square, log_sum_exp, log_sum, l1, l2 };
// Empty axes reduce every axis.
RefTensor reduce_math(const RefTensor& x, MathReduction kind, const Dims& axes, bool keepdims);

// Folds inputs left to right with broadcasting: Min, Max and Sum.
RefTensor fold(const std::vector<RefTensor>& xs, const std::function<double(double, double)>& f);
RefTensor cumsum(const RefTensor& x, int64_t axis, bool exclusive, bool reverse);
// Einsum "...ii->...i": the diagonal of the last two axes.
RefTensor batch_diagonal(const RefTensor& x);

double round_half_even(double x);
double python_mod(double a, double b);  // the remainder takes the divisor's sign
double softplus(double x);

}  // namespace ref
