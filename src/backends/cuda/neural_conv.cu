// Conv and FusedConv (Conv + bias, + a residual Z, then Relu or Clip) on CUDA.
// - Depthwise 2-D convolutions (one filter per channel: MobileNet, EfficientNet) run a direct
//   kernel, one thread per output, with the whole epilogue in it: as a product they would be
//   thousands of cuBLAS calls of one row each.
// - Ungrouped convolutions unfold a chunk of images at a time (im2col; a 1x1 stride-1 kernel needs
//   none: the input is its own columns) and multiply the whole chunk in one strided-batched cuBLAS
//   product, the weights shared, each image's result written straight into its NCHW planes. One
//   product per image (as before) left the tensor cores idle on late layers' 7x7 planes and cost
//   a launch per image.
// - Grouped convolutions unfold one image at a time, a product batched over the groups.
// Then one epilogue pass adds the bias and Z and clamps, where there is any of them to apply.
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/gemm.hpp"
#include "backends/cuda/window.cuh"

#include "core/ops/fused_conv_activation.hpp"

#include <climits>

namespace infer::cuda {

namespace {

using detail::ConvActivation;

// The unfolded columns of a chunk of images stay under this (the workspace Conv asks for):
// big enough that a chunk is a product that fills the GPU, small beside its memory.
constexpr int64_t kColumnBytes = int64_t{128} << 20;

// col[(plane · K + k) · P + o] = x[plane, position of tap k for output o], zero in the padding;
// a plane is one channel of one image. Any number of spatial axes, 64-bit indices.
template <class T>
__global__ void im2col_kernel(const T* x, T* col, int64_t planes, Window w) {
    const int64_t n = planes * w.kernel_size * w.out_size;
    INFER_GRID_STRIDE(e, n) {
        const int64_t o = e % w.out_size;
        const int64_t row = e / w.out_size;
        const int64_t tap = row % w.kernel_size;
        const int64_t plane = row / w.kernel_size;
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
        col[e] = inside ? x[plane * w.in_size + offset] : T{};
    }
}

template <class T>
__global__ void im2col_2d_kernel(const T* x, T* col, uint32_t n, Window2d w) {
    for (uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += gridDim.x * blockDim.x) {
        const uint32_t row = w.by_positions.quotient(e);
        const uint32_t o = e - row * w.positions;
        const uint32_t plane = w.by_taps.quotient(row);
        const uint32_t tap = row - plane * w.taps;
        const uint32_t oh = w.by_out_w.quotient(o), ow = o - oh * w.out_w;
        const uint32_t kh = w.by_kernel_w.quotient(tap), kw = tap - kh * w.kernel_w;
        const int ih = static_cast<int>(oh) * w.stride_h - w.pad_top + static_cast<int>(kh) * w.dilation_h;
        const int iw = static_cast<int>(ow) * w.stride_w - w.pad_left + static_cast<int>(kw) * w.dilation_w;
        const bool inside = ih >= 0 && ih < w.in_h && iw >= 0 && iw < w.in_w;
        col[e] = inside ? x[static_cast<size_t>(plane) * w.in_h * w.in_w + ih * w.in_w + iw] : T{};
    }
}

// What follows the product: y = clamp(y + bias[channel] + z, low, high), z of y's layout. The clamp
// compares rather than calling fminf/fmaxf, which return the other operand for NaN: a NaN sum must
// stay NaN (an unclamped layer has low = -inf, and fmaxf(NaN, -inf) is -inf).
template <class T>
struct Epilogue {
    const T* bias;      // [channels] or null
    const T* residual;  // like y, or null
    float low, high;

