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

int64_t product(const std::vector<int64_t>& dims, size_t from) {
    int64_t n = 1;
    for (size_t d = from; d < dims.size(); ++d) n *= dims[d];
    return n;
}

// Workspace: Conv's im2col columns for one image: channels × window size × output positions.
size_t conv_columns(const NodeSignature& node) {
    if (node.input_shapes.size() < 2) return 0;
    const auto& x = node.input_shapes[0].dims();
    const auto& w = node.input_shapes[1].dims();
    if (x.size() < 3 || w.size() != x.size()) return 0;
    const size_t spatial = x.size() - 2;
    const Attributes& attrs = *node.attributes;
    const auto strides = attrs.get_ints("strides", std::vector<int64_t>(spatial, 1));
    const auto dilations = attrs.get_ints("dilations", std::vector<int64_t>(spatial, 1));
    const auto pads = attrs.get_ints("pads", std::vector<int64_t>(2 * spatial, 0));
    const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
    bool pointwise = true;
    int64_t out_size = 1;
    for (size_t d = 0; d < spatial; ++d) {
        const int64_t in = x[d + 2], k = w[d + 2];
        const int64_t stride = d < strides.size() ? strides[d] : 1;
        const int64_t dilation = d < dilations.size() ? dilations[d] : 1;
        const int64_t pad = (d < pads.size() ? pads[d] : 0) + (d + spatial < pads.size() ? pads[d + spatial] : 0);
        int64_t out = 0;
        if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") out = (in + stride - 1) / std::max<int64_t>(stride, 1);
        else out = (in + pad - dilation * (k - 1) - 1) / std::max<int64_t>(stride, 1) + 1;
        out_size *= std::max<int64_t>(out, 0);
        pointwise = pointwise && k == 1 && stride == 1 && pad == 0 && auto_pad == "NOTSET";
    }
    if (pointwise) return 0;
    return static_cast<size_t>(x[1] * product(w, 2) * out_size) * dtype_size(node.input_dtypes[0]);
}

}  // namespace

void register_conv_kernels(KernelRegistrar& r) { r.add("Conv", kFloatTypes, run_conv, conv_columns); }

}  // namespace infer::cuda
