// MaxPool, AveragePool (one thread per output, looping over its window) and GlobalAveragePool
// (a mean over the spatial axes).
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/reduce.hpp"
#include "backends/cuda/window.cuh"

namespace infer::cuda {

namespace {

// kMax: the window's maximum; else its mean, over the taps inside the input, or inside the
// padded input when count_include_pad (taps past the padding, from ceil_mode, never count).
// `indices` (MaxPool's optional second output, else null) gets the flat index into x of each
// maximum, the first one on ties.
template <class T, bool kMax>
__global__ void pool_kernel(const T* x, T* y, int64_t* indices, bool column_major, int64_t planes,
                            Window w, bool count_include_pad) {
    INFER_GRID_STRIDE(i, planes * w.out_size) {
        const int64_t plane = i / w.out_size;
        int64_t out[kMaxSpatial], k[kMaxSpatial];
        unflatten(i % w.out_size, w.out, w.spatial, out);
        float acc = kMax ? MaxOp::identity : 0.0f;
        int64_t count = 0, best_at = -1;
        for (int64_t tap = 0; tap < w.kernel_size; ++tap) {
            unflatten(tap, w.kernel, w.spatial, k);
            int64_t offset = 0, column_offset = 0, column_stride = 1;
            bool inside = true, in_padded = true;
            for (int d = 0; d < w.spatial; ++d) {
                const int64_t p = out[d] * w.stride[d] - w.pad_begin[d] + k[d] * w.dilation[d];
                inside = inside && p >= 0 && p < w.in[d];
                in_padded = in_padded && p >= -w.pad_begin[d] && p < w.in[d] + w.pad_end[d];
                offset = offset * w.in[d] + p;
                column_offset += p * column_stride;
                column_stride *= w.in[d];
            }
            if (inside) {
                const float v = load_float(x[plane * w.in_size + offset]);
                if (kMax && (best_at < 0 || (acc == acc && (v > acc || v != v)))) best_at = plane * w.in_size + (column_major ? column_offset : offset);
                acc = kMax ? MaxOp{}(acc, v) : acc + v;
            }
            if (count_include_pad ? in_padded : inside) ++count;
        }
        if (!kMax) acc = count > 0 ? acc / static_cast<float>(count) : 0.0f;
        y[i] = store<T>(static_cast<Compute<T>>(acc));
        if (indices) indices[i] = best_at;
    }
}

template <bool kMax>
void run_pool(const Launch& l) {
    const Tensor& x = l.ctx.input(0);
    const Window w = make_window(l, x.shape(), {});
    const bool count_include_pad = l.ctx.attrs().get_int("count_include_pad", 0) != 0;
    const int64_t planes = x.shape()[0] * x.shape()[1];
    dispatch_float(x.dtype(), l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        int64_t* indices = kMax && l.ctx.num_outputs() > 1 ? static_cast<int64_t*>(l.out(1)) : nullptr;
        pool_kernel<T, kMax><<<grid_for(planes * w.out_size), kBlock, 0, l.handle()>>>(
            static_cast<const T*>(l.in(0)), static_cast<T*>(l.out(0)), indices, l.ctx.attrs().get_int("storage_order", 0) != 0, planes, w,
            count_include_pad);
        l.check_launch("pool_kernel");
    });
}

void run_global_average_pool(const Launch& l) {
    const Tensor& x = l.ctx.input(0);
    const int64_t planes = x.shape()[0] * x.shape()[1];
    launch_reduce(l, x.dtype(), ReduceKind::mean, l.in(0), l.out(0),
                  {planes, x.numel() / std::max<int64_t>(planes, 1)}, {1});
}

}  // namespace

void register_pool_kernels(KernelRegistrar& r) {
    r.add("MaxPool", kFloatTypes, run_pool<true>);
    r.add("AveragePool", kFloatTypes, run_pool<false>);
    r.add("GlobalAveragePool", kFloatTypes, run_global_average_pool);
}

}  // namespace infer::cuda
