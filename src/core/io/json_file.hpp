#pragma once
// Reading the small JSON files of model folders (config.json, modules.json, tokenizer.json,
// safetensors indexes): a file that is missing or does not parse is a ModelError naming it.
#include <nlohmann/json.hpp>

#include <filesystem>

namespace infer::detail {

nlohmann::json read_json_file(const std::filesystem::path& path);
// The same, and the value must be a JSON object.
nlohmann::json read_json_object(const std::filesystem::path& path);

}  // namespace infer::detail
