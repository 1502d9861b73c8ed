// Cast between any two dtypes. Floats go to integers by truncation toward zero, anything goes
// to bool as "not zero", and f16/bf16 results are rounded to nearest even.
#include "backends/cuda/packed.cuh"

namespace infer::cuda {

namespace {

// A value widened to something every conversion can start from.
template <class S>
__device__ __forceinline__ auto widen(S value) {
    if constexpr (std::is_same_v<S, Bool8>) return static_cast<int32_t>(value.value != 0);
    else return load(value);
}

template <class D, class W>
__device__ __forceinline__ D narrow(W value) {
    if constexpr (std::is_same_v<D, Bool8>) return Bool8{static_cast<uint8_t>(value != W(0))};
    else if constexpr (is_reduced_float<D>) return store<D>(static_cast<float>(value));
    else return static_cast<D>(value);
}

template <class S, class D>
struct Convert {
    __device__ __forceinline__ D operator()(S value) const { return narrow<D>(widen(value)); }
};

void run_cast(const Launch& l) {
    const DType from = l.ctx.input(0).dtype();
    const DType to = l.ctx.output(0).dtype();
    const int64_t n = l.ctx.output(0).numel();
    if (from == to) {
        INFER_CUDA_CHECK(cudaMemcpyAsync(l.out(0), l.in(0), l.ctx.output(0).nbytes(),
                                         cudaMemcpyDeviceToDevice, l.handle()),
                         l.where() + ", " + std::to_string(l.ctx.output(0).nbytes()) + " bytes");
        return;
    }
    dispatch_all(from, l, [&](auto from_tag) {
        using S = typename decltype(from_tag)::type;
        dispatch_all(to, l, [&](auto to_tag) {
            using D = typename decltype(to_tag)::type;
            launch_map_contiguous(l, static_cast<const S*>(l.in(0)), static_cast<D*>(l.out(0)), n,
                                  Convert<S, D>{}, "cast_kernel");
        });
    });
}

}  // namespace

void register_cast_kernels(KernelRegistrar& r) {
    r.add("Cast", kEveryType, run_cast);
}

}  // namespace infer::cuda
