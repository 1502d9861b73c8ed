// Parsing and checking a safetensors header (the format is described in safetensors_header.hpp).
#include "core/io/safetensors_header.hpp"

#include <infer/error.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>

namespace infer::detail {

namespace {

using nlohmann::json;

// The reference implementation refuses larger headers; so do we, before allocating for one.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct ElementType {
    const char* name;
    DType dtype;
    size_t size;  // bytes, here rather than dtype_size() so the parser stands alone (fuzzing)
};
constexpr ElementType kElementTypes[] = {
    {"F32", DType::f32, 4}, {"F16", DType::f16, 2},  {"BF16", DType::bf16, 2},    {"F64", DType::f64, 8},
    {"I64", DType::i64, 8}, {"I32", DType::i32, 4},  {"I8", DType::i8, 1},        {"U8", DType::u8, 1},
    {"BOOL", DType::boolean, 1}, {"I16", DType::i16, 2}, {"U16", DType::u16, 2}, {"U32", DType::u32, 4},
    {"U64", DType::u64, 8},
};
// Names the format defines that infer has no DType for: well-formed, but Unsupported.
constexpr const char* kUnsupportedTypes[] = {"F8_E4M3", "F8_E5M2", "F8_E8M0",
                                             "F4", "F6_E2M3", "F6_E3M2", "C64"};

std::string where(const std::string& file, const std::string& tensor) {
    return file + ": tensor '" + tensor + "'";
}

const ElementType& element_type(const json& value, const std::string& file, const std::string& tensor) {
    if (!value.is_string()) throw ModelError(where(file, tensor) + ": \"dtype\" is not a string");
    const auto& name = value.get_ref<const std::string&>();
    for (const ElementType& type : kElementTypes)
        if (name == type.name) return type;
    for (const char* unsupported : kUnsupportedTypes)
        if (name == unsupported)
            throw Unsupported(where(file, tensor) + ": element type " + name + " is not supported by infer");
    throw ModelError(where(file, tensor) + ": unknown element type \"" + name + "\"");
}

// A non-negative integer that fits in size_t, or a ModelError naming `what`.
size_t unsigned_value(const json& value, const std::string& file, const std::string& tensor, const char* what) {
    if (!value.is_number_unsigned() || value.get<uint64_t>() > std::numeric_limits<size_t>::max())
        throw ModelError(where(file, tensor) + ": " + what + " is not a non-negative integer");
    return static_cast<size_t>(value.get<uint64_t>());
}

SafetensorsEntry parse_entry(const std::string& name, const json& value, const std::string& file) {
    if (!value.is_object()) throw ModelError(where(file, name) + ": its description is not a JSON object");
    for (const char* key : {"dtype", "shape", "data_offsets"})
        if (!value.contains(key)) throw ModelError(where(file, name) + ": no \"" + key + "\"");
    SafetensorsEntry entry;
    entry.name = name;
    const ElementType& type = element_type(value["dtype"], file, name);
    entry.dtype = type.dtype;

    const json& shape = value["shape"];
    if (!shape.is_array()) throw ModelError(where(file, name) + ": \"shape\" is not an array");
    // The byte length, with overflow checked at each step: a hostile shape must not wrap around
    // to a small number that then passes the length check.
    size_t bytes = type.size;
    for (const json& dim : shape) {
        const size_t extent = unsigned_value(dim, file, name, "a dimension of \"shape\"");
        if (extent > static_cast<size_t>(std::numeric_limits<int64_t>::max()))
            throw ModelError(where(file, name) + ": dimension " + std::to_string(extent) + " is too large");
        if (extent != 0 && bytes > std::numeric_limits<size_t>::max() / extent)
            throw ModelError(where(file, name) + ": its shape's byte size overflows");
        bytes *= extent;
        entry.shape.push_back(static_cast<int64_t>(extent));
    }

    const json& offsets = value["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2)
        throw ModelError(where(file, name) + ": \"data_offsets\" is not a pair [begin, end]");
    entry.begin = unsigned_value(offsets[0], file, name, "the begin of \"data_offsets\"");
    entry.end = unsigned_value(offsets[1], file, name, "the end of \"data_offsets\"");
    if (entry.end < entry.begin)
        throw ModelError(where(file, name) + ": \"data_offsets\" [" + std::to_string(entry.begin) + ", " +
                         std::to_string(entry.end) + "] end before they begin");
    if (entry.end - entry.begin != bytes)
        throw ModelError(where(file, name) + ": \"data_offsets\" span " + std::to_string(entry.end - entry.begin) +
                         " bytes, but its shape and element type " + type.name + " need " + std::to_string(bytes));
    return entry;
}

std::map<std::string, std::string> parse_metadata(const json& value, const std::string& file) {
    if (!value.is_object()) throw ModelError(file + ": \"__metadata__\" is not a JSON object");
    std::map<std::string, std::string> metadata;
    for (const auto& [key, text] : value.items()) {
        if (!text.is_string()) throw ModelError(file + ": \"__metadata__\" entry '" + key + "' is not a string");
        metadata.emplace(key, text.get<std::string>());
    }
    return metadata;
}

// Sorted by offset, the tensors must tile [0, data_size): each begins where the one before ends.
void check_tiling(const std::vector<SafetensorsEntry>& entries, size_t data_size, const std::string& file) {
    size_t expected = 0;
    const SafetensorsEntry* previous = nullptr;
    for (const SafetensorsEntry& entry : entries) {
        if (entry.begin < expected)
            throw ModelError(where(file, entry.name) + ": its bytes [" + std::to_string(entry.begin) + ", " +
                             std::to_string(entry.end) + ") overlap those of tensor '" + previous->name + "'");
        if (entry.begin > expected)
            throw ModelError(where(file, entry.name) + ": a gap of " + std::to_string(entry.begin - expected) +
                             " bytes before its data (offsets must be contiguous)");
        if (entry.end > data_size)
            throw ModelError(where(file, entry.name) + ": its bytes [" + std::to_string(entry.begin) + ", " +
                             std::to_string(entry.end) + ") lie outside the data section of " +
                             std::to_string(data_size) + " bytes (truncated file?)");
        expected = entry.end;
        previous = &entry;
    }
    if (expected != data_size)
        throw ModelError(file + ": the tensors cover " + std::to_string(expected) + " bytes of a data section of " +
                         std::to_string(data_size));
}

}  // namespace

SafetensorsHeader parse_safetensors_header(const uint8_t* bytes, size_t size, const std::string& file) {
    if (size < 8) throw ModelError(file + ": " + std::to_string(size) + " bytes, too short for a safetensors file");
    uint64_t header_bytes = 0;
    for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | bytes[i];
    if (header_bytes > kMaxHeaderBytes)
        throw ModelError(file + ": a header of " + std::to_string(header_bytes) +
                         " bytes is larger than safetensors allows (not a safetensors file?)");
    if (header_bytes > size - 8)
        throw ModelError(file + ": the header says it is " + std::to_string(header_bytes) + " bytes, but only " +
                         std::to_string(size - 8) + " follow (truncated file?)");
    const char* text = reinterpret_cast<const char*>(bytes + 8);
    if (header_bytes == 0 || text[0] != '{')
        throw ModelError(file + ": the header is not a JSON object (not a safetensors file?)");
    const json header = json::parse(text, text + header_bytes, nullptr, false);
    if (header.is_discarded() || !header.is_object())
        throw ModelError(file + ": the header is not valid JSON");

    SafetensorsHeader result;
    result.data_offset = 8 + static_cast<size_t>(header_bytes);
    for (const auto& [name, value] : header.items()) {
        if (name == "__metadata__") result.metadata = parse_metadata(value, file);
        else result.entries.push_back(parse_entry(name, value, file));
    }
    std::sort(result.entries.begin(), result.entries.end(),
              [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
                  return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
              });
    check_tiling(result.entries, size - result.data_offset, file);
    return result;
}

}  // namespace infer::detail
