#include "metadata.hpp"

#include "datatype.hpp"

#include <infer/version.hpp>

namespace infer::serve {

namespace {

nlohmann::json tensors(const std::vector<TensorInfo>& infos) {
    nlohmann::json list = nlohmann::json::array();
    // kDynamic is -1, which is also how the protocol writes a dynamic dimension.
    for (const TensorInfo& info : infos)
        list.push_back({{"name", info.name}, {"datatype", protocol_datatype(info.dtype)}, {"shape", info.shape.dims()}});
    return list;
}

}  // namespace

nlohmann::json server_metadata() {
    return {{"name", "infer"}, {"version", kVersion}, {"extensions", {"binary_tensor_data"}}};
}

nlohmann::json model_metadata(const std::string& name, const Graph& graph, const std::vector<std::string>& devices) {
    return {{"name", name},
            {"versions", {"1"}},
            {"platform", "infer"},
            {"inputs", tensors(graph.inputs())},
            {"outputs", tensors(graph.outputs())},
            // Not in the protocol's list, which allows more fields: where the model runs.
            {"parameters", {{"devices", devices}}}};
}

}  // namespace infer::serve
