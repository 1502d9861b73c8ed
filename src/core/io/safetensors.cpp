// Safetensors: opening a checkpoint (one file, or the shards an index names), and tensors that
// point into the files' mappings.
#include "core/io/json_file.hpp"
#include "core/io/mapped_file.hpp"
#include "core/io/safetensors_header.hpp"

#include <infer/backend.hpp>
#include <infer/error.hpp>
#include <infer/safetensors.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

namespace infer {

namespace fs = std::filesystem;

namespace {

constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";

struct Record {
    Safetensors::Info info;
    std::shared_ptr<detail::MappedFile> file;
    size_t offset = 0;  // of the first byte, in the file
    size_t bytes = 0;
};

bool ends_with(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

nlohmann::json read_index(const fs::path& path) {
    nlohmann::json index = detail::read_json_object(path);
    if (!index.contains("weight_map") || !index["weight_map"].is_object())
        throw ModelError(path.string() + ": the checkpoint index has no \"weight_map\" object");
    return index;
}

// A shard's file name from the index: a plain name beside the index, never a path elsewhere.
fs::path shard_path(const fs::path& index_path, const nlohmann::json& value, const std::string& tensor) {
    if (!value.is_string())
        throw ModelError(index_path.string() + ": tensor '" + tensor + "': its shard is not a file name");
    const fs::path name(value.get<std::string>());
    if (name.empty() || name.has_parent_path() || name.is_absolute() || name == "." || name == "..")
        throw ModelError(index_path.string() + ": tensor '" + tensor + "': shard '" + name.string() +
                         "' is not a file name beside the index");
    return index_path.parent_path() / name;
}

}  // namespace

struct Safetensors::Impl {
    std::string path;
    std::map<std::string, Record> records;
    std::map<std::string, std::string> metadata;

    // Maps and checks one file, adding its tensors. Returns the file's metadata.
    std::map<std::string, std::string> add_file(const fs::path& file_path) {
        auto file = detail::MappedFile::open(file_path.string());
        detail::SafetensorsHeader header =
            detail::parse_safetensors_header(file->data(), file->size(), file_path.string());
        for (detail::SafetensorsEntry& entry : header.entries) {
            Record record{{entry.dtype, Shape(std::move(entry.shape)), file_path.string()},
                          file,
                          header.data_offset + entry.begin,
                          entry.end - entry.begin};
            const auto [it, added] = records.emplace(entry.name, std::move(record));
            if (!added)
                throw ModelError(file_path.string() + ": tensor '" + entry.name + "' is also in " + it->second.info.file);
        }
        return std::move(header.metadata);
    }

    void add_index(const fs::path& index_path) {
        const nlohmann::json index = read_index(index_path);
        std::map<std::string, fs::path> placement;  // tensor → shard, as the index says
        std::set<fs::path> shards;
        for (const auto& [tensor, shard] : index["weight_map"].items()) {
            placement.emplace(tensor, shard_path(index_path, shard, tensor));
            shards.insert(placement[tensor]);
        }
        if (shards.empty()) throw ModelError(index_path.string() + ": the checkpoint index names no tensors");
        bool first = true;
        for (const fs::path& shard : shards) {
            if (!fs::exists(shard))
                throw ModelError(index_path.string() + ": shard " + shard.string() + " does not exist");
            auto shard_metadata = add_file(shard);
            if (first) metadata = std::move(shard_metadata);
            first = false;
        }
        for (const auto& [tensor, shard] : placement) {
            const auto found = records.find(tensor);
            if (found == records.end() || found->second.info.file != shard.string())
                throw ModelError(index_path.string() + ": tensor '" + tensor + "' is not in its shard " + shard.string());
        }
        if (index.contains("metadata") && index["metadata"].is_object())
            for (const auto& [key, value] : index["metadata"].items())
                if (value.is_string()) metadata[key] = value.get<std::string>();
    }
};

Safetensors::Safetensors(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Safetensors Safetensors::open(const std::string& path) {
    auto impl = std::make_shared<Impl>();
    impl->path = path;
    fs::path target(path);
    std::error_code error;
    if (fs::is_directory(target, error)) {
        if (fs::exists(target / kIndexName)) target /= kIndexName;
        else if (fs::exists(target / kSingleName)) target /= kSingleName;
        else throw ModelError("'" + path + "' holds neither " + kSingleName + " nor " + kIndexName);
    }
    if (ends_with(target.string(), ".json")) impl->add_index(target);
    else impl->metadata = impl->add_file(target);
    return Safetensors(std::move(impl));
}

std::vector<std::string> Safetensors::names() const {
    std::vector<std::string> names;
    names.reserve(impl_->records.size());
    for (const auto& [name, record] : impl_->records) names.push_back(name);
    return names;
}

bool Safetensors::contains(const std::string& name) const { return impl_->records.count(name) != 0; }

const Safetensors::Info& Safetensors::info(const std::string& name) const {
    const auto found = impl_->records.find(name);
    if (found == impl_->records.end())
        throw InvalidArgument("checkpoint '" + impl_->path + "' has no tensor '" + name + "'");
    return found->second.info;
}

Tensor Safetensors::tensor(const std::string& name) const {
    info(name);  // throws for an unknown name
    const Record& record = impl_->records.at(name);
    uint8_t* data = record.file->data() + record.offset;
    // Kernels read elements through typed pointers, which must be aligned: the format aligns the
    // data section's start only by convention, so an odd tensor is copied.
    const size_t element = dtype_size(record.info.dtype);
    if (record.bytes == 0 || reinterpret_cast<uintptr_t>(data) % element != 0)
        return Tensor::from_host(data, record.info.dtype, record.info.shape);
    auto buffer = std::make_shared<Buffer>(data, record.bytes, Device::CPU,
                                           [keep_alive = record.file](void*) {}, Buffer::Flags{true, false});
    return Tensor(std::move(buffer), record.info.dtype, record.info.shape);
}

const std::map<std::string, std::string>& Safetensors::metadata() const { return impl_->metadata; }
const std::string& Safetensors::path() const { return impl_->path; }

}  // namespace infer
