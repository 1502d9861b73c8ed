// The CPU backend: 64-byte aligned host memory and the kernels of kernels/*.cpp.
#include "backends/cpu/cpu_backend.hpp"

#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/int8_gemm.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/register.hpp"

#include <infer/error.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

namespace infer::cpu {

namespace {

// The product kernels sessions will use, for reports; a bad INFER_INT8_KERNEL or
// INFER_FLOAT_GEMM says so here too.
template <class Choose, class Name>
std::string kernel_description(Choose choose, Name name) {
    try {
        return std::string(name(choose()));
    } catch (const Error& e) {
        return e.what();
    }
}

std::string product_kernels_description() {
    return "products by weights: f32 " + kernel_description(f32_gemm_kernel, float_gemm_kernel_name) + ", bf16 " +
           kernel_description(bf16_gemm_kernel, float_gemm_kernel_name) +
           "; int8 products: " + kernel_description(int8_kernel, int8_kernel_name);
}

std::string cpu_model_name() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) != 0) continue;
        const size_t colon = line.find(':');
        if (colon == std::string::npos) break;
        const size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? std::string() : line.substr(start);
    }
    return "CPU";
}

// A /proc/meminfo field in bytes, or 0 when it cannot be read.
uint64_t meminfo_bytes(const std::string& field) {
    std::ifstream meminfo("/proc/meminfo");
    for (std::string line; std::getline(meminfo, line);) {
        if (line.rfind(field + ":", 0) != 0) continue;
        return std::stoull(line.substr(field.size() + 1)) * 1024;  // reported in kB
    }
    return 0;
}

uint64_t sysconf_bytes(int pages_name) {
    const long pages = sysconf(pages_name), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

class PooledKernel final : public CompiledKernel {
public:
    PooledKernel(std::unique_ptr<CompiledKernel> kernel, std::shared_ptr<ThreadPool> pool)
        : kernel_(std::move(kernel)), pool_(std::move(pool)) {}
    size_t workspace_bytes() const override { return kernel_->workspace_bytes(); }
    void run(KernelContext& ctx) const override {
        UsePool use(pool_.get());
        kernel_->run(ctx);
    }

private:
    std::unique_ptr<CompiledKernel> kernel_;
    std::shared_ptr<ThreadPool> pool_;
};

class CpuBackend final : public Backend {
public:
    CpuBackend() {
        register_math_family_kernels(kernels_);
        register_indexing_family_kernels(kernels_);
        register_neural_family_kernels(kernels_);
        register_control_family_kernels(kernels_);
        register_fused_kernels(kernels_);
    }

    std::string name() const override { return "cpu"; }

    DeviceProperties properties(int) const override {
        DeviceProperties p;
        p.name = cpu_model_name();
        p.total_memory_bytes = meminfo_bytes("MemTotal");
        if (p.total_memory_bytes == 0) p.total_memory_bytes = sysconf_bytes(_SC_PHYS_PAGES);
        p.free_memory_bytes = meminfo_bytes("MemAvailable");
        if (p.free_memory_bytes == 0) p.free_memory_bytes = sysconf_bytes(_SC_AVPHYS_PAGES);
        p.cores = static_cast<int>(std::thread::hardware_concurrency());
        p.driver = blas_description() + "; " + product_kernels_description();
        p.host_accessible = true;
        return p;
    }

    // Every kernel runs on the thread pool of its session's thread count (SessionOptions::threads),
    // so sessions with different counts coexist. OpenBLAS stays single-threaded (kernels/blas.hpp):
    // the pools are the only threads.
    std::unique_ptr<CompiledKernel> compile(const CompileContext& ctx) const override {
        return std::make_unique<PooledKernel>(Backend::compile(ctx), pool_with_threads(ctx.node().threads));
    }

    std::shared_ptr<Buffer> allocate(size_t bytes, int) override {
        // aligned_alloc wants a multiple of the alignment, and a zero-byte request must still
        // give a distinct, freeable pointer.
        const size_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
        void* data = std::aligned_alloc(64, rounded);
        if (!data) throw OutOfMemory("cpu: cannot allocate " + std::to_string(bytes) + " bytes");
        return std::make_shared<Buffer>(
            data, bytes, Device::CPU, [](void* p) { std::free(p); }, Buffer::Flags{true, false});
    }
};

}  // namespace

std::shared_ptr<Backend> make_cpu_backend() { return std::make_shared<CpuBackend>(); }


}  // namespace infer::cpu
