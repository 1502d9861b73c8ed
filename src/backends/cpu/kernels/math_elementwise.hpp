#pragma once
// Loops shared by the math family's elementwise kernels: a dense map of input 0 into output 0,
// and a broadcasting binary op over inputs 0 and 1 (broadcast_apply), both split over the
// thread pool.
#include "backends/cpu/kernels/broadcast.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/parallel.hpp"

namespace infer::cpu::math {

constexpr int64_t kElementsPerTask = 16384;

// out[i] = op(in[i]) with input elements of T and output elements of R.
template <class T, class R, class Op>
Kernel map_kernel(Op op) {
    return [op](KernelContext& ctx) {
        const T* in = ctx.input(0).data<T>();
        R* out = ctx.output(0).data<R>();
        parallel_for(ctx.output(0).numel(), kElementsPerTask, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) out[i] = op(in[i]);
        });
    };
}

template <class T, class R, class Op>
Kernel broadcast_kernel(Op op) {
    return [op](KernelContext& ctx) {
        require_same_dtype(ctx, 0, 1);
        const Tensor& a = ctx.input(0);
        const Tensor& b = ctx.input(1);
        Tensor& out = ctx.output(0);
        broadcast_apply<T, R>(a.data<T>(), a.shape(), b.data<T>(), b.shape(), out.data<R>(),
                              out.shape(), op);
    };
}

}  // namespace infer::cpu::math
