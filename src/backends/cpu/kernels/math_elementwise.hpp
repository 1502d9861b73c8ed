#pragma once
// Loops shared by the math family's elementwise kernels: a dense map of input 0 into output 0,
// and a broadcasting binary op over inputs 0 and 1, both split over the thread pool.
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

// out = op(a, b) with NumPy broadcasting of a and b to out's shape.
template <class T, class R, class Op>
void broadcast_apply(const T* a, const Shape& a_shape, const T* b, const Shape& b_shape, R* out,
                     const Shape& out_shape, Op op) {
    const auto rows = StridedRows<2>::broadcast(out_shape, {&a_shape, &b_shape});
    const int64_t n = rows.row_length();
    const auto strides = rows.inner_strides();  // no structured binding: clang < 16 cannot capture one
    const int64_t sa = strides[0], sb = strides[1];
    parallel_for(rows.rows(), grain_for(n), [&](int64_t begin, int64_t end) {
        rows.for_rows(begin, end, [&](int64_t o, const StridedRows<2>::Offsets& in) {
            const T* x = a + in[0];
            const T* y = b + in[1];
            R* z = out + o;
            for (int64_t i = 0; i < n; ++i) z[i] = op(x[i * sa], y[i * sb]);
        });
    });
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
