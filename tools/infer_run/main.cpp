// infer-run: run an ONNX model (or a Hugging Face folder: config.json + safetensors) on tensors
// stored as files.
//   infer-run MODEL --inputs DIR --outputs DIR [--device cpu|cuda|NAME] [--precision f32|f16|bf16]
//             [--tf32] [--strict]
//   infer-run MODEL --info [--device ...]
//   infer-run MODEL --save-onnx FILE   (the graph as infer loaded or built it, as an ONNX file)
// Inputs are input_0.pb, input_1.pb, ... (ONNX TensorProto) or input_N.npy, in graph-input
// order; outputs are written as output_N.pb (or .npy with --npy) in graph-output order.
// Sequence and optional inputs and outputs are ONNX SequenceProto and OptionalProto files. numpy
// has no bf16, so numpy-made files (the ONNX node tests among them) store bf16 tensors as u16
// bit patterns: a u16 file given for a bf16 input is read as those bf16 values.
// Any error ends the program with a one-line reason on stderr and status 3 when the model uses
// something infer does not support (infer::Unsupported), 1 for every other error.
#include <infer/infer.hpp>
#include <infer/tensor_io.hpp>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace {

// numpy-made bf16 data arrives as u16 bit patterns.
infer::Tensor as_declared(infer::Tensor tensor, const infer::TensorInfo& info) {
    if (tensor.dtype() == infer::DType::u16 && info.dtype == infer::DType::bf16)
        return infer::Tensor(tensor.buffer(), infer::DType::bf16, tensor.shape(), tensor.byte_offset());
    return tensor;
}

infer::Batch read_inputs(const infer::Graph& graph, const fs::path& dir) {
    infer::Batch batch;
    for (size_t i = 0; i < graph.inputs().size(); ++i) {
        const infer::TensorInfo& info = graph.inputs()[i];
        const std::string stem = "input_" + std::to_string(i);
        fs::path file = dir / (stem + ".pb");
        if (!fs::exists(file)) file = dir / (stem + ".npy");
        if (!fs::exists(file))
            throw infer::InvalidArgument("no " + stem + ".pb or " + stem + ".npy in " + dir.string() +
                                         " for input '" + info.name + "'");
        std::vector<infer::Tensor> elements;
        if (info.optional) {
            infer::OptionalContents contents = infer::load_optional_proto(file.string());
            if (!contents.present) continue;  // an absent optional input is left out
            elements = std::move(contents.elements);
        } else if (info.kind == infer::ValueKind::sequence) {
            elements = infer::load_sequence_proto(file.string());
        } else {
            elements.push_back(infer::load_tensor(file.string()));
        }
        for (infer::Tensor& element : elements) element = as_declared(element, info);
        if (info.kind == infer::ValueKind::sequence) batch.set_sequence(info.name, std::move(elements));
        else batch.set(info.name, elements.at(0));
    }
    return batch;
}

void write_outputs(const infer::Graph& graph, const infer::Batch& outputs, const fs::path& dir, bool npy) {
    fs::create_directories(dir);
    for (size_t i = 0; i < graph.outputs().size(); ++i) {
        const infer::TensorInfo& info = graph.outputs()[i];
        const std::string& name = info.name;
        const bool sequence = info.kind == infer::ValueKind::sequence;
        if (npy && (sequence || info.optional))
            throw infer::InvalidArgument("output '" + name + "' is a sequence or optional value, which .npy cannot hold");
        const fs::path file = dir / ("output_" + std::to_string(i) + (npy ? ".npy" : ".pb"));
        if (info.optional) {
            infer::OptionalContents contents;
            contents.sequence = sequence;
            contents.present = sequence ? outputs.contains_sequence(name) : outputs.contains(name);
            if (contents.present) contents.elements = sequence ? outputs.sequence(name) : std::vector{outputs[name]};
            infer::save_optional_proto(contents, file.string(), name);
        } else if (sequence) {
            infer::save_sequence_proto(outputs.sequence(name), file.string(), name);
        } else if (npy) {
            infer::save_npy(outputs[name], file.string());
        } else {
            infer::save_tensor_proto(outputs[name], file.string(), name);
        }
    }
}

