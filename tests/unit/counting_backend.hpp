#pragma once
// A small backend for tests, written only against <infer/backend.hpp>: host memory that counts
// its allocations, live bytes and copies, and its own Add and Relu kernels. Everything else
// falls back to the CPU.
#include <infer/backend.hpp>

#include <atomic>
#include <cstdlib>

class CountingBackend : public infer::Backend {
public:
    explicit CountingBackend(std::string name) : name_(std::move(name)) {
        kernels_.add("Relu", infer::DType::f32, [](infer::KernelContext& ctx) {
            const float* x = ctx.input(0).data<float>();
            float* y = ctx.output(0).data<float>();
            for (int64_t i = 0; i < ctx.output(0).numel(); ++i) y[i] = x[i] > 0 ? x[i] : 0;
        });
        kernels_.add("Add", infer::DType::f32, [](infer::KernelContext& ctx) {
            // Same-shape inputs only: anything else is refused, never computed wrongly.
            if (ctx.input(0).shape() != ctx.input(1).shape())
                throw infer::Unsupported(ctx.node_name() + ": broadcasting Add is not supported");
            const float* a = ctx.input(0).data<float>();
            const float* b = ctx.input(1).data<float>();
            float* y = ctx.output(0).data<float>();
            for (int64_t i = 0; i < ctx.output(0).numel(); ++i) y[i] = a[i] + b[i];
        });
    }
    std::string name() const override { return name_; }
    infer::DeviceProperties properties(int) const override {
        infer::DeviceProperties p;
        p.name = "counting test device";
        p.host_accessible = true;
        return p;
    }
    std::shared_ptr<infer::Buffer> allocate(size_t bytes, int index) override {
        ++allocations;
        live_bytes += static_cast<int64_t>(bytes);
        void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
        return std::make_shared<infer::Buffer>(p, bytes, infer::Device(name_, index),
                                               [this, bytes](void* q) {
                                                   live_bytes -= static_cast<int64_t>(bytes);
                                                   std::free(q);
                                               },
                                               infer::Buffer::Flags{true, false});
    }
    void copy_from_host(void* dst, const void* src, size_t bytes, int index, infer::Stream* stream) override {
        ++copies;
        Backend::copy_from_host(dst, src, bytes, index, stream);
    }
    void copy_to_host(void* dst, const void* src, size_t bytes, int index, infer::Stream* stream) override {
        ++copies;
        Backend::copy_to_host(dst, src, bytes, index, stream);
    }
    void copy_on_device(void* dst, const void* src, size_t bytes, int index, infer::Stream* stream) override {
        ++copies;
        Backend::copy_on_device(dst, src, bytes, index, stream);
    }
    bool supports(const infer::NodeSignature& node) const override {
        if (node.op == "Add" && node.input_shapes[0] != node.input_shapes[1]) return false;
        return Backend::supports(node);
    }
    std::atomic<int> allocations{0};
    std::atomic<int> copies{0};
    std::atomic<int64_t> live_bytes{0};  // allocated and not yet freed

private:
    std::string name_;
};
