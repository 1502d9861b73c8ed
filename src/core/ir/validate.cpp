// Graph validation: structure first (names, ids, order, arity), then shape inference over the
// whole graph with the declared input shapes, which may be dynamic.
#include "core/ir/graph_ir.hpp"
#include "core/ops/op_schema.hpp"

#include <infer/error.hpp>

#include <set>

namespace infer::detail {

namespace {
[[noreturn]] void fail(const GraphIR& g, const std::string& message) {
    throw ModelError("graph '" + g.name + "': " + message);
}

void check_structure(GraphIR& g) {
    const int value_count = static_cast<int>(g.values.size());
    std::vector<bool> defined(g.values.size(), false);
    std::set<std::string> names;
    for (const ValueIR& v : g.values)
        if (!names.insert(v.name).second) fail(g, "tensor name '" + v.name + "' is used twice");
    const auto define = [&](int id, const std::string& by) {
        if (id < 0 || id >= value_count) fail(g, by + " refers to tensor id " + std::to_string(id));
        if (defined[id]) fail(g, "tensor '" + g.values[id].name + "' is produced twice (" + by + ")");
        defined[id] = true;
    };
    for (int id : g.inputs) define(id, "graph input");
    for (const auto& [id, tensor] : g.constants) {
        define(id, "constant");
        if (!tensor.defined()) fail(g, "constant '" + g.values[id].name + "' has no data");
    }
    std::set<std::string> node_names;
    for (NodeIR& node : g.nodes) {
        if (!node_names.insert(node.name).second) fail(g, "node name '" + node.name + "' is used twice");
        const OpSchema* schema = find_op(node.op);
        if (!schema)
            throw Unsupported("graph '" + g.name + "': node '" + node.name + "' uses op '" +
                              node.op + "', which infer does not implement");
        node.id = schema->id;
        const int inputs = static_cast<int>(node.inputs.size());
        const int outputs = static_cast<int>(node.outputs.size());
        if (inputs < schema->min_inputs || (schema->max_inputs >= 0 && inputs > schema->max_inputs))
            fail(g, "node '" + node.name + "' (" + node.op + ") has " + std::to_string(inputs) +
                        " inputs; it takes " + std::to_string(schema->min_inputs) + " to " +
                        (schema->max_inputs < 0 ? "any" : std::to_string(schema->max_inputs)));
        if (schema->max_outputs >= 0 && outputs > schema->max_outputs)
            throw Unsupported("graph '" + g.name + "': node '" + node.name + "' (" + node.op + ") has " +
                              std::to_string(outputs) + " outputs; infer supports up to " +
                              std::to_string(schema->max_outputs));
        if (outputs < schema->min_outputs)
            fail(g, "node '" + node.name + "' (" + node.op + ") has " + std::to_string(outputs) +
                        " outputs; it makes " + std::to_string(schema->min_outputs) + " to " +
                        (schema->max_outputs < 0 ? "any" : std::to_string(schema->max_outputs)));
        for (int i = 0; i < inputs; ++i) {
            const int id = node.inputs[i];
            if (id == -1) {
                if (i < schema->min_inputs)
                    fail(g, "node '" + node.name + "' (" + node.op + "): required input " +
                                std::to_string(i) + " is absent");
                continue;
            }
            if (id < 0 || id >= value_count || !defined[id])
                fail(g, "node '" + node.name + "' (" + node.op + ") input " + std::to_string(i) +
                            (id >= 0 && id < value_count ? " '" + g.values[id].name + "'" : "") +
                            " is not produced before the node (dangling name or cycle)");
        }
        for (int id : node.outputs) define(id, "node '" + node.name + "'");
    }
    if (g.outputs.empty()) fail(g, "it has no outputs");
    if (g.output_names.size() != g.outputs.size()) fail(g, "output names and outputs differ in count");
    std::set<std::string> output_names;
    for (size_t i = 0; i < g.outputs.size(); ++i) {
        const int id = g.outputs[i];
        if (id < 0 || id >= value_count || !defined[id])
            fail(g, "output '" + g.output_names[i] + "' is not produced by any node");
        if (!output_names.insert(g.output_names[i]).second)
            fail(g, "output name '" + g.output_names[i] + "' is used twice");
    }
}

void infer_types(GraphIR& g) {
    for (const auto& [id, tensor] : g.constants) g.values[id].type = {tensor.dtype(), tensor.shape()};
    for (const NodeIR& node : g.nodes) {
        std::vector<TensorType> inputs;
        std::vector<const Tensor*> values;
        for (int id : node.inputs) {
            inputs.push_back(id >= 0 ? g.values[id].type : TensorType{});
            auto constant = id >= 0 ? g.constants.find(id) : g.constants.end();
            values.push_back(constant != g.constants.end() ? &constant->second : nullptr);
        }
        const OpSchema* schema = &op_schema(node.id);
        InferenceContext ctx(node, inputs, values);
        if (!schema->output_structure)
            for (size_t i = 0; i < inputs.size(); ++i)
                if (node.inputs[i] >= 0 && !inputs[i].is_plain_tensor())
                    throw Unsupported("graph '" + g.name + "': node '" + node.name + "' (" + node.op + ") input " +
                                      std::to_string(i) + " '" + g.values[node.inputs[i]].name + "' is " +
                                      (inputs[i].optional ? "an optional value" : "a sequence") + "; " + node.op +
                                      " takes tensors (sequences go to the sequence ops, Identity and SequenceMap)");
        std::vector<Shape> shapes;
        bool known = true;
        try {
            shapes = schema->infer_shapes(ctx);
        } catch (const ShapeUnknown&) {
            known = false;
        }
        if (known && shapes.size() != node.outputs.size())
            ctx.fail("shape inference gave " + std::to_string(shapes.size()) + " shapes for " +
                     std::to_string(node.outputs.size()) + " outputs");
        for (size_t i = 0; i < node.outputs.size(); ++i) {
            TensorType& type = g.values[node.outputs[i]].type;
            type.dtype = schema->output_dtype(ctx, i);
            type.shape = known ? std::optional<Shape>(shapes[i]) : std::nullopt;
            type.kind = ValueKind::tensor;
            type.optional = false;
            if (schema->output_structure) schema->output_structure(ctx, i, type);
        }
    }
}
}  // namespace

void validate(GraphIR& g) {
    check_structure(g);
    infer_types(g);
    g.input_infos.clear();
    g.output_infos.clear();
    for (int id : g.inputs) {
        const ValueIR& v = g.values[id];
        g.input_infos.push_back({v.name, v.type.dtype, v.type.shape.value_or(Shape{}), v.type.kind, v.type.optional});
    }
    for (size_t i = 0; i < g.outputs.size(); ++i) {
        const ValueIR& v = g.values[g.outputs[i]];
        // An output of unknown rank is reported as rank 0; its real shape comes with each run.
        g.output_infos.push_back(
            {g.output_names[i], v.type.dtype, v.type.shape.value_or(Shape{}), v.type.kind, v.type.optional});
    }
}

}  // namespace infer::detail