std::string describe(const infer::TensorInfo& info) {
    std::string type = std::string(infer::dtype_name(info.dtype)) + info.shape.to_string();
    if (info.kind == infer::ValueKind::sequence) type = "sequence of " + type;
    return info.optional ? "optional " + type : type;
}

void print_info(const infer::Graph& graph, const infer::Session& session) {
    std::cout << "model: " << graph.name() << "\ninputs:\n";
    for (const auto& in : graph.inputs())
        std::cout << "  " << in.name << " " << describe(in) << "\n";
    std::cout << "outputs:\n";
    for (const auto& out : graph.outputs())
        std::cout << "  " << out.name << " " << describe(out) << "\n";
    std::cout << "ops (" << graph.node_count() << " nodes):\n";
    for (const auto& [op, count] : graph.op_histogram()) std::cout << "  " << op << " " << count << "\n";
    const auto planned = session.op_histogram();
    size_t planned_nodes = 0;
    for (const auto& [op, count] : planned) planned_nodes += count;
    std::cout << "ops as planned for " << session.options().device.to_string() << " at "
              << infer::precision_name(session.options().precision) << ", after fusion (" << planned_nodes
              << " nodes):\n";
    for (const auto& [op, count] : planned) std::cout << "  " << op << " " << count << "\n";
    const infer::PlacementReport placement = session.placement();
    if (placement.nodes.empty())
        std::cout << "placement: made with the first run (the inputs have dynamic dimensions)\n";
    else
        std::cout << placement.to_string();
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Run an ONNX model with infer on tensors stored as files"};
    std::string model, inputs_dir, outputs_dir, device = "cpu", precision = "f32", onnx_path;
    bool info = false, npy = false, strict = false, tf32 = false;
    app.add_option("model", model, "the .onnx file, or a Hugging Face folder (config.json + safetensors)")->required();
    app.add_option("--save-onnx", onnx_path, "write the graph (before the session's passes) as an ONNX file");
    app.add_option("--inputs", inputs_dir, "folder with input_N.pb or input_N.npy");
    app.add_option("--outputs", outputs_dir, "folder to write output_N.pb into");
    app.add_option("--device", device, "cpu, cuda, cuda:N or a registered backend");
    app.add_option("--precision", precision, "f32, f16 or bf16");
    app.add_flag("--info", info, "print inputs, outputs, op histogram and placement");
    app.add_flag("--npy", npy, "write outputs as .npy instead of .pb");
    app.add_flag("--strict", strict, "fail instead of falling back to the CPU");
    app.add_flag("--tf32", tf32,
                 "f32 matrix products in TF32 where the device has it (~1e-3 relative error)");
    CLI11_PARSE(app, argc, argv);
    try {
        const infer::Graph graph = infer::Graph::load(model);
        if (!onnx_path.empty()) {
            graph.save_onnx(onnx_path);
            if (!info && inputs_dir.empty()) return 0;
        }
        infer::SessionOptions options;
        options.device = infer::Device::parse(device);
        options.precision = infer::parse_precision(precision);
        options.strict = strict;
        options.allow_tf32 = tf32;
        infer::Session session(graph, options);
        if (info) {
            print_info(graph, session);
            if (inputs_dir.empty()) return 0;
        }
        if (inputs_dir.empty() || outputs_dir.empty())
            throw infer::InvalidArgument("--inputs and --outputs are required to run the model");
        write_outputs(graph, session.run(read_inputs(graph, inputs_dir)), outputs_dir, npy);
        if (info) std::cout << session.placement().to_string();
        return 0;
    } catch (const infer::Unsupported& e) {
        std::cerr << "infer-run: unsupported: " << e.what() << "\n";
        return 3;
    } catch (const std::exception& e) {
        std::cerr << "infer-run: " << e.what() << "\n";
        return 1;
    }
}
