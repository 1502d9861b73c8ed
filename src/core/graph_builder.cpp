// GraphBuilder: records inputs, constants and nodes into a GraphIR, then validates it.
#include "core/ir/graph_ir.hpp"
#include "core/ops/op_schema.hpp"

#include <infer/error.hpp>
#include <infer/graph.hpp>

namespace infer {

struct GraphBuilder::State {
    detail::GraphIR ir;
    size_t node_counter = 0;
    size_t constant_counter = 0;

    int add_value(const std::string& name, detail::TensorType type = {}) {
        ir.values.push_back({name, std::move(type)});
        return static_cast<int>(ir.values.size()) - 1;
    }
    void check_value(Value v, const std::string& where) const {
        if (v.id < -1 || v.id >= static_cast<int>(ir.values.size()))
            throw ModelError(where + ": value handle " + std::to_string(v.id) +
                             " does not belong to this builder");
    }
};

GraphBuilder::GraphBuilder(std::string name) : state_(std::make_unique<State>()) {
    state_->ir.name = std::move(name);
}
GraphBuilder::~GraphBuilder() = default;
GraphBuilder::GraphBuilder(GraphBuilder&&) noexcept = default;
GraphBuilder& GraphBuilder::operator=(GraphBuilder&&) noexcept = default;

Value GraphBuilder::input(const std::string& name, DType dtype, const Shape& shape) {
    for (int64_t d : shape)
        if (d < 0 && d != kDynamic)
            throw ModelError("input '" + name + "': dimension " + std::to_string(d) + " is invalid");
    const int id = state_->add_value(name, {dtype, shape});
    state_->ir.inputs.push_back(id);
    return {id};
}

Value GraphBuilder::sequence_input(const std::string& name, DType dtype, std::optional<Shape> element_shape) {
    detail::TensorType type{dtype, std::move(element_shape)};
    type.kind = ValueKind::sequence;
    const int id = state_->add_value(name, type);
    state_->ir.inputs.push_back(id);
    return {id};
}

Value GraphBuilder::optional_input(const std::string& name, DType dtype, const Shape& shape, ValueKind kind) {
    const Value v = kind == ValueKind::sequence ? sequence_input(name, dtype, shape) : input(name, dtype, shape);
    state_->ir.values[v.id].type.optional = true;
    return v;
}

Value GraphBuilder::constant(const Tensor& value, const std::string& name) {
    if (!value.defined()) throw ModelError("constant '" + name + "' is an undefined tensor");
    const std::string value_name =
        name.empty() ? "constant_" + std::to_string(state_->constant_counter++) : name;
    // A private dense host copy: later writes to the caller's tensor must not change the model.
    Tensor copy = value.device().is_cpu() ? value.clone() : value.to(Device::CPU).contiguous();
    const int id = state_->add_value(value_name, {copy.dtype(), copy.shape()});
    state_->ir.constants[id] = std::move(copy);
    return {id};
}

Value GraphBuilder::constant_i64(const std::vector<int64_t>& values) {
    return constant(Tensor::from_vector(values, Shape({static_cast<int64_t>(values.size())})));
}

std::vector<Value> GraphBuilder::op(const std::string& op, const std::vector<Value>& inputs,
                                    const Attributes& attributes, size_t num_outputs,
                                    const std::string& node_name) {
    const detail::OpSchema* schema = detail::find_op(op);
    if (!schema) throw Unsupported("GraphBuilder: unknown op '" + op + "'");
    detail::NodeIR node;
    node.op = op;
    node.name = node_name.empty() ? op + "_" + std::to_string(state_->node_counter) : node_name;
    ++state_->node_counter;
    node.attributes = attributes;
    for (Value v : inputs) {
        state_->check_value(v, "node '" + node.name + "'");
        node.inputs.push_back(v.id);
    }
    const int n_in = static_cast<int>(inputs.size());
    if (n_in < schema->min_inputs || (schema->max_inputs >= 0 && n_in > schema->max_inputs))
        throw ModelError("node '" + node.name + "' (" + op + "): " + std::to_string(n_in) +
                         " inputs given; it takes " + std::to_string(schema->min_inputs) + " to " +
                         (schema->max_inputs < 0 ? "any" : std::to_string(schema->max_inputs)));
    std::vector<Value> outputs;
    for (size_t i = 0; i < num_outputs; ++i) {
        const std::string name = num_outputs == 1 ? node.name : node.name + ":" + std::to_string(i);
        const int id = state_->add_value(name);
        node.outputs.push_back(id);
        outputs.push_back({id});
    }
    state_->ir.nodes.push_back(std::move(node));
    return outputs;
}

Value GraphBuilder::op1(const std::string& op_name, const std::vector<Value>& inputs,
                        const Attributes& attributes, const std::string& node_name) {
    return op(op_name, inputs, attributes, 1, node_name).front();
}

void GraphBuilder::output(const std::string& name, Value value) {
    state_->check_value(value, "output '" + name + "'");
    if (!value.present()) throw ModelError("output '" + name + "' is an absent value");
    state_->ir.outputs.push_back(value.id);
    state_->ir.output_names.push_back(name);
}

Graph GraphBuilder::build() {
    auto ir = std::make_shared<detail::GraphIR>(std::move(state_->ir));
    state_ = std::make_unique<State>();
    detail::validate(*ir);
    return Graph(std::move(ir));
}

Value GraphBuilder::gemm(Value a, Value b, Value c, bool trans_a, bool trans_b) {
    std::vector<Value> inputs{a, b};
    if (c.present()) inputs.push_back(c);
    return op1("Gemm", inputs, {{"transA", int64_t{trans_a}}, {"transB", int64_t{trans_b}}});
}

Value GraphBuilder::softmax(Value x, int64_t axis) { return op1("Softmax", {x}, {{"axis", axis}}); }

Value GraphBuilder::layer_norm(Value x, Value scale, Value bias, int64_t axis, float epsilon) {
    std::vector<Value> inputs{x, scale};
    if (bias.present()) inputs.push_back(bias);
    return op1("LayerNormalization", inputs, {{"axis", axis}, {"epsilon", epsilon}});
}

Value GraphBuilder::reshape(Value x, const std::vector<int64_t>& shape) {
    return op1("Reshape", {x, constant_i64(shape)});
}

Value GraphBuilder::transpose(Value x, const std::vector<int64_t>& perm) {
    return op1("Transpose", {x}, {{"perm", perm}});
}

Value GraphBuilder::cast(Value x, DType to) {
    return op1("Cast", {x}, {{"to", detail::dtype_to_onnx(to)}});
}

}  // namespace infer
