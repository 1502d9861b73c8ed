// MappedFile on POSIX: open, fstat, mmap(MAP_PRIVATE), and the descriptor closed at once (the
// mapping does not need it).
#include "core/io/mapped_file.hpp"

#include <infer/error.hpp>

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace infer::detail {

namespace {

// Closes the descriptor on every path out of open().
struct Descriptor {
    int fd;
    ~Descriptor() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
    Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (file.fd < 0) throw ModelError("cannot open '" + path + "': " + std::strerror(errno));
    struct stat status {};
    if (::fstat(file.fd, &status) != 0) throw ModelError("cannot stat '" + path + "': " + std::strerror(errno));
    if (!S_ISREG(status.st_mode)) throw ModelError("'" + path + "' is not a regular file");
    const auto size = static_cast<size_t>(status.st_size);
    if (size == 0) return std::shared_ptr<MappedFile>(new MappedFile(path, nullptr, 0));
    void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd, 0);
    if (data == MAP_FAILED) throw ModelError("cannot map '" + path + "' into memory: " + std::strerror(errno));
    return std::shared_ptr<MappedFile>(new MappedFile(path, static_cast<uint8_t*>(data), size));
}

MappedFile::MappedFile(std::string path, uint8_t* data, size_t size)
    : path_(std::move(path)), data_(data), size_(size) {}

MappedFile::~MappedFile() {
    if (data_) ::munmap(data_, size_);
}

}  // namespace infer::detail
