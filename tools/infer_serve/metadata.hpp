#pragma once
// The metadata documents of the protocol: the server's (GET /v2) and a model's
// (GET /v2/models/{name}), whose tensors carry protocol datatypes and shapes with -1 for
// dynamic dimensions.
#include <infer/graph.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace infer::serve {

nlohmann::json server_metadata();
nlohmann::json model_metadata(const std::string& name, const Graph& graph, const std::vector<std::string>& devices);

}  // namespace infer::serve
