#pragma once
// infer-load's in-process target: the model served exactly as infer-serve serves it (the same
// ServedModel: sessions, batcher, request parsing and response encoding), called directly by
// the client threads instead of through HTTP.
#include "load_target.hpp"
#include "served_model.hpp"

#include <memory>
#include <string>

namespace infer::load {

std::unique_ptr<LoadTarget> in_process_target(const std::string& name, Graph graph, const serve::ModelOptions& options);

}  // namespace infer::load