    __device__ __forceinline__ float apply(float v, int64_t channel, int64_t i) const {
        if (bias) v += load_float(bias[channel]);
        if (residual) v += load_float(residual[i]);
        return v < low ? low : (v > high ? high : v);
    }
};

// One block per plane (image, channel): the channel is the block's, no division per element.
template <class T>
__global__ void conv_epilogue_kernel(T* y, int64_t channels, int64_t positions, Epilogue<T> e) {
    const int64_t plane = blockIdx.x;
    const int64_t channel = plane % channels;
    for (int64_t p = threadIdx.x; p < positions; p += blockDim.x) {
        const int64_t i = plane * positions + p;
        y[i] = store<T>(e.apply(load_float(y[i]), channel, i));
    }
}

// One thread per output of a depthwise 2-D convolution (weights [C, 1, kh, kw]), f32 sums.
template <class T>
__global__ void depthwise_2d_kernel(const T* x, const T* weights, T* y, uint32_t n, int channels, Window2d w,
                                    FastDivmod by_channels, Epilogue<T> e) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const uint32_t plane = w.by_positions.quotient(i);  // image · C + channel
        const uint32_t o = i - plane * w.positions;
        const uint32_t channel = plane - by_channels.quotient(plane) * channels;
        const uint32_t oh = w.by_out_w.quotient(o), ow = o - oh * w.out_w;
        const T* x_plane = x + static_cast<size_t>(plane) * w.in_h * w.in_w;
        const T* filter = weights + static_cast<size_t>(channel) * w.taps;
        float sum = 0.0f;
        for (int kh = 0; kh < w.kernel_h; ++kh) {
            const int ih = static_cast<int>(oh) * w.stride_h - w.pad_top + kh * w.dilation_h;
            if (ih < 0 || ih >= w.in_h) continue;
            for (int kw = 0; kw < w.kernel_w; ++kw) {
                const int iw = static_cast<int>(ow) * w.stride_w - w.pad_left + kw * w.dilation_w;
                if (iw >= 0 && iw < w.in_w)
                    sum += load_float(x_plane[ih * w.in_w + iw]) * load_float(filter[kh * w.kernel_w + kw]);
            }
        }
        y[i] = store<T>(e.apply(sum, channel, i));
    }
}

// How a node's convolution is carried out; the kernel and its workspace size agree through it.
struct ConvPlan {
    enum class Way { depthwise, chunked_images, image_by_image } way;
    bool pointwise;        // a 1×1 window, stride 1, no padding: x is its own im2col
    int64_t chunk_images;  // images unfolded together (chunked_images)
    size_t workspace;      // bytes of unfolded columns
};

ConvPlan plan_conv(const Window& w, int64_t batch, int64_t channels, int64_t out_channels, int64_t group,
                   int64_t weight_in_channels, size_t element_size) {
    if (w.out_size <= 0 || batch <= 0) return {ConvPlan::Way::chunked_images, true, 1, 0};  // nothing to compute
    bool pointwise = true;
    for (int d = 0; d < w.spatial; ++d)
        pointwise = pointwise && w.kernel[d] == 1 && w.stride[d] == 1 && w.pad_begin[d] == 0 && w.pad_end[d] == 0;
    if (group > 1 && group == channels && out_channels == channels && weight_in_channels == 1 &&
        Window2d::fits(w, batch * channels * w.out_size) && batch * channels * w.in_size < (int64_t{1} << 31))
        return {ConvPlan::Way::depthwise, false, 0, 0};
    const auto image_columns = static_cast<size_t>(channels * w.kernel_size * w.out_size) * element_size;
    if (group > 1) return {ConvPlan::Way::image_by_image, pointwise, 1, pointwise ? 0 : image_columns};
    if (pointwise) return {ConvPlan::Way::chunked_images, true, batch, 0};
    const int64_t chunk =
        std::clamp<int64_t>(kColumnBytes / static_cast<int64_t>(std::max<size_t>(image_columns, 1)), 1, batch);
    return {ConvPlan::Way::chunked_images, false, chunk, static_cast<size_t>(chunk) * image_columns};
}

template <class T>
void unfold(const Launch& l, const T* x, T* col, int64_t planes, const Window& w) {
    const int64_t n = planes * w.kernel_size * w.out_size;
    if (Window2d::fits(w, n)) {
        im2col_2d_kernel<<<grid_for(n), kBlock, 0, l.handle()>>>(x, col, static_cast<uint32_t>(n), Window2d(w));
        l.check_launch("im2col_2d_kernel");
    } else {
        im2col_kernel<<<grid_for(n), kBlock, 0, l.handle()>>>(x, col, planes, w);
        l.check_launch("im2col_kernel");
    }
}

