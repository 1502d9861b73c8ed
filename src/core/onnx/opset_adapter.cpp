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

// A constant input holding one f32 (Clip's bounds, Pad's value, Upsample's scales before they
// were inputs). Older opsets give these as float attributes, so f32 is their natural dtype.
int constant_f32(ImportBuilder& b, const std::vector<float>& values, const Shape& shape,
                 const std::string& hint) {
    std::string name = hint;
    for (int n = 1; b.has_value(name); ++n) name = hint + "#" + std::to_string(n);
    return b.constant(Tensor::from_vector(values, shape), name);
}

// Removes an attribute from the node, returning whether it was there.
bool take_attribute(ImportedNode& node, const std::string& attribute, AttributeValue* value) {
    Attributes rest;
    bool present = false;
    for (const auto& [name, v] : node.attributes.all()) {
        if (name == attribute) {
            *value = v;
            present = true;
        } else {
            rest.set(name, v);
        }
    }
    node.attributes = std::move(rest);
    return present;
}

void set_input(ImportedNode& node, size_t position, int value) {
    if (node.inputs.size() <= position) node.inputs.resize(position + 1, -1);
    node.inputs[position] = value;
}

// Clip before opset 11: bounds as min/max float attributes, now optional inputs 1 and 2.
void adapt_clip_attributes(ImportBuilder& b, ImportedNode& node) {
    for (auto [attribute, position] : {std::pair<const char*, size_t>{"min", 1}, {"max", 2}}) {
        AttributeValue value;
        if (take_attribute(node, attribute, &value))
            set_input(node, position, constant_f32(b, {std::get<float>(value)}, Shape{}, node.name + ":" + attribute));
    }
}

// Pad before opset 11: pads and value as attributes, now inputs 1 and 2.
void adapt_pad_attributes(ImportBuilder& b, ImportedNode& node) {
    attribute_to_input(b, node, "pads", 1);
    AttributeValue value;
    if (take_attribute(node, "value", &value) && std::get<float>(value) != 0.0f)
        set_input(node, 2, constant_f32(b, {std::get<float>(value)}, Shape{}, node.name + ":value"));
}

// TopK before opset 10: k as an int attribute, now input 1 (a one-element i64 tensor).
void adapt_top_k_attribute(ImportBuilder& b, ImportedNode& node) {
    AttributeValue value;
    if (take_attribute(node, "k", &value))
        set_input(node, 1, b.constant_i64({std::get<int64_t>(value)}, node.name + ":k"));
}

// Upsample before opset 9: scales as a floats attribute, now input 1.
void adapt_upsample_attribute(ImportBuilder& b, ImportedNode& node) {
    AttributeValue value;
    if (take_attribute(node, "scales", &value)) {
        const auto& scales = std::get<std::vector<float>>(value);
        set_input(node, 1, constant_f32(b, scales, Shape({static_cast<int64_t>(scales.size())}),
                                        node.name + ":scales"));
    }
}

// Resize in opset 10 took (X, scales) and resized like Upsample: asymmetric coordinates,
// nearest rounding down. Opset 11 put roi between them.
void adapt_resize_10(ImportedNode& node) {
    if (node.inputs.size() >= 2) node.inputs = {node.inputs[0], -1, node.inputs[1]};
    node.attributes.set("coordinate_transformation_mode", std::string("asymmetric"));
    node.attributes.set("nearest_mode", std::string("floor"));
}

bool is_reduction(const std::string& op) { return op.rfind("Reduce", 0) == 0; }

// Softmax, LogSoftmax and Hardmax before opset 13 flatten the input to 2-D at `axis` and
// normalize each row: Flatten → op(axis = 1) → Reshape back to the input's shape.
void adapt_coerced_softmax(ImportBuilder& b, ImportedNode node) {
    if (node.inputs.size() != 1 || node.inputs[0] < 0 || node.outputs.size() != 1)
        throw ModelError(b.what() + ": node '" + node.name + "' (" + node.op +
                         ") must have one input and one output");
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
    if (opset < 7) {
        // Opsets 1 to 6: `consumed_inputs` was an in-place hint without meaning for inference;
        // the old explicit broadcasting of binary ops (broadcast/axis) is not adapted.
        if (node.attributes.has("broadcast") && node.attributes.get_int("broadcast") != 0)
            throw Unsupported(b.what() + ": node '" + node.name + "' (" + op +
                              "): opset-" + std::to_string(opset) + " explicit broadcasting is not supported");
        Attributes kept;
        for (const auto& [name, value] : node.attributes.all())
            if (name != "consumed_inputs" && name != "broadcast") kept.set(name, value);
        node.attributes = std::move(kept);
    }
    if (op == "Scan" && opset < 9) {
        // Opset 8: an optional sequence_lens first, and every input and output of the node with
        // a batch axis 0 whose entries are scanned independently (along axis 1). Kept as Scan
        // with the internal attribute batch_axis, which the shape function and kernel honour;
        // sequence_lens (rows shorter than the rest) and reversed directions are not.
        if (!node.inputs.empty() && node.inputs.front() >= 0)
            throw Unsupported(b.what() + ": node '" + node.name + "' (Scan, opset 8): sequence_lens is not supported");
        if (!node.inputs.empty()) node.inputs.erase(node.inputs.begin());
        Attributes kept;
        for (const auto& [name, value] : node.attributes.all()) {
            if (name != "directions") kept.set(name, value);
            else
                for (int64_t direction : node.attributes.get_ints(name))
                    if (direction != 0)
                        throw Unsupported(b.what() + ": node '" + node.name + "' (Scan, opset 8): reverse directions are not supported");
        }
        kept.set("batch_axis", int64_t{1});
        node.attributes = std::move(kept);
    }
    if (op == "Reshape" && opset < 5) {
        attribute_to_input(b, node, "shape", 1);
    } else if ((op == "Squeeze" || op == "Unsqueeze") && opset < 13) {
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
    } else if (op == "Clip" && opset < 11) {
        adapt_clip_attributes(b, node);
    } else if (op == "Pad" && opset < 11) {
        adapt_pad_attributes(b, node);
    } else if (op == "TopK" && opset < 10) {
        adapt_top_k_attribute(b, node);
    } else if (op == "Upsample" && opset < 9) {
        adapt_upsample_attribute(b, node);
    } else if (op == "Resize" && opset < 11) {
        adapt_resize_10(node);
    } else if (op == "RoiAlign" && opset < 16) {
        // Opset 10's RoiAlign had no such attribute and sampled without the half-pixel shift.
        node.attributes.set("coordinate_transformation_mode", std::string("output_half_pixel"));
    } else if (op == "BatchNormalization" && opset < 9) {
        if (node.attributes.get_int("spatial", 1) != 1)
            throw Unsupported(b.what() + ": node '" + node.name + "': BatchNormalization with spatial=0");
    }
    b.add_node(node.op, node.name, std::move(node.inputs), std::move(node.outputs),
               std::move(node.attributes));
}

}  // namespace infer::detail
