// The op table: every op infer knows, in one list. Semantics follow the newest ONNX opset;
// inputs that older opsets gave as attributes (axes, split sizes, slice bounds) are inputs
// here, and importers convert older forms.
#include "core/ops/op_schema.hpp"
#include "core/ops/shape_functions.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace infer::detail {

namespace {
constexpr int kVariadic = -1;

constexpr uint32_t host(std::initializer_list<int> inputs) { return host_inputs_mask(inputs); }

// Traits shared by many entries below.
constexpr OpTraits kLow{.precision = PrecisionClass::low};
constexpr OpTraits kKeepsF32{.precision = PrecisionClass::keeps_f32};
constexpr OpTraits kView{.view_of = 0};
// Pointwise ops: element i of the output depends on element i of each same-shaped input only.
constexpr OpTraits kPointwiseUnary{.in_place = 0b1};
constexpr OpTraits kPointwiseBinary{.in_place = 0b11};
constexpr OpTraits kPointwiseUnaryF32{.precision = PrecisionClass::keeps_f32, .in_place = 0b1};
constexpr OpTraits kPointwiseBinaryF32{.precision = PrecisionClass::keeps_f32, .in_place = 0b11};

std::vector<OpSchema> make_table() {
    const auto same = dtype_same_as_kernel_input;
    return {
        // name, inputs min/max, outputs min/max, kernel dtype input, dtype rule, shapes,
        // host inputs
        {"MatMul", 2, 2, 1, 1, 0, same, shape_matmul, 0, kLow},
        {"Gemm", 2, 3, 1, 1, 0, same, shape_gemm, 0, kLow},

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
        {"Identity", 1, 1, 1, 1, 0, same, shape_unary, 0, kView},
        {"Cast", 1, 1, 1, 1, 0, dtype_from_to_attribute, shape_unary},

        {"ReduceMean", 1, 2, 1, 1, 0, same, shape_reduce, host({1}), kKeepsF32},
        {"ReduceSum", 1, 2, 1, 1, 0, same, shape_reduce, host({1}), kKeepsF32},
        {"ReduceMax", 1, 2, 1, 1, 0, same, shape_reduce, host({1})},
        {"Softmax", 1, 1, 1, 1, 0, same, shape_unary},
        {"LayerNormalization", 2, 3, 1, 3, 0, same, shape_layer_norm, 0, kKeepsF32},
        {"BatchNormalization", 5, 5, 1, 1, 0, same, shape_batch_norm},

        {"Reshape", 2, 2, 1, 1, 0, same, shape_reshape, host({1}), kView},
        {"Flatten", 1, 1, 1, 1, 0, same, shape_flatten, 0, kView},
        {"Transpose", 1, 1, 1, 1, 0, same, shape_transpose},
        {"Concat", 1, kVariadic, 1, 1, 0, same, shape_concat},
        {"Split", 1, 2, 1, kVariadic, 0, same, shape_split, host({1})},
        {"Slice", 3, 5, 1, 1, 0, same, shape_slice, host({1, 2, 3, 4})},
        {"Gather", 2, 2, 1, 1, 0, same, shape_gather},
        {"Unsqueeze", 2, 2, 1, 1, 0, same, shape_unsqueeze, host({1}), kView},
        {"Squeeze", 1, 2, 1, 1, 0, same, shape_squeeze, host({1}), kView},
        {"Expand", 2, 2, 1, 1, 0, same, shape_expand, host({1})},
        {"Shape", 1, 1, 1, 1, 0, dtype_i64, shape_shape, 0, {.reads_shape_only = true}},
        {"ConstantOfShape", 1, 1, 1, 1, 0, dtype_from_value_attribute, shape_constant_of_shape, host({0})},
        {"Range", 3, 3, 1, 1, 0, same, shape_range, host({0, 1, 2})},

        {"Conv", 2, 3, 1, 1, 0, same, shape_conv, 0, kLow},
        {"MaxPool", 1, 1, 1, 2, 0, same, shape_pool},
        {"AveragePool", 1, 1, 1, 1, 0, same, shape_pool},
        {"GlobalAveragePool", 1, 1, 1, 1, 0, same, shape_global_pool},
    };
}
}  // namespace

namespace {
struct Table {
    std::vector<OpSchema> ops;
    std::unordered_map<std::string_view, OpId> ids;
};

const Table& table() {
    static const Table instance = [] {
        Table t;
        t.ops = make_table();
        for (auto* family : {&math_op_schemas, &indexing_op_schemas, &neural_op_schemas, &fused_op_schemas})
            for (const OpSchema& schema : family()) t.ops.push_back(schema);
        for (size_t i = 0; i < t.ops.size(); ++i) {
            t.ops[i].id = static_cast<OpId>(i);
            if (!t.ids.emplace(t.ops[i].name, t.ops[i].id).second)
                throw std::logic_error("op table: '" + std::string(t.ops[i].name) + "' is listed twice");
        }
        return t;
    }();
    return instance;
}
}  // namespace

const std::vector<OpSchema>& all_ops() { return table().ops; }

const OpSchema* find_op(std::string_view name) {
    const Table& t = table();
    const auto it = t.ids.find(name);
    return it == t.ids.end() ? nullptr : &t.ops[it->second];
}

OpId op_id(std::string_view name) {
    const OpSchema* schema = find_op(name);
    if (!schema) throw std::logic_error("op table has no op '" + std::string(name) + "'");
    return schema->id;
}

const OpSchema& op_schema(OpId id) { return table().ops.at(id); }

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