void run_conv(const Launch& l) {
    const Tensor& x = l.ctx.input(0);
    const Tensor& weights = l.ctx.input(1);
    if (weights.dtype() != x.dtype()) l.unsupported("weights " + weights.describe());
    for (size_t i = 2; i < 4; ++i)
        if (l.ctx.has_input(i) && l.ctx.input(i).dtype() != x.dtype())
            l.unsupported("input " + std::to_string(i) + " " + l.ctx.input(i).describe());
    const std::vector<int64_t>& wd = weights.shape().dims();
    const Window w = make_window(l, x.shape(), std::vector<int64_t>(wd.begin() + 2, wd.end()));
    const int64_t group = l.ctx.attrs().get_int("group", 1);
    const int64_t batch = x.shape()[0], channels = x.shape()[1];
    const int64_t out_channels = wd[0];
    const int64_t group_channels = channels / group, group_out = out_channels / group;
    const int64_t rows = group_channels * w.kernel_size;  // the product's inner dimension
    const size_t element_size = dtype_size(x.dtype());
    const ConvPlan plan = plan_conv(w, batch, channels, out_channels, group, wd[1], element_size);
    const ConvActivation activation = ConvActivation::of(l.ctx.attrs());
    if (l.ctx.output(0).numel() == 0) return;

    void* col = plan.workspace ? l.ctx.workspace(plan.workspace) : nullptr;
    const char* input = static_cast<const char*>(l.in(0));
    char* output = static_cast<char*>(l.out(0));
    dispatch_float(x.dtype(), l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const Epilogue<T> epilogue{l.ctx.has_input(2) ? static_cast<const T*>(l.in(2)) : nullptr,
                                   l.ctx.has_input(3) ? static_cast<const T*>(l.in(3)) : nullptr, activation.low,
                                   activation.high};
        if (plan.way == ConvPlan::Way::depthwise) {
            const int64_t n = l.ctx.output(0).numel();
            depthwise_2d_kernel<<<grid_for(n), kBlock, 0, l.handle()>>>(
                static_cast<const T*>(l.in(0)), static_cast<const T*>(l.in(1)), static_cast<T*>(l.out(0)),
                static_cast<uint32_t>(n), static_cast<int>(channels), Window2d(w),
                FastDivmod(static_cast<uint32_t>(channels)), epilogue);
            l.check_launch("depthwise_2d_kernel");
            return;
        }
        const int64_t image_in = channels * w.in_size, image_out = out_channels * w.out_size;
        if (plan.way == ConvPlan::Way::chunked_images) {
            for (int64_t first = 0; first < batch; first += plan.chunk_images) {
                const int64_t images = std::min(plan.chunk_images, batch - first);
                const char* x_chunk = input + first * image_in * element_size;
                const void* columns = x_chunk;
                if (!plan.pointwise) {
                    unfold(l, reinterpret_cast<const T*>(x_chunk), static_cast<T*>(col), images * channels, w);
                    columns = col;
                }
                gemm_row_major(l, x.dtype(), out_channels, w.out_size, rows, 1.0f, {l.in(1), rows, 0},
                               {columns, w.out_size, rows * w.out_size}, 0.0f,
                               output + first * image_out * element_size, w.out_size, image_out, images);
            }
        } else {
            for (int64_t image = 0; image < batch; ++image) {
                const char* x_image = input + image * image_in * element_size;
                const void* columns = x_image;
                if (!plan.pointwise) {
                    unfold(l, reinterpret_cast<const T*>(x_image), static_cast<T*>(col), channels, w);
                    columns = col;
                }
                gemm_row_major(l, x.dtype(), group_out, w.out_size, rows, 1.0f,
                               {l.in(1), rows, group_out * rows}, {columns, w.out_size, rows * w.out_size}, 0.0f,
                               output + image * image_out * element_size, w.out_size, group_out * w.out_size, group);
            }
        }
        if (epilogue.bias || epilogue.residual || activation.clamps()) {
            const int64_t planes = batch * out_channels;
            if (planes > INT_MAX) l.unsupported("more than 2^31 output planes");
            const int block = static_cast<int>(std::min<int64_t>(kBlock, (w.out_size + 31) / 32 * 32));
            conv_epilogue_kernel<<<static_cast<unsigned>(planes), block, 0, l.handle()>>>(
                static_cast<T*>(l.out(0)), out_channels, w.out_size, epilogue);
            l.check_launch("conv_epilogue_kernel");
        }
    });
}

// Workspace: the unfolded columns plan_conv chooses for the node's shapes and attributes.
size_t conv_columns(const NodeSignature& node) {
    if (node.input_shapes.size() < 2) return 0;
    const auto& x = node.input_shapes[0].dims();
    const auto& wd = node.input_shapes[1].dims();
    if (x.size() < 3 || x.size() > 2 + kMaxSpatial || wd.size() != x.size()) return 0;
    const Attributes& attrs = *node.attributes;
    const Window w = window_from(attrs, std::vector<int64_t>(x.begin() + 2, x.end()),
                                 std::vector<int64_t>(wd.begin() + 2, wd.end()));
    return plan_conv(w, x[0], x[1], wd[0], attrs.get_int("group", 1), wd[1], dtype_size(node.input_dtypes[0]))
        .workspace;
}

}  // namespace

void register_conv_kernels(KernelRegistrar& r) {
    r.add("Conv", kFloatTypes, run_conv, conv_columns);
    r.add("FusedConv", kFloatTypes, run_conv, conv_columns);
}

}  // namespace infer::cuda
