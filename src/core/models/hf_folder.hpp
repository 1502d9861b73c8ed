#pragma once
// Graph::load's way into Hugging Face model folders: config.json beside a safetensors
// checkpoint (model.safetensors, or shards with model.safetensors.index.json).
#include <infer/graph.hpp>

#include <filesystem>

namespace infer::detail {

bool is_hf_model_folder(const std::filesystem::path& folder);
// Builds the graph config.json's "model_type" describes from the checkpoint: outputs
// "last_hidden_state" and, when the folder is a sentence-transformers model (modules.json),
// "sentence_embedding". Throws Unsupported for an architecture infer cannot build, ModelError
// for a malformed folder.
Graph load_hf_model_folder(const std::filesystem::path& folder);

}  // namespace infer::detail
