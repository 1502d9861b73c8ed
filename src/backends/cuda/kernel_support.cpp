#include "backends/cuda/kernel_support.hpp"

#include <string>

namespace infer::cuda {

std::string Launch::where() const {
    return "node '" + ctx.node_name() + "' (" + ctx.op() + ") on " + ctx.device().to_string();
}

void Launch::unsupported(const std::string& what) const {
    throw Unsupported(where() + ": " + what);
}

namespace {
void check_on_device(const Launch& launch, const Tensor& t, const char* role, size_t i) {
    if (!t.defined())
        throw InvalidArgument(launch.where() + ": " + role + " " + std::to_string(i) +
                              " is missing");
    if (t.device() != launch.ctx.device() || !t.is_contiguous())
        throw DeviceError(launch.where() + ": " + role + " " + std::to_string(i) + " is " +
                          t.describe() + "; the kernel needs a contiguous tensor on " +
                          launch.ctx.device().to_string());
}
}  // namespace

const void* Launch::in(size_t i) const {
    const Tensor& t = ctx.input(i);
    check_on_device(*this, t, "input", i);
    return t.raw_data();
}

void* Launch::out(size_t i) const {
    Tensor& t = ctx.output(i);
    check_on_device(*this, t, "output", i);
    return t.raw_data();
}

std::vector<int64_t> Launch::ints(size_t i) const {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != DType::i64 && t.dtype() != DType::i32)
        throw InvalidArgument(where() + ": input " + std::to_string(i) + " must be i64 or i32, got " +
                              t.describe());
    // Produced on the device by an earlier kernel of this stream: wait for it to be written.
    if (!t.device().is_cpu()) stream.synchronize();
    return t.to_vector<int64_t>();
}

void Launch::check_launch(const char* kernel) const {
    INFER_CUDA_CHECK(cudaGetLastError(), std::string(kernel) + " for " + where());
}

}  // namespace infer::cuda
