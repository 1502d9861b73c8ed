// read_json_file: parsing without exceptions, so that every failure gets the file's name.
#include "core/io/json_file.hpp"

#include <infer/error.hpp>

#include <fstream>

namespace infer::detail {

nlohmann::json read_json_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ModelError("cannot read '" + path.string() + "'");
    nlohmann::json value = nlohmann::json::parse(in, nullptr, false);
    if (value.is_discarded()) throw ModelError(path.string() + " is not valid JSON");
    return value;
}

nlohmann::json read_json_object(const std::filesystem::path& path) {
    nlohmann::json value = read_json_file(path);
    if (!value.is_object()) throw ModelError(path.string() + " is not a JSON object");
    return value;
}

}  // namespace infer::detail
