// The op table: every op infer knows, in one list. Semantics follow the newest ONNX opset;
// inputs that older opsets gave as attributes (axes, split sizes, slice bounds) are inputs
// here, and importers convert older forms.
#include "core/ops/op_schema.hpp"
#include "core/ops/shape_functions.hpp"

#include <algorithm>

namespace infer::detail {

namespace {
constexpr int kVariadic = -1;

constexpr uint32_t host(std::initializer_list<int> inputs) { return host_inputs_mask(inputs); }

std::vector<OpSchema> make_table() {
    const auto same = dtype_same_as_kernel_input;
    return {
        // name, inputs min/max, outputs min/max, kernel dtype input, dtype rule, shapes,
        // host inputs
        {"MatMul", 2, 2, 1, 1, 0, same, shape_matmul},
        {"Gemm", 2, 3, 1, 1, 0, same, shape_gemm},

        {"Add", 2, 2, 1, 1, 0, same, shape_broadcast},
        {"Sub", 2, 2, 1, 1, 0, same, shape_broadcast},
        {"Mul", 2, 2, 1, 1, 0, same, shape_broadcast},
        {"Div", 2, 2, 1, 1, 0, same, shape_broadcast},
        {"Pow", 2, 2, 1, 1, 0, same, shape_broadcast},
        {"Equal", 2, 2, 1, 1, 0, dtype_bool, shape_broadcast},
        {"Less", 2, 2, 1, 1, 0, dtype_bool, shape_broadcast},
        {"Greater", 2, 2, 1, 1, 0, dtype_bool, shape_broadcast},
        {"Where", 3, 3, 1, 1, 1, dtype_of_input1, shape_broadcast},

        {"Sqrt", 1, 1, 1, 1, 0, same, shape_unary},
        {"Reciprocal", 1, 1, 1, 1, 0, same, shape_unary},
        {"Exp", 1, 1, 1, 1, 0, same, shape_unary},
        {"Log", 1, 1, 1, 1, 0, same, shape_unary},
        {"Tanh", 1, 1, 1, 1, 0, same, shape_unary},
        {"Erf", 1, 1, 1, 1, 0, same, shape_unary},
        {"Relu", 1, 1, 1, 1, 0, same, shape_unary},
        {"Sigmoid", 1, 1, 1, 1, 0, same, shape_unary},
        {"Gelu", 1, 1, 1, 1, 0, same, shape_unary},
        {"Neg", 1, 1, 1, 1, 0, same, shape_unary},
        {"Abs", 1, 1, 1, 1, 0, same, shape_unary},
        {"Not", 1, 1, 1, 1, 0, same, shape_unary},
        {"Identity", 1, 1, 1, 1, 0, same, shape_unary},
        {"Cast", 1, 1, 1, 1, 0, dtype_from_to_attribute, shape_unary},

        {"ReduceMean", 1, 2, 1, 1, 0, same, shape_reduce, host({1})},
        {"ReduceSum", 1, 2, 1, 1, 0, same, shape_reduce, host({1})},
        {"ReduceMax", 1, 2, 1, 1, 0, same, shape_reduce, host({1})},
        {"Softmax", 1, 1, 1, 1, 0, same, shape_unary},
        {"LayerNormalization", 2, 3, 1, 3, 0, same, shape_layer_norm},
        {"BatchNormalization", 5, 5, 1, 1, 0, same, shape_batch_norm},

        {"Reshape", 2, 2, 1, 1, 0, same, shape_reshape, host({1})},
        {"Flatten", 1, 1, 1, 1, 0, same, shape_flatten},
        {"Transpose", 1, 1, 1, 1, 0, same, shape_transpose},
        {"Concat", 1, kVariadic, 1, 1, 0, same, shape_concat},
        {"Split", 1, 2, 1, kVariadic, 0, same, shape_split, host({1})},
        {"Slice", 3, 5, 1, 1, 0, same, shape_slice, host({1, 2, 3, 4})},
        {"Gather", 2, 2, 1, 1, 0, same, shape_gather},
        {"Unsqueeze", 2, 2, 1, 1, 0, same, shape_unsqueeze, host({1})},
        {"Squeeze", 1, 2, 1, 1, 0, same, shape_squeeze, host({1})},
        {"Expand", 2, 2, 1, 1, 0, same, shape_expand, host({1})},
        {"Shape", 1, 1, 1, 1, 0, dtype_i64, shape_shape},
        {"ConstantOfShape", 1, 1, 1, 1, 0, dtype_from_value_attribute, shape_constant_of_shape, host({0})},
        {"Range", 3, 3, 1, 1, 0, same, shape_range, host({0, 1, 2})},

        {"Conv", 2, 3, 1, 1, 0, same, shape_conv},
        {"MaxPool", 1, 1, 1, 2, 0, same, shape_pool},
        {"AveragePool", 1, 1, 1, 1, 0, same, shape_pool},
        {"GlobalAveragePool", 1, 1, 1, 1, 0, same, shape_global_pool},
    };
}
}  // namespace

const std::vector<OpSchema>& all_ops() {
    static const std::vector<OpSchema> table = [] {
        std::vector<OpSchema> all = make_table();
        for (auto* family : {&math_op_schemas, &indexing_op_schemas, &neural_op_schemas})
            for (const OpSchema& schema : family()) all.push_back(schema);
        return all;
    }();
    return table;
}

const OpSchema* find_op(std::string_view name) {
    const auto& table = all_ops();
    auto it = std::find_if(table.begin(), table.end(),
                           [&](const OpSchema& s) { return s.name == name; });
    return it == table.end() ? nullptr : &*it;
}

const Shape& InferenceContext::shape(size_t i) const {
    if (i >= inputs_.size() || !has_input(i)) fail("input " + std::to_string(i) + " is missing");
    if (!inputs_[i].shape) throw ShapeUnknown{};
    return *inputs_[i].shape;
}

const Tensor& InferenceContext::value(size_t i) const {
    if (i >= values_.size() || !has_input(i)) fail("input " + std::to_string(i) + " is missing");
    if (values_[i] == nullptr) throw ShapeUnknown{};
    return *values_[i];
}

std::vector<int64_t> InferenceContext::ints(size_t i) const {
    const Tensor& t = value(i);
    if (t.dtype() != DType::i64 && t.dtype() != DType::i32)
        fail("input " + std::to_string(i) + " must be i64 or i32, got " +
             std::string(dtype_name(t.dtype())));
    return t.to_vector<int64_t>();
}

void InferenceContext::fail(const std::string& message) const {
    throw ModelError("node '" + node_.name + "' (" + node_.op + "): " + message);
}

DType dtype_from_onnx(int64_t onnx_type) {
    switch (onnx_type) {
        case 1: return DType::f32;
        case 2: return DType::u8;
        case 3: return DType::i8;
        case 6: return DType::i32;
        case 7: return DType::i64;
        case 9: return DType::boolean;
        case 10: return DType::f16;
        case 11: return DType::f64;
        case 16: return DType::bf16;
        default:
            throw Unsupported("ONNX element type " + std::to_string(onnx_type) +
                              " is not supported");
    }
}

int64_t dtype_to_onnx(DType type) {
    switch (type) {
        case DType::f32: return 1;
        case DType::u8: return 2;
        case DType::i8: return 3;
        case DType::i32: return 6;
        case DType::i64: return 7;
        case DType::boolean: return 9;
        case DType::f16: return 10;
        case DType::bf16: return 16;
        case DType::f64: return 11;
    }
    return 0;
}

}  // namespace infer::detail
