// The op table's mechanics: the families' tables (table_<family>.cpp) assembled into one list
// with interned ids, lookup by name and id, the shape functions' InferenceContext, and ONNX's
// element-type numbers. Semantics follow the newest ONNX opset; inputs that older opsets gave
// as attributes (axes, split sizes, slice bounds) are inputs here, and importers convert older
// forms.
#include "core/ops/op_schema.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace infer::detail {

namespace {
struct Table {
    std::vector<OpSchema> ops;
    std::unordered_map<std::string_view, OpId> ids;
};

const Table& table() {
    static const Table instance = [] {
        Table t;
        for (auto* family : {&math_op_schemas, &indexing_op_schemas, &neural_op_schemas, &control_op_schemas,
                             &sequence_op_schemas, &fused_op_schemas})
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
        case 4: return DType::u16;
        case 5: return DType::i16;
        case 12: return DType::u32;
        case 13: return DType::u64;
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
        case DType::u16: return 4;
        case DType::i16: return 5;
        case DType::u32: return 12;
        case DType::u64: return 13;
    }
    return 0;
}

}  // namespace infer::detail
