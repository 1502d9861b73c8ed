// MaxPool, AveragePool (one thread per output, looping over its window; 2-D windows on a
// 32-bit fast path) and GlobalAveragePool (a mean over the spatial axes).
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

// The same over 2-D windows with 32-bit indices and no divisions per tap (Window2d): the
// general kernel's 64-bit divisions made ResNet-50's one max pool at batch 64 take 0.86 ms.
template <class T, bool kMax>
__global__ void pool_2d_kernel(const T* x, T* y, int64_t* indices, bool column_major, uint32_t n, Window2d w,
                               bool count_include_pad) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const uint32_t plane = w.by_positions.quotient(i);
        const uint32_t o = i - plane * w.positions;
        const uint32_t oh = w.by_out_w.quotient(o), ow = o - oh * w.out_w;
        const size_t base = static_cast<size_t>(plane) * w.in_h * w.in_w;
        const T* x_plane = x + base;
        float acc = kMax ? MaxOp::identity : 0.0f;
        int count = 0;
        int64_t best_at = -1;
        for (int kh = 0; kh < w.kernel_h; ++kh) {
            const int ih = static_cast<int>(oh) * w.stride_h - w.pad_top + kh * w.dilation_h;
            const bool row_inside = ih >= 0 && ih < w.in_h;
            const bool row_padded = ih >= -w.pad_top && ih < w.in_h + w.pad_bottom;
            for (int kw = 0; kw < w.kernel_w; ++kw) {
                const int iw = static_cast<int>(ow) * w.stride_w - w.pad_left + kw * w.dilation_w;
                const bool inside = row_inside && iw >= 0 && iw < w.in_w;
                if (inside) {
                    const float v = load_float(x_plane[ih * w.in_w + iw]);
                    if (kMax && (best_at < 0 || (acc == acc && (v > acc || v != v))))
                        best_at = static_cast<int64_t>(base) + (column_major ? ih + static_cast<int64_t>(iw) * w.in_h
                                                                             : static_cast<int64_t>(ih) * w.in_w + iw);
                    acc = kMax ? MaxOp{}(acc, v) : acc + v;
                }
                if (count_include_pad ? row_padded && iw >= -w.pad_left && iw < w.in_w + w.pad_right : inside) ++count;
            }
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
        const bool column_major = l.ctx.attrs().get_int("storage_order", 0) != 0;
        const int64_t n = planes * w.out_size;
        if (Window2d::fits(w, n) && planes * w.in_size < (int64_t{1} << 31)) {
            pool_2d_kernel<T, kMax><<<grid_for(n), kBlock, 0, l.handle()>>>(
                static_cast<const T*>(l.in(0)), static_cast<T*>(l.out(0)), indices, column_major,
                static_cast<uint32_t>(n), Window2d(w), count_include_pad);
            l.check_launch("pool_2d_kernel");
            return;
        }
        pool_kernel<T, kMax><<<grid_for(planes * w.out_size), kBlock, 0, l.handle()>>>(
            static_cast<const T*>(l.in(0)), static_cast<T*>(l.out(0)), indices, column_major, planes, w, count_include_pad);
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
