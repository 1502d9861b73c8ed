// Graph::save_onnx: the IR written back as an ONNX model, so that other runtimes (ONNX Runtime
// as the benchmark's peer) can run exactly the graph infer built, e.g. from a safetensors
// checkpoint, without PyTorch to export it. The IR's ops are the op table's, which follow the
// current ONNX definitions (older forms are adapted on import), hence one opset for all.
#include "core/ir/graph_ir.hpp"
#include "core/onnx/tensor_proto.hpp"
#include "core/ops/op_schema.hpp"

#include <infer/error.hpp>
#include <infer/graph.hpp>
#include <infer/version.hpp>

#include <climits>
#include <fstream>
#include <variant>

namespace infer {

namespace {

// Gelu is opset 20's; everything else infer builds is older.
constexpr int64_t kOpset = 20;

void set_type(onnx::ValueInfoProto& info, const TensorInfo& tensor) {
    info.set_name(tensor.name);
    onnx::TypeProto* outer = info.mutable_type();
    if (tensor.optional) outer = outer->mutable_optional_type()->mutable_elem_type();
    if (tensor.kind == ValueKind::sequence) outer = outer->mutable_sequence_type()->mutable_elem_type();
    auto* type = outer->mutable_tensor_type();
    type->set_elem_type(static_cast<int>(detail::dtype_to_onnx(tensor.dtype)));
    if (tensor.kind == ValueKind::sequence && tensor.shape.rank() == 0) return;  // elements of any shape
    auto* shape = type->mutable_shape();
    for (size_t axis = 0; axis < tensor.shape.rank(); ++axis) {
        auto* dim = shape->add_dim();
        if (tensor.shape[axis] == kDynamic) dim->set_dim_param(tensor.name + "_" + std::to_string(axis));
        else dim->set_dim_value(tensor.shape[axis]);
    }
}

void add_attribute(onnx::NodeProto& node, const std::string& name, const AttributeValue& value) {
    auto* attribute = node.add_attribute();
    attribute->set_name(name);
    std::visit(
        [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, int64_t>) {
                attribute->set_type(onnx::AttributeProto::INT);
                attribute->set_i(v);
            } else if constexpr (std::is_same_v<T, float>) {
                attribute->set_type(onnx::AttributeProto::FLOAT);
                attribute->set_f(v);
            } else if constexpr (std::is_same_v<T, std::string>) {
                attribute->set_type(onnx::AttributeProto::STRING);
                attribute->set_s(v);
            } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
                attribute->set_type(onnx::AttributeProto::INTS);
                for (int64_t i : v) attribute->add_ints(i);
            } else if constexpr (std::is_same_v<T, std::vector<float>>) {
                attribute->set_type(onnx::AttributeProto::FLOATS);
                for (float f : v) attribute->add_floats(f);
            } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
                attribute->set_type(onnx::AttributeProto::STRINGS);
                for (const std::string& s : v) attribute->add_strings(s);
            } else if constexpr (std::is_same_v<T, Tensor>) {
                attribute->set_type(onnx::AttributeProto::TENSOR);
                *attribute->mutable_t() = detail::tensor_to_proto(v, name);
            } else {
                // Control flow: the importer turned the subgraph's outer-scope reads into extra
                // node inputs, which ONNX does not have; writing them back is not done yet.
                throw Unsupported("save_onnx: node '" + node.name() + "' (" + node.op_type() +
                                  ") has a subgraph attribute '" + name +
                                  "'; writing control-flow subgraphs to ONNX is not supported yet");
            }
        },
        value);
}

onnx::ModelProto to_model(const detail::GraphIR& ir) {
    onnx::ModelProto model;
    model.set_ir_version(9);
    model.set_producer_name("infer");
    model.set_producer_version(kVersion);
    auto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(kOpset);
    onnx::GraphProto& graph = *model.mutable_graph();
    graph.set_name(ir.name);
    const auto name_of = [&](int value) { return value < 0 ? std::string() : ir.values[static_cast<size_t>(value)].name; };
    for (const auto& [value, tensor] : ir.constants) *graph.add_initializer() = detail::tensor_to_proto(tensor, name_of(value));
    for (const TensorInfo& input : ir.input_infos) set_type(*graph.add_input(), input);
    for (const detail::NodeIR& node : ir.nodes) {
        auto& proto = *graph.add_node();
        proto.set_op_type(node.op);
        proto.set_name(node.name);
        for (int input : node.inputs) proto.add_input(name_of(input));
        for (int output : node.outputs) proto.add_output(name_of(output));
        for (const auto& [name, value] : node.attributes.all()) {
            // Optional's element type, which the importer keeps as two integers.
            if (node.op == "Optional" && name == "type") {
                auto* attribute = proto.add_attribute();
                attribute->set_name("type");
                attribute->set_type(onnx::AttributeProto::TYPE_PROTO);
                onnx::TypeProto* type = attribute->mutable_tp();
                if (node.attributes.get_int("type_is_sequence", 0)) type = type->mutable_sequence_type()->mutable_elem_type();
                type->mutable_tensor_type()->set_elem_type(static_cast<int>(std::get<int64_t>(value)));
                continue;
            }
            if (node.op == "Optional" && name == "type_is_sequence") continue;
            add_attribute(proto, name, value);
        }
    }
    // Outputs whose name is not their value's (or that are inputs or constants) go through Identity.
    for (size_t i = 0; i < ir.outputs.size(); ++i) {
        const TensorInfo& info = ir.output_infos[i];
        const std::string value = name_of(ir.outputs[i]);
        if (value != info.name) {
            auto& identity = *graph.add_node();
            identity.set_op_type("Identity");
            identity.set_name(info.name + "/identity");
            identity.add_input(value);
            identity.add_output(info.name);
        }
        set_type(*graph.add_output(), info);
    }
    return model;
}

}  // namespace

void Graph::save_onnx(const std::string& path) const {
    for (const detail::NodeIR& node : ir().nodes)
        if (detail::find_op(node.op) && detail::find_op(node.op)->traits.internal)
            throw Unsupported("graph '" + name() + "': node '" + node.name + "' is infer's internal op " + node.op +
                              ", which ONNX files cannot hold");
    const onnx::ModelProto model = to_model(ir());
    if (model.ByteSizeLong() > static_cast<size_t>(INT_MAX))
        throw Unsupported("graph '" + name() + "': over 2 GiB, too large for one ONNX file");
    std::ofstream out(path, std::ios::binary);
    if (!out || !model.SerializeToOstream(&out)) throw InvalidArgument("cannot write the ONNX file '" + path + "'");
}

}  // namespace infer
