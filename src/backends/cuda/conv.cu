// Conv as im2col + one cuBLAS product per image (batched over groups), then the bias.
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/gemm.hpp"
#include "backends/cuda/window.cuh"

namespace infer::cuda {

namespace {

// col[c · K + k, o] = x[c, position of kernel tap k for output o], zero in the padding.
template <class T>
__global__ void im2col_kernel(const T* x, T* col, int64_t channels, Window w) {
    const int64_t n = channels * w.kernel_size * w.out_size;
    INFER_GRID_STRIDE(e, n) {
        const int64_t o = e % w.out_size;
        const int64_t row = e / w.out_size;
        const int64_t tap = row % w.kernel_size;
        const int64_t c = row / w.kernel_size;
        int64_t out[kMaxSpatial], k[kMaxSpatial];
        unflatten(o, w.out, w.spatial, out);
        unflatten(tap, w.kernel, w.spatial, k);
        int64_t offset = 0;
        bool inside = true;
        for (int d = 0; d < w.spatial; ++d) {
            const int64_t p = out[d] * w.stride[d] - w.pad_begin[d] + k[d] * w.dilation[d];
            inside = inside && p >= 0 && p < w.in[d];
            offset = offset * w.in[d] + p;
        }
        col[e] = inside ? x[c * w.in_size + offset] : T{};
    }
}

template <class T>
__global__ void add_channel_bias_kernel(T* y, const T* bias, int64_t n, int64_t channels,
                                        int64_t inner) {
    INFER_GRID_STRIDE(i, n) {
        const int64_t c = (i / inner) % channels;
        y[i] = store<T>(static_cast<Compute<T>>(load_float(y[i]) + load_float(bias[c])));
    }
}

void run_conv(const Launch& l) {
    const Tensor& x = l.ctx.input(0);
    const Tensor& weights = l.ctx.input(1);
    if (weights.dtype() != x.dtype()) l.unsupported("weights " + weights.describe());
    const std::vector<int64_t>& wd = weights.shape().dims();
    const Window w = make_window(l, x.shape(), std::vector<int64_t>(wd.begin() + 2, wd.end()));
    const int64_t group = l.ctx.attrs().get_int("group", 1);
    const int64_t batch = x.shape()[0], channels = x.shape()[1];
    const int64_t out_channels = wd[0];
    const int64_t group_channels = channels / group, group_out = out_channels / group;
    const int64_t rows = group_channels * w.kernel_size;  // the product's inner dimension
    const size_t element_size = dtype_size(x.dtype());

    bool pointwise = true;  // a 1×1 window, stride 1, no padding: x is already its own im2col
    for (int d = 0; d < w.spatial; ++d)
        pointwise = pointwise && w.kernel[d] == 1 && w.stride[d] == 1 && w.pad_begin[d] == 0 &&
                    w.pad_end[d] == 0;
    void* col = pointwise ? nullptr
                          : l.ctx.workspace(static_cast<size_t>(channels * w.kernel_size * w.out_size) *
                                            element_size);
    const char* input = static_cast<const char*>(l.in(0));
    char* output = static_cast<char*>(l.out(0));
    dispatch_float(x.dtype(), l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (int64_t image = 0; image < batch; ++image) {
            const char* x_image = input + image * channels * w.in_size * element_size;
            const void* columns = x_image;
            if (!pointwise) {
                im2col_kernel<<<grid_for(channels * w.kernel_size * w.out_size), kBlock, 0,
                                l.handle()>>>(reinterpret_cast<const T*>(x_image),
                                              static_cast<T*>(col), channels, w);
                l.check_launch("im2col_kernel");
                columns = col;
            }
            gemm_row_major(l, x.dtype(), group_out, w.out_size, rows, 1.0f,
                           {l.in(1), rows, group_out * rows}, {columns, w.out_size, rows * w.out_size},
                           0.0f, output + image * out_channels * w.out_size * element_size,
                           w.out_size, group_out * w.out_size, group);
        }
        if (l.ctx.has_input(2)) {
            const int64_t n = l.ctx.output(0).numel();
            add_channel_bias_kernel<<<grid_for(n), kBlock, 0, l.handle()>>>(
                static_cast<T*>(l.out(0)), static_cast<const T*>(l.in(2)), n, out_channels,
                w.out_size);
            l.check_launch("add_channel_bias_kernel");
        }
    });
}

}  // namespace

void register_conv_kernels(KernelRegistrar& r) { r.add("Conv", kFloatTypes, run_conv); }

}  // namespace infer::cuda
