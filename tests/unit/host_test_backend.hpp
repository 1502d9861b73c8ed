#pragma once
// A backend on plain host memory for tests of the backend API: a subclass adds the kernels
// (and segments) under test; memory, name and properties are here once.
#include <infer/backend.hpp>

#include <cstdlib>
#include <memory>
#include <string>

namespace test_support {

class HostTestBackend : public infer::Backend {
public:
    explicit HostTestBackend(std::string name) : name_(std::move(name)) {}
    std::string name() const override { return name_; }
    infer::DeviceProperties properties(int) const override {
        infer::DeviceProperties p;
        p.name = name_ + " test device";
        p.host_accessible = true;
        return p;
    }
    std::shared_ptr<infer::Buffer> allocate(size_t bytes, int index) override {
        void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
        return std::make_shared<infer::Buffer>(p, bytes, infer::Device(name_, index), [](void* q) { std::free(q); },
                                               infer::Buffer::Flags{true, false});
    }

private:
    std::string name_;
};

}  // namespace test_support
