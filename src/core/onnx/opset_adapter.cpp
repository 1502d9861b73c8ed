// Older opsets' forms rewritten into the op table's (newest-opset) form.
#include "core/onnx/import_builder.hpp"
#include "core/onnx/onnx_import.hpp"

#include <infer/error.hpp>

namespace infer::detail {

namespace {

// Moves an ints attribute into input `position` as an i64 constant (padding absent inputs).
void attribute_to_input(ImportBuilder& b, ImportedNode& node, const std::string& attribute,
                        size_t position) {
    Attributes rest;
    std::vector<int64_t> values;
    bool present = false;
    for (const auto& [name, value] : node.attributes.all()) {
        if (name == attribute) {
            values = std::get<std::vector<int64_t>>(value);
            present = true;
        } else {
            rest.set(name, value);
        }
    }
    node.attributes = std::move(rest);
    if (!present) return;
    if (node.inputs.size() <= position) node.inputs.resize(position + 1, -1);
    node.inputs[position] = b.constant_i64(values, node.name + ":" + attribute);
}

bool is_reduction(const std::string& op) { return op.rfind("Reduce", 0) == 0; }

// Softmax, LogSoftmax and Hardmax before opset 13 flatten the input to 2-D at `axis` and
// normalize each row: Flatten → op(axis = 1) → Reshape back to the input's shape.
void adapt_coerced_softmax(ImportBuilder& b, ImportedNode node) {
    const int64_t axis = node.attributes.get_int("axis", 1);
    const int input = node.inputs.at(0);
    const int shape = b.internal_value(node.name + ":shape");
    b.add_node("Shape", node.name + ":shape", {input}, {shape}, {});
    const int flat = b.internal_value(node.name + ":flat");
    b.add_node("Flatten", node.name + ":flatten", {input}, {flat}, {{"axis", axis}});
    const int normalized = b.internal_value(node.name + ":rows");
    b.add_node(node.op, node.name, {flat}, {normalized}, {{"axis", int64_t{1}}});
    b.add_node("Reshape", node.name + ":unflatten", {normalized, shape}, node.outputs, {});
}

}  // namespace

void adapt_node(ImportBuilder& b, ImportedNode node, int64_t opset) {
    const std::string& op = node.op;
    if ((op == "Squeeze" || op == "Unsqueeze") && opset < 13) {
        attribute_to_input(b, node, "axes", 1);
    } else if (op == "ReduceSum" && opset < 13) {
        attribute_to_input(b, node, "axes", 1);
    } else if (is_reduction(op) && op != "ReduceSum" && opset < 18) {
        attribute_to_input(b, node, "axes", 1);
    } else if (op == "Split" && opset < 13) {
        attribute_to_input(b, node, "split", 1);
    } else if (op == "Slice" && opset < 10) {
        attribute_to_input(b, node, "starts", 1);
        attribute_to_input(b, node, "ends", 2);
        attribute_to_input(b, node, "axes", 3);
    } else if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && opset < 13) {
        adapt_coerced_softmax(b, std::move(node));
        return;
    } else if (op == "BatchNormalization" && opset < 9) {
        if (node.attributes.get_int("spatial", 1) != 1)
            throw Unsupported(b.what() + ": node '" + node.name + "': BatchNormalization with spatial=0");
    }
    b.add_node(node.op, node.name, std::move(node.inputs), std::move(node.outputs),
               std::move(node.attributes));
}

}  // namespace infer::detail
