// ONNX ModelProto → GraphIR: opsets and domains, initializers (with external data), inputs
// with symbolic dimensions, Constant nodes, attributes, and the nodes in dependency order.
#include "core/onnx/onnx_import.hpp"

#include "core/onnx/import_builder.hpp"
#include "core/onnx/tensor_proto.hpp"
#include "core/ops/op_schema.hpp"

#include <infer/error.hpp>
#include <infer/graph.hpp>

#include <algorithm>
#include <deque>
#include <functional>
#include <set>

namespace infer::detail {

namespace {

// ONNX's preview training domain: infer reads its optimizers (one update step).
constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

int64_t default_domain_opset(const onnx::ModelProto& model, const std::string& what) {
    int64_t opset = -1;
    for (const auto& entry : model.opset_import()) {
        const std::string& domain = entry.domain();
        if (domain.empty() || domain == "ai.onnx") opset = entry.version();
    }
    if (opset < 0) {
        if (model.opset_import_size() == 0) opset = kOldestOpset;  // IR version 2 models
        // A model of training ops alone (an optimizer step) uses no default-domain op.
        else if (std::all_of(model.opset_import().begin(), model.opset_import().end(),
                             [](const auto& entry) { return entry.domain() == kTrainingDomain; }))
            opset = kNewestOpset;
        else throw Unsupported(what + ": imports no default-domain (ai.onnx) opset, only " +
                               model.opset_import(0).domain());
    }
    if (opset > kNewestOpset)
        throw Unsupported(what + ": opset " + std::to_string(opset) + " is newer than infer reads (" +
                          std::to_string(kNewestOpset) + ")");
    if (opset < kOldestOpset)
        throw Unsupported(what + ": opset " + std::to_string(opset) + " is older than infer reads (" +
                          std::to_string(kOldestOpset) + ")");
    return opset;
}

using SubgraphImporter = std::function<std::shared_ptr<const Graph>(const onnx::GraphProto&, const std::string&)>;

Attributes convert_attributes(const onnx::NodeProto& node, const std::string& base_dir,
                              const std::string& where, const SubgraphImporter& import_subgraph) {
    Attributes attrs;
    for (const auto& a : node.attribute()) {
        const std::string what = where + " attribute '" + a.name() + "'";
        switch (a.type()) {
            case onnx::AttributeProto_AttributeType_INT: attrs.set(a.name(), int64_t{a.i()}); break;
            case onnx::AttributeProto_AttributeType_FLOAT: attrs.set(a.name(), a.f()); break;
            case onnx::AttributeProto_AttributeType_STRING: attrs.set(a.name(), a.s()); break;
            case onnx::AttributeProto_AttributeType_INTS:
                attrs.set(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end()));
                break;
            case onnx::AttributeProto_AttributeType_FLOATS:
                attrs.set(a.name(), std::vector<float>(a.floats().begin(), a.floats().end()));
                break;
            case onnx::AttributeProto_AttributeType_STRINGS:
                attrs.set(a.name(), std::vector<std::string>(a.strings().begin(), a.strings().end()));
                break;
            case onnx::AttributeProto_AttributeType_TENSOR:
                attrs.set(a.name(), tensor_from_proto(a.t(), base_dir, what));
                break;
            case onnx::AttributeProto_AttributeType_GRAPH:
                attrs.set(a.name(), import_subgraph(a.g(), what));
                break;
            case onnx::AttributeProto_AttributeType_TYPE_PROTO: {
                // Optional's type: kept as its element dtype and whether it is a sequence.
                const onnx::TypeProto& type = a.tp();
                const bool sequence = type.has_sequence_type();
                const onnx::TypeProto& element = sequence ? type.sequence_type().elem_type() : type;
                if (!element.has_tensor_type())
                    throw Unsupported(what + ": only tensor and sequence-of-tensor types are supported");
                attrs.set(a.name(), int64_t{element.tensor_type().elem_type()});
                attrs.set(a.name() + "_is_sequence", int64_t{sequence});
                break;
            }
            default:
                throw Unsupported(what + " has a type infer does not support (lists of graphs, "
                                         "and sparse tensors are not supported)");
        }
    }
    return attrs;
}

// A Constant node's value as a tensor, whichever attribute carries it.
Tensor constant_value(const Attributes& attrs, const std::string& where) {
    if (attrs.has("value")) return attrs.get_tensor("value");
    if (attrs.has("value_float"))
        return Tensor::from_vector(std::vector<float>{attrs.get_float("value_float")}, Shape{});
    if (attrs.has("value_int"))
        return Tensor::from_vector(std::vector<int64_t>{attrs.get_int("value_int")}, Shape{});
    if (attrs.has("value_floats")) {
        const auto& v = attrs.get_floats("value_floats");
        return Tensor::from_vector(v, Shape({static_cast<int64_t>(v.size())}));
    }
    if (attrs.has("value_ints")) {
        const auto& v = attrs.get_ints("value_ints");
        return Tensor::from_vector(v, Shape({static_cast<int64_t>(v.size())}));
    }
    throw Unsupported(where + ": Constant without a supported value attribute");
}

Shape declared_shape(const onnx::TypeProto_Tensor& type, const std::string& name, const std::string& what) {
    if (!type.has_shape()) throw Unsupported(what + ": '" + name + "' declares no shape");
    std::vector<int64_t> dims;
    for (const auto& d : type.shape().dim()) {
        if (d.has_dim_value() && d.dim_value() < 0)
            throw ModelError(what + ": '" + name + "' has negative dimension " + std::to_string(d.dim_value()));
        dims.push_back(d.has_dim_value() ? d.dim_value() : kDynamic);
    }
    return Shape(dims);
}

// A graph input's or output's type: a tensor, a sequence of tensors, or an optional of either.
// A sequence's element shape may be left out (elements of any shape).
TensorType declared_type(const onnx::TypeProto& type, const std::string& name, const std::string& what) {
    if (type.has_tensor_type()) {
        const auto& tensor = type.tensor_type();
        return {dtype_from_onnx_element(tensor.elem_type(), what + ": '" + name + "'"), declared_shape(tensor, name, what)};
    }
    if (type.has_sequence_type() && type.sequence_type().elem_type().has_tensor_type()) {
        const auto& tensor = type.sequence_type().elem_type().tensor_type();
        TensorType t{dtype_from_onnx_element(tensor.elem_type(), what + ": '" + name + "'"), std::nullopt};
        if (tensor.has_shape()) t.shape = declared_shape(tensor, name, what);
        t.kind = ValueKind::sequence;
        return t;
    }
    if (type.has_optional_type() && !type.optional_type().elem_type().has_optional_type()) {
        TensorType t = declared_type(type.optional_type().elem_type(), name, what);
        t.optional = true;
        return t;
    }
    throw Unsupported(what + ": '" + name + "' is neither a tensor, a sequence of tensors nor an optional of one of them");
}

// Every tensor name the nodes of `graph` and of its subgraphs read.
void names_read(const onnx::NodeProto& node, std::set<std::string>& names) {
    for (const auto& in : node.input()) names.insert(in);
    for (const auto& a : node.attribute())
        if (a.type() == onnx::AttributeProto_AttributeType_GRAPH) {
            for (const auto& inner : a.g().node()) names_read(inner, names);
            for (const auto& out : a.g().output()) names.insert(out.name());
        }
}

// Node indices in an order where every node comes after the producers of its inputs, and of
// the tensors its subgraphs read. In a subgraph (`outer_scope`), names nothing here produces
// belong to an enclosing graph.
std::vector<int> dependency_order(const onnx::GraphProto& graph, const std::set<std::string>& ready_names,
                                  const std::string& what, bool outer_scope) {
    std::map<std::string, int> producer;
    for (int n = 0; n < graph.node_size(); ++n)
        for (const auto& out : graph.node(n).output())
            if (!out.empty()) producer[out] = n;
    std::vector<int> waiting(graph.node_size(), 0);
    std::vector<std::vector<int>> consumers(graph.node_size());
    for (int n = 0; n < graph.node_size(); ++n) {
        std::set<int> deps;
        std::set<std::string> reads;
        names_read(graph.node(n), reads);
        const std::set<std::string> direct(graph.node(n).input().begin(), graph.node(n).input().end());
        for (const auto& in : reads) {
            if (in.empty() || ready_names.count(in)) continue;
            auto it = producer.find(in);
            if (it != producer.end() && it->second == n) continue;  // a subgraph's own name
            if (it == producer.end() && (outer_scope || !direct.count(in))) continue;
            if (it == producer.end())
                throw ModelError(what + ": node '" + graph.node(n).name() + "' (" + graph.node(n).op_type() +
                                 ") uses tensor '" + in + "', which nothing produces");
            deps.insert(it->second);
        }
        waiting[n] = static_cast<int>(deps.size());
        for (int d : deps) consumers[d].push_back(n);
    }
    std::deque<int> queue;
    for (int n = 0; n < graph.node_size(); ++n)
        if (waiting[n] == 0) queue.push_back(n);
    std::vector<int> order;
    while (!queue.empty()) {
        const int n = queue.front();
        queue.pop_front();
        order.push_back(n);
        for (int c : consumers[n])
            if (--waiting[c] == 0) queue.push_back(c);
    }
    if (static_cast<int>(order.size()) != graph.node_size()) {
        for (int n = 0; n < graph.node_size(); ++n)
            if (waiting[n] > 0)
                throw ModelError(what + ": the graph has a cycle through node '" + graph.node(n).name() +
                                 "' (" + graph.node(n).op_type() + ")");
    }
    return order;
}


// Makes a subgraph's inputs its `own_inputs` first inputs followed by one per name of
// `implicit`, in that order, adding inputs for names this subgraph does not read.
void give_implicit_inputs(GraphIR& graph, size_t own_inputs, const std::vector<std::string>& implicit) {
    std::vector<int> inputs(graph.inputs.begin(), graph.inputs.begin() + static_cast<std::ptrdiff_t>(own_inputs));
    for (const auto& name : implicit) {
        int id = -1;
        for (size_t i = own_inputs; i < graph.inputs.size(); ++i)
            if (graph.values[graph.inputs[i]].name == name) id = graph.inputs[i];
        if (id < 0) {
            graph.values.push_back({name, {}});
            id = static_cast<int>(graph.values.size()) - 1;
        }
        inputs.push_back(id);
    }
    graph.inputs = std::move(inputs);
}

// Imports one graph: the model's, or (with `outer`) a branch or loop body, whose own inputs
// come first and whose reads of enclosing graphs' tensors follow as implicit inputs.
GraphIR import_graph(const onnx::GraphProto& graph, int64_t opset, const std::string& base_dir,
                     const std::string& what, ImportBuilder::OuterScope outer,
                     std::vector<std::string>* outer_names) {
    const bool subgraph = outer != nullptr;
    ImportBuilder builder(what, std::move(outer));
    builder.graph().name = graph.name().empty() ? what : graph.name();

    std::set<std::string> ready;
    for (const auto& init : graph.initializer()) {
        if (init.name().empty()) throw ModelError(what + ": an initializer has no name");
        builder.constant(tensor_from_proto(init, base_dir, what + ": initializer '" + init.name() + "'"),
                         init.name());
        ready.insert(init.name());
    }
    for (const auto& input : graph.input()) {
        if (ready.count(input.name())) continue;  // older IR versions list initializers as inputs
        const int id = builder.new_value(input.name());
        builder.graph().inputs.push_back(id);
        ready.insert(input.name());
        // A subgraph's input types come from its node when a plan is made.
        if (subgraph) continue;
        builder.graph().values[id].type = declared_type(input.type(), input.name(), what + ": input");
    }
    // Names this graph defines, which its own subgraphs may read.
    const auto defined_here = [&builder](const std::string& name) { return builder.has_value(name); };

    for (int n : dependency_order(graph, ready, what, subgraph)) {
        const onnx::NodeProto& node = graph.node(n);
        const std::string label = node.name().empty() ? node.op_type() + "_" + std::to_string(n) : node.name();
        const std::string where = what + ": node '" + label + "' (" + node.op_type() + ")";
        const bool training_op = node.domain() == kTrainingDomain &&
                                 (node.op_type() == "Adagrad" || node.op_type() == "Momentum" || node.op_type() == "Adam");
        if (!node.domain().empty() && node.domain() != "ai.onnx" && !training_op)
            throw Unsupported(where + " is in domain '" + node.domain() + "', which infer does not support");
        // Fused ops (FusedMatMul, Attention, ...) are infer's own, made by its passes with
        // their preconditions checked; a file naming one is not an ONNX model.
        if (const OpSchema* schema = find_op(node.op_type()); schema && schema->traits.internal)
            throw Unsupported(where + " is an op of infer's internal domain, which models cannot use");
        // Each subgraph's reads of this graph or those around it, in order of first use.
        std::vector<std::string> implicit;
        std::vector<std::pair<std::shared_ptr<GraphIR>, size_t>> subgraphs;  // with its own input count
        const auto import_subgraph = [&](const onnx::GraphProto& proto, const std::string& attribute_what) {
            std::vector<std::string> names;
            const auto visible = [&](const std::string& name) {
                return defined_here(name) || (builder.outer() && builder.outer()(name));
            };
            auto ir = std::make_shared<GraphIR>(import_graph(proto, opset, base_dir, attribute_what, visible, &names));
            for (const auto& name : names)
                if (std::find(implicit.begin(), implicit.end(), name) == implicit.end()) implicit.push_back(name);
            subgraphs.push_back({ir, ir->inputs.size() - names.size()});
            return std::make_shared<const Graph>(std::shared_ptr<const GraphIR>(ir));
        };
        Attributes attrs = convert_attributes(node, base_dir, where, import_subgraph);
        if (node.op_type() == "Constant") {
            if (node.output_size() != 1) throw ModelError(where + " must have one output");
            builder.constant(constant_value(attrs, where), node.output(0));
            continue;
        }
        // Every subgraph of the node takes the same implicit inputs, in one order.
        for (const auto& [ir, own_inputs] : subgraphs) give_implicit_inputs(*ir, own_inputs, implicit);
        // The kernel tells the node's own inputs from the implicit ones that follow by this count.
        if (!subgraphs.empty()) attrs.set("implicit_inputs", static_cast<int64_t>(implicit.size()));
        ImportedNode imported{node.op_type(), label, {}, {}, std::move(attrs)};
        for (const auto& in : node.input())
            imported.inputs.push_back(in.empty() ? -1 : builder.value(in, where));
        if (implicit.empty())
            while (!imported.inputs.empty() && imported.inputs.back() == -1) imported.inputs.pop_back();
        for (const auto& name : implicit) imported.inputs.push_back(builder.value(name, where));
        // Optional outputs left unnamed are dropped at the end, named privately in the middle.
        int named = node.output_size();
        while (named > 0 && node.output(named - 1).empty()) --named;
        for (int i = 0; i < named; ++i)
            imported.outputs.push_back(node.output(i).empty() ? builder.internal_value(label + ":unused")
                                                              : builder.new_value(node.output(i)));
        adapt_node(builder, std::move(imported), opset);
    }

    for (const auto& output : graph.output()) {
        builder.graph().outputs.push_back(builder.value(output.name(), "graph output"));
        builder.graph().output_names.push_back(output.name());
    }
    if (outer_names) *outer_names = builder.outer_names();
    return std::move(builder.graph());
}

}  // namespace

std::shared_ptr<GraphIR> import_onnx(const onnx::ModelProto& model, const std::string& base_dir,
                                     const std::string& what) {
    if (!model.has_graph()) throw ModelError(what + ": the model has no graph");
    const int64_t opset = default_domain_opset(model, what);
    const onnx::GraphProto& graph = model.graph();
    auto ir = std::make_shared<GraphIR>(import_graph(graph, opset, base_dir, what, nullptr, nullptr));
    validate(*ir);
    // Where inference could not tell an output's shape before run time (it hangs on values
    // computed then), the shape the file declares is the better description.
    for (int i = 0; i < graph.output_size(); ++i) {
        const auto& declared = graph.output(i);
        if (ir->values[ir->outputs[i]].type.shape) continue;
        const onnx::TypeProto& type = declared.type();
        const onnx::TypeProto& element = type.has_optional_type() ? type.optional_type().elem_type() : type;
        const onnx::TypeProto& tensor = element.has_sequence_type() ? element.sequence_type().elem_type() : element;
        if (!tensor.has_tensor_type() || !tensor.tensor_type().has_shape()) continue;
        ir->output_infos[i].shape = declared_shape(tensor.tensor_type(), declared.name(), what);
    }
    return ir;
}

}  // namespace infer::detail
