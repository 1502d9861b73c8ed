// Graph::load: reading the file and parsing the protobuf, then import; or building the graph
// from a Hugging Face model folder (config.json + safetensors).
#include "core/models/hf_folder.hpp"
#include "core/onnx/onnx_import.hpp"

#include <infer/error.hpp>
#include <infer/graph.hpp>

#include <google/protobuf/io/coded_stream.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace infer {

Graph Graph::load_from_bytes(const void* data, size_t size, const std::string& name,
                             const std::string& base_dir) {
    if (size > static_cast<size_t>(INT_MAX))
        throw Unsupported(name + ": models over 2 GiB must keep their weights in external files");
    google::protobuf::io::CodedInputStream stream(static_cast<const uint8_t*>(data), static_cast<int>(size));
    stream.SetTotalBytesLimit(INT_MAX);
    stream.SetRecursionLimit(64);  // bounds nesting in hostile files
    onnx::ModelProto model;
    if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
        throw ModelError(name + ": not a valid ONNX model (the protobuf does not parse; truncated or "
                                "not an ONNX file?)");
    if (model.ir_version() <= 0 && !model.has_graph())
        throw ModelError(name + ": the protobuf parses but is not an ONNX model (no IR version, no graph)");
    try {
        return Graph(detail::import_onnx(model, base_dir, name));
    } catch (const Error&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw OutOfMemory(name + ": not enough host memory to import the model");
    } catch (const std::exception& e) {
        // A field of the wrong type or a number that does not parse, in a file no exporter
        // wrote: still the caller's malformed model, not a crash.
        throw ModelError(name + ": malformed model (" + e.what() + ")");
    }
}

Graph Graph::load(const std::string& path) {
    if (detail::is_hf_model_folder(path)) return detail::load_hf_model_folder(path);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ModelError("cannot open model file '" + path + "'");
    std::ostringstream bytes;
    bytes << in.rdbuf();
    const std::string content = bytes.str();
    const std::filesystem::path file(path);
    const std::string dir = file.has_parent_path() ? file.parent_path().string() : ".";
    return load_from_bytes(content.data(), content.size(), path, dir);
}

}  // namespace infer
