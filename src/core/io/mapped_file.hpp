#pragma once
// A whole file mapped into memory, private and copy-on-write: readers see the file's bytes
// without reading them all up front (the kernel pages in what is touched), and a write through
// the mapping changes only this process's copy of that page, never the file. Shared ownership
// (shared_ptr) lets tensors pointing into it keep it alive.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace infer::detail {

class MappedFile {
public:
    // Throws ModelError naming the file when it cannot be opened or mapped.
    static std::shared_ptr<MappedFile> open(const std::string& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    uint8_t* data() const { return data_; }
    size_t size() const { return size_; }
    const std::string& path() const { return path_; }

private:
    MappedFile(std::string path, uint8_t* data, size_t size);
    std::string path_;
    uint8_t* data_;  // nullptr for an empty file (mmap refuses length 0)
    size_t size_;
};

}  // namespace infer::detail
