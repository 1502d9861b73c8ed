// Conv over [N, C, spatial...] with any number of spatial axes: im2col into the workspace, then
// one product per image and group (packed_float_gemm.hpp's f32 kernel, the bias added per tile;
// or sgemm, then the bias per output channel). Depthwise 1-D and 2-D
// convolutions, where that GEMM would have a single row, are summed directly instead.
#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "core/ops/shapes_neural.hpp"


#include <algorithm>
#include <cstring>

namespace infer::cpu {

namespace {

struct SpatialAxis {
    int64_t in, kernel, stride, dilation, pad_begin, out;
};

struct ConvGeometry {
    int64_t channels;               // input channels per group
    std::vector<SpatialAxis> axes;  // at least two: 1-D convolutions get a leading unit axis
    int64_t input_size = 1, taps = 1, positions = 1;  // products over the axes
};

ConvGeometry conv_geometry(const KernelContext& ctx, const Shape& x, const Shape& w,
                           int64_t group) {
    const size_t spatial = x.rank() - 2;
    const std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
    const detail::WindowParams p = detail::read_window_params(ctx.attrs(), spatial, kernel);
    if (p.kernel != kernel)
        invalid_argument(ctx, "kernel_shape differs from the weights' " + w.to_string());
    const std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
    const std::vector<detail::WindowGeometry> geometry = detail::window_geometry(p, in);
    ConvGeometry g;
    g.channels = x[1] / group;
    if (spatial == 1) g.axes.push_back({1, 1, 1, 1, 0, 1});
    for (size_t i = 0; i < spatial; ++i)
        g.axes.push_back({in[i], kernel[i], p.strides[i], p.dilations[i], geometry[i].pad_begin,
                          geometry[i].out});
    for (const SpatialAxis& a : g.axes) {
        g.input_size *= a.in;
        g.taps *= a.kernel;
        g.positions *= a.out;
    }
    return g;
}

// Unfolds one group of one image into columns: row (c, tap) holds, for every output position,
// the input element under that kernel tap of channel c (0 in the padding). Output positions
// are walked a line (the last axis) at a time.
void im2col(const float* x, const ConvGeometry& g, float* col) {
    const size_t rank = g.axes.size();
    const SpatialAxis& last = g.axes.back();
    parallel_for(g.channels * g.taps, grain_for(g.positions), [&](int64_t begin, int64_t end) {
        std::vector<int64_t> tap(rank), line(rank - 1);
        for (int64_t row = begin; row < end; ++row) {
            for (size_t d = rank, rest = static_cast<size_t>(row % g.taps); d-- > 0;) {
                tap[d] = static_cast<int64_t>(rest) % g.axes[d].kernel;
                rest /= static_cast<size_t>(g.axes[d].kernel);
            }
            const float* plane = x + row / g.taps * g.input_size;
            const int64_t shift = tap[rank - 1] * last.dilation - last.pad_begin;
            // Output positions [first, end) of a line read inside the input line.
            const int64_t first = std::clamp<int64_t>((last.stride - 1 - shift) / last.stride, 0, last.out);
            const int64_t end = std::clamp<int64_t>((last.in - shift + last.stride - 1) / last.stride, first, last.out);
            float* dst = col + row * g.positions;
            std::fill(line.begin(), line.end(), 0);
            for (int64_t start = 0; start < g.positions; start += last.out, dst += last.out) {
                int64_t offset = 0;  // of the input line, in lines
                bool inside = true;
                for (size_t d = 0; d + 1 < rank; ++d) {
                    const SpatialAxis& a = g.axes[d];
                    const int64_t i = line[d] * a.stride - a.pad_begin + tap[d] * a.dilation;
                    inside = inside && i >= 0 && i < a.in;
                    offset = offset * a.in + i;
                }
                if (inside) {
                    // Zeros where the tap reads the padding, a copy (strided or not) between.
                    const float* src = plane + offset * last.in + shift;
                    std::fill(dst, dst + first, 0.0f);
                    if (last.stride == 1)
                        std::copy(src + first, src + end, dst + first);
                    else
                        for (int64_t o = first; o < end; ++o) dst[o] = src[o * last.stride];
                    std::fill(dst + end, dst + last.out, 0.0f);
                } else {
                    std::fill(dst, dst + last.out, 0.0f);
                }
                for (size_t d = rank - 1; d-- > 0;) {
                    if (++line[d] < g.axes[d].out) break;
                    line[d] = 0;
                }
            }
        }
    });
}

// Depthwise 2-D convolution (one input channel per group). Planes run over (image, output
// channel); `multiplier` output channels share an input channel.
void depthwise(const float* x, const float* w, const ConvGeometry& g, int64_t images,
               int64_t out_channels, int64_t multiplier, float* y) {
    const SpatialAxis& h = g.axes[0];
    const SpatialAxis& v = g.axes[1];
    const int64_t planes = images * out_channels;
    parallel_for(planes, grain_for(g.positions * g.taps), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const float* in = x + p / multiplier * g.input_size;
            const float* kernel = w + p % out_channels * g.taps;
            float* out = y + p * g.positions;
            std::fill(out, out + g.positions, 0.0f);
            for (int64_t ki = 0; ki < h.kernel; ++ki) {
                for (int64_t kj = 0; kj < v.kernel; ++kj) {
                    const float tap = kernel[ki * v.kernel + kj];
                    const int64_t shift = kj * v.dilation - v.pad_begin;
                    // Output columns [first, last) read input columns inside the row.
                    const int64_t first =
                        std::clamp<int64_t>((v.stride - 1 - shift) / v.stride, 0, v.out);
                    const int64_t last =
                        std::clamp<int64_t>((v.in - shift + v.stride - 1) / v.stride, first, v.out);
                    for (int64_t oh = 0; oh < h.out; ++oh) {
                        const int64_t ih = oh * h.stride - h.pad_begin + ki * h.dilation;
                        if (ih < 0 || ih >= h.in) continue;
                        const float* row = in + ih * v.in;
                        float* dst = out + oh * v.out;
                        for (int64_t ow = first; ow < last; ++ow)
                            dst[ow] += tap * row[ow * v.stride + shift];
                    }
                }
            }
        }
    });
}

