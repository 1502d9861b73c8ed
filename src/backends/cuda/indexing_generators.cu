// Ops whose outputs come from shapes and attributes rather than from input elements: Shape,
// ConstantOfShape and Range. Their inputs' values are on the host (the core keeps them there).
#include "backends/cuda/device_types.cuh"

#include <algorithm>
#include <cstring>

namespace infer::cuda {

namespace {

void run_shape(const Launch& l) {
    const Shape& in = l.ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(in.rank());
    int64_t start = l.ctx.attrs().get_int("start", 0);
    if (start < 0) start += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    // The output's length already says where the range ends.
    const std::vector<int64_t> dims(in.dims().begin() + start,
                                    in.dims().begin() + start + l.ctx.output(0).numel());
    // From pageable memory the copy has consumed `dims` when it returns.
    INFER_CUDA_CHECK(cudaMemcpyAsync(l.out(0), dims.data(), dims.size() * sizeof(int64_t),
                                     cudaMemcpyHostToDevice, l.handle()),
                     l.where());
}

template <class T>
__global__ void fill_kernel(T* out, int64_t n, T value) {
    INFER_GRID_STRIDE(i, n) out[i] = value;
}

void run_constant_of_shape(const Launch& l) {
    Tensor& out = l.ctx.output(0);
    const size_t size = dtype_size(out.dtype());
    uint64_t bits = 0;  // the value's bytes; zero (of any dtype) without the attribute
    if (l.ctx.attrs().has("value")) {
        const Tensor value = l.ctx.attrs().get_tensor("value").to(Device::CPU).contiguous();
        std::memcpy(&bits, value.raw_data(), size);
    }
    const int64_t n = out.numel();
    dispatch_by_size(size, l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        T value;
        std::memcpy(&value, &bits, sizeof(T));
        fill_kernel<<<grid_for(n), kBlock, 0, l.handle()>>>(static_cast<T*>(l.out(0)), n, value);
        l.check_launch("fill_kernel");
    });
}

// out[i] = start + i · delta, in the output's type (f16/bf16 computed in f32).
template <class T>
__global__ void range_kernel(T* out, int64_t n, Compute<T> start, Compute<T> delta) {
    INFER_GRID_STRIDE(i, n) out[i] = store<T>(start + static_cast<Compute<T>>(i) * delta);
}

void run_range(const Launch& l) {
    const Tensor start = l.ctx.input(0).to(Device::CPU);
    const Tensor delta = l.ctx.input(2).to(Device::CPU);
    const int64_t n = l.ctx.output(0).numel();
    dispatch_numeric(start.dtype(), l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        using C = Compute<T>;
        const auto first = static_cast<C>(start.dtype() == DType::i64 || start.dtype() == DType::i32
                                              ? static_cast<double>(start.to_vector<int64_t>()[0])
                                              : start.to_vector<float>()[0]);
        const auto step = static_cast<C>(delta.dtype() == DType::i64 || delta.dtype() == DType::i32
                                             ? static_cast<double>(delta.to_vector<int64_t>()[0])
                                             : delta.to_vector<float>()[0]);
        range_kernel<<<grid_for(n), kBlock, 0, l.handle()>>>(static_cast<T*>(l.out(0)), n, first,
                                                            step);
        l.check_launch("range_kernel");
    });
}

}  // namespace

void register_generator_kernels(KernelRegistrar& r) {
    r.add("Shape", kEveryType, run_shape);
    r.add("ConstantOfShape", {DType::i64}, run_constant_of_shape);
    r.add("Range", kNumericTypes, run_range);
}

}  // namespace infer::cuda
