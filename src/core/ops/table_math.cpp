// The op table's math family: matrix products, broadcasting arithmetic and comparisons,
// elementwise maps and activations, Cast, reductions, normalizations along an axis, CumSum, Size
// and Einsum. Shape functions live in shapes_math_arithmetic.cpp (products, broadcasting, the
// core reductions) and shapes_math.cpp (the rest), declared in shapes_math.hpp.
#include "core/ops/op_schema.hpp"
#include "core/ops/shapes_math.hpp"

namespace infer::detail {

namespace {
constexpr uint32_t kHostInput1 = 1u << 1;  // axes or axis: values that shape the output
}  // namespace

std::vector<OpSchema> math_op_schemas() {
    const auto same = dtype_same_as_kernel_input;
    std::vector<OpSchema> table{
        // name, inputs min/max, outputs min/max, kernel dtype input, dtype rule, shapes,
        // host inputs
        {"MatMul", 2, 2, 1, 1, 0, same, shape_matmul, 0, kLowPrecision},
        {"Gemm", 2, 3, 1, 1, 0, same, shape_gemm, 0, kLowPrecision},

        {"Add", 2, 2, 1, 1, 0, same, shape_broadcast, 0, kPointwiseBinary},
        {"Sub", 2, 2, 1, 1, 0, same, shape_broadcast, 0, kPointwiseBinary},
        {"Mul", 2, 2, 1, 1, 0, same, shape_broadcast, 0, kPointwiseBinary},
        {"Div", 2, 2, 1, 1, 0, same, shape_broadcast, 0, kPointwiseBinary},
        {"Pow", 2, 2, 1, 1, 0, same, shape_broadcast, 0, kPointwiseBinaryF32},
        {"Equal", 2, 2, 1, 1, 0, dtype_bool, shape_broadcast},
        {"Less", 2, 2, 1, 1, 0, dtype_bool, shape_broadcast},
        {"Greater", 2, 2, 1, 1, 0, dtype_bool, shape_broadcast},
        {"Where", 3, 3, 1, 1, 1, dtype_of_input1, shape_broadcast},

        {"Sqrt", 1, 1, 1, 1, 0, same, shape_unary, 0, kPointwiseUnaryF32},
        {"Reciprocal", 1, 1, 1, 1, 0, same, shape_unary, 0, kPointwiseUnary},
        {"Exp", 1, 1, 1, 1, 0, same, shape_unary, 0, kPointwiseUnaryF32},
        {"Log", 1, 1, 1, 1, 0, same, shape_unary, 0, kPointwiseUnaryF32},
        {"Tanh", 1, 1, 1, 1, 0, same, shape_unary, 0, kPointwiseUnary},
        {"Erf", 1, 1, 1, 1, 0, same, shape_unary, 0, kPointwiseUnary},
        {"Relu", 1, 1, 1, 1, 0, same, shape_unary, 0, kPointwiseUnary},
        {"Sigmoid", 1, 1, 1, 1, 0, same, shape_unary, 0, kPointwiseUnary},
        {"Gelu", 1, 1, 1, 1, 0, same, shape_unary, 0, kPointwiseUnary},
        {"Neg", 1, 1, 1, 1, 0, same, shape_unary, 0, kPointwiseUnary},
        {"Abs", 1, 1, 1, 1, 0, same, shape_unary, 0, kPointwiseUnary},
        {"Not", 1, 1, 1, 1, 0, same, shape_unary, 0, kPointwiseUnary},
        {"Cast", 1, 1, 1, 1, 0, dtype_from_to_attribute, shape_unary},

        {"ReduceMean", 1, 2, 1, 1, 0, same, shape_reduce, kHostInput1, kKeepsF32},
        {"ReduceSum", 1, 2, 1, 1, 0, same, shape_reduce, kHostInput1, kKeepsF32},
        {"ReduceMax", 1, 2, 1, 1, 0, same, shape_reduce, kHostInput1},

        {"LogSoftmax", 1, 1, 1, 1, 0, same, shape_along_axis},
        {"Hardmax", 1, 1, 1, 1, 0, same, shape_along_axis},
        {"ArgMax", 1, 1, 1, 1, 0, dtype_i64, shape_arg_reduce},
        {"ArgMin", 1, 1, 1, 1, 0, dtype_i64, shape_arg_reduce},

        {"Min", 1, kVariadic, 1, 1, 0, same, shape_broadcast},
        {"Max", 1, kVariadic, 1, 1, 0, same, shape_broadcast},
        {"Sum", 1, kVariadic, 1, 1, 0, same, shape_broadcast},
        {"Mean", 1, kVariadic, 1, 1, 0, same, shape_broadcast},
        {"Mod", 2, 2, 1, 1, 0, same, shape_mod},
        {"Clip", 1, 3, 1, 1, 0, same, shape_clip},
        {"PRelu", 2, 2, 1, 1, 0, same, shape_prelu},
        {"And", 2, 2, 1, 1, 0, dtype_bool, shape_broadcast},
        {"Or", 2, 2, 1, 1, 0, dtype_bool, shape_broadcast},
        {"Xor", 2, 2, 1, 1, 0, dtype_bool, shape_broadcast},
        {"GreaterOrEqual", 2, 2, 1, 1, 0, dtype_bool, shape_broadcast},
        {"LessOrEqual", 2, 2, 1, 1, 0, dtype_bool, shape_broadcast},

        {"IsInf", 1, 1, 1, 1, 0, dtype_bool, shape_unary},
        {"IsNaN", 1, 1, 1, 1, 0, dtype_bool, shape_unary},

        {"CumSum", 2, 2, 1, 1, 0, same, shape_cumsum, kHostInput1},
        {"Size", 1, 1, 1, 1, 0, dtype_i64, shape_size, 0, {.reads_shape_only = true}},
        {"Einsum", 1, kVariadic, 1, 1, 0, same, shape_einsum},
        {"Det", 1, 1, 1, 1, 0, same, shape_det},
        {"BitShift", 2, 2, 1, 1, 0, same, shape_broadcast, 0, kPointwiseBinary},
    };
    for (const char* reduction : {"ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceLogSumExp",
                                  "ReduceLogSum", "ReduceL1", "ReduceL2"})
        table.push_back({reduction, 1, 2, 1, 1, 0, same, shape_math_reduce, kHostInput1});
    // Elementwise maps that keep their input's shape and dtype.
    for (const char* unary :
         {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
          "Floor", "Ceil", "Round", "Sign", "LeakyRelu", "Elu", "Selu", "Celu", "ThresholdedRelu",
          "HardSigmoid", "HardSwish", "Softplus", "Softsign", "Shrink", "Mish"})
        table.push_back({unary, 1, 1, 1, 1, 0, same, shape_unary});
    return table;
}

}  // namespace infer::detail