// The product's tiles into Y's planes (rows are output channels), with each channel's bias.
struct ChannelBiasWriter {
    float* y;
    int64_t positions;
    const float* bias;  // per output channel of this group, or null

    static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc, int64_t ld) {
        const auto& w = *static_cast<const ChannelBiasWriter*>(self);
        for (int64_t r = 0; r < rows; ++r) {
            const float b = w.bias ? w.bias[row0 + r] : 0.0f;
            float* out = w.y + (row0 + r) * w.positions + col0;
            const float* from = acc + r * ld;
            for (int64_t c = 0; c < cols; ++c) out[c] = from[c] + b;
        }
    }
};

// One product per image and group: weights [M/group, C/group * taps] x columns, on our own f32
// kernel (the columns read in place, each output channel's bias added per tile) where the CPU
// has one, else sgemm. Returns whether the bias was added.
bool grouped_gemm(const KernelContext& ctx, const float* x, const float* w, const float* bias, const ConvGeometry& g,
                  int64_t images, int64_t out_channels, int64_t group, float* y) {
    const int64_t group_out = out_channels / group, rows = g.channels * g.taps;
    // A 1x1 kernel without stride or padding reads the input as it is laid out.
    const bool direct = std::all_of(g.axes.begin(), g.axes.end(), [](const SpatialAxis& a) {
        return a.kernel == 1 && a.stride == 1 && a.pad_begin == 0 && a.out == a.in;
    });
    auto* col =
        direct ? nullptr : static_cast<float*>(ctx.workspace(sizeof(float) * rows * g.positions));
    const FloatGemmKernel kernel = f32_gemm_kernel();
    const PackedFloatLayout layout = packed_float_layout(kernel, rows, g.positions);
    for (int64_t n = 0; n < images; ++n) {
        for (int64_t k = 0; k < group; ++k) {
            const float* in = x + (n * group + k) * g.channels * g.input_size;
            if (!direct) im2col(in, g, col);
            float* out = y + (n * out_channels + k * group_out) * g.positions;
            if (kernel == FloatGemmKernel::blas) {
                sgemm(false, false, group_out, g.positions, rows, 1.0f, w + k * group_out * rows, rows,
                      direct ? in : col, g.positions, 0.0f, out, g.positions);
                continue;
            }
            ChannelBiasWriter writer{out, g.positions, bias ? bias + k * group_out : nullptr};
            gemm_packed_float(layout, direct ? in : col, w + k * group_out * rows, rows, group_out,
                              &ChannelBiasWriter::tile, &writer);
        }
    }
    return kernel != FloatGemmKernel::blas;
}

void conv_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    Tensor& y = ctx.output(0);
    require_same_dtype(ctx, 0, 1);
    const int64_t group = ctx.attrs().get_int("group", 1);
    const ConvGeometry g = conv_geometry(ctx, x.shape(), w.shape(), group);
    const int64_t images = x.shape()[0], out_channels = w.shape()[0];
    float* py = y.data<float>();
    if (y.numel() == 0) return;
    if (g.channels == 0)
        std::memset(py, 0, y.nbytes());  // no taps: sgemm would leave the output unwritten
    else if (g.channels == 1 && group > 1 && g.axes.size() == 2)
        depthwise(x.data<float>(), w.data<float>(), g, images, out_channels, out_channels / group,
                  py);
    else if (grouped_gemm(ctx, x.data<float>(), w.data<float>(), ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr,
                          g, images, out_channels, group, py))
        return;
    if (!ctx.has_input(2)) return;
    const float* bias = ctx.input(2).data<float>();
    parallel_for(images * out_channels, grain_for(g.positions), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const float b = bias[p % out_channels];
            float* plane = py + p * g.positions;
            for (int64_t i = 0; i < g.positions; ++i) plane[i] += b;
        }
    });
}

}  // namespace

void register_conv_kernels(KernelRegistry& r) { add_floating(r, "Conv", conv_kernel); }

}  // namespace infer::cpu
