// Ops whose output does not come from input elements: Shape, ConstantOfShape and Range.
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/indexing_kernels.hpp"

#include <algorithm>
#include <cstring>

namespace infer::cpu {

namespace {

void shape_kernel(KernelContext& ctx) {
    const Shape& shape = ctx.input(0).shape();
    const int64_t rank = static_cast<int64_t>(shape.rank());
    int64_t start = ctx.attrs().get_int("start", 0);
    int64_t end = ctx.attrs().get_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    int64_t* out = ctx.output(0).data<int64_t>();
    for (int64_t i = start; i < end; ++i) out[i - start] = shape[static_cast<size_t>(i)];
}

void constant_of_shape_kernel(KernelContext& ctx) {
    Tensor& out = ctx.output(0);
    auto* dst = static_cast<char*>(out.raw_data());
    if (!ctx.attrs().has("value")) {
        std::memset(dst, 0, out.nbytes());  // the default value is f32 0
        return;
    }
    const Tensor value = ctx.attrs().get_tensor("value").to(Device::CPU);
    if (value.dtype() != out.dtype() || value.numel() != 1)
        invalid_argument(
            ctx, "value must be one element of the output's dtype, got " + value.describe());
    if (out.numel() == 0) return;
    // Seed one element, then double the filled prefix: a handful of large memcpys.
    const size_t total = out.nbytes();
    size_t filled = dtype_size(out.dtype());
    std::memcpy(dst, value.raw_data(), filled);
    while (filled < total) {
        const size_t chunk = std::min(filled, total - filled);
        std::memcpy(dst + filled, dst, chunk);
        filled += chunk;
    }
}

template <class T>
void range_kernel(KernelContext& ctx) {
    for (size_t i = 1; i < 3; ++i) require_same_dtype(ctx, 0, i);
    const T start = *ctx.input(0).data<T>();
    const T delta = *ctx.input(2).data<T>();
    Tensor& out = ctx.output(0);
    T* y = out.data<T>();
    for (int64_t i = 0, count = out.numel(); i < count; ++i)
        y[i] = static_cast<T>(start + static_cast<T>(i) * delta);
}

}  // namespace

void register_indexing_generators(KernelRegistry& r) {
    for (DType t : kAllDTypes) r.add("Shape", t, shape_kernel);
    r.add("ConstantOfShape", {DType::i64, DType::i32}, constant_of_shape_kernel);
    r.add("Range", DType::f32, range_kernel<float>);
    r.add("Range", DType::i32, range_kernel<int32_t>);
    r.add("Range", DType::i64, range_kernel<int64_t>);
    r.add("Range", DType::f64, range_kernel<double>);
}

}  // namespace infer::cpu
