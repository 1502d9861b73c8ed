// ConvInteger and QLinearConv: a direct N-D convolution over u8/i8 data widened to i32, less
// zero points (the weights' may be per output channel), with i32 accumulation. QLinearConv adds
// its i32 bias and requantizes with x_scale * w_scale[m] / y_scale.
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "core/ops/shapes_neural.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace infer::cpu {

namespace {

// QLinear ops read their scales as f32.
void require_f32_scales(const KernelContext& ctx) {
    for (size_t i : {1, 4, 6})
        if (ctx.input(i).dtype() != DType::f32)
            unsupported(ctx, "scale of dtype " + std::string(dtype_name(ctx.input(i).dtype())));
}

int32_t element(const KernelContext& ctx, const Tensor& t, int64_t i) {
    switch (t.dtype()) {
        case DType::u8: return t.data<uint8_t>()[i];
        case DType::i8: return t.data<int8_t>()[i];
        case DType::i32: return t.data<int32_t>()[i];
        default: unsupported(ctx, "operand dtype " + std::string(dtype_name(t.dtype())));
    }
}

// `data` less its zero point; `per` elements share one zero point entry (when it has several).
std::vector<int32_t> widen(const KernelContext& ctx, size_t input, size_t zero_input, int64_t per) {
    const Tensor& t = ctx.input(input);
    std::vector<int32_t> out(static_cast<size_t>(t.numel()));
    const Tensor* zero = ctx.has_input(zero_input) ? &ctx.input(zero_input) : nullptr;
    if (zero && zero->dtype() != t.dtype()) invalid_argument(ctx, "zero point and operand differ in dtype");
    for (int64_t i = 0, count = t.numel(); i < count; ++i)
        out[static_cast<size_t>(i)] =
            element(ctx, t, i) - (zero ? element(ctx, *zero, zero->numel() == 1 ? 0 : i / per) : 0);
    return out;
}

struct Axis {
    int64_t in, kernel, stride, dilation, pad_begin, out;
};

// acc[n, m, out positions] = sum over the group's channels and taps of x * w.
std::vector<int32_t> integer_conv(const KernelContext& ctx, const Tensor& x, const Tensor& w,
                                  const std::vector<int32_t>& xv, const std::vector<int32_t>& wv) {
    const auto& xd = x.shape().dims();
    const auto& wd = w.shape().dims();
    const size_t spatial = xd.size() - 2;
    const int64_t group = ctx.attrs().get_int("group", 1);
    const detail::WindowParams p = detail::read_window_params(ctx.attrs(), spatial, {wd.begin() + 2, wd.end()});
    const auto geometry = detail::window_geometry(p, {xd.begin() + 2, xd.end()});
    std::vector<Axis> axes;
    int64_t in_size = 1, taps = 1, positions = 1;
    for (size_t i = 0; i < spatial; ++i) {
        axes.push_back({xd[i + 2], wd[i + 2], p.strides[i], p.dilations[i], geometry[i].pad_begin, geometry[i].out});
        in_size *= xd[i + 2];
        taps *= wd[i + 2];
        positions *= geometry[i].out;
    }
    const int64_t images = xd[0], channels = xd[1], out_channels = wd[0];
    const int64_t group_in = channels / group, group_out = out_channels / group;
    std::vector<int32_t> acc(static_cast<size_t>(images * out_channels * positions), 0);
    parallel_for(images * out_channels, 1, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> at(spatial), tap(spatial);
        for (int64_t plane = begin; plane < end; ++plane) {
            const int64_t n = plane / out_channels, m = plane % out_channels, g = m / group_out;
            std::fill(at.begin(), at.end(), 0);
            for (int64_t o = 0; o < positions; ++o) {
                int32_t sum = 0;
                for (int64_t t = 0; t < taps; ++t) {
                    int64_t offset = 0;
                    bool inside = true;
                    for (size_t d = spatial, rest = static_cast<size_t>(t); d-- > 0;) {
                        tap[d] = static_cast<int64_t>(rest) % axes[d].kernel;
                        rest /= static_cast<size_t>(axes[d].kernel);
                    }
                    for (size_t d = 0; d < spatial; ++d) {
                        const Axis& a = axes[d];
                        const int64_t i = at[d] * a.stride - a.pad_begin + tap[d] * a.dilation;
                        inside = inside && i >= 0 && i < a.in;
                        offset = offset * a.in + i;
                    }
                    if (!inside) continue;
                    for (int64_t c = 0; c < group_in; ++c)
                        sum += xv[static_cast<size_t>((n * channels + g * group_in + c) * in_size + offset)] *
                               wv[static_cast<size_t>((m * group_in + c) * taps + t)];
                }
                acc[static_cast<size_t>(plane * positions + o)] = sum;
                for (size_t d = spatial; d-- > 0;) {
                    if (++at[d] < axes[d].out) break;
                    at[d] = 0;
                }
            }
        }
    });
    return acc;
}

void conv_integer_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const int64_t per_channel = w.numel() / std::max<int64_t>(w.shape()[0], 1);
    const std::vector<int32_t> acc =
        integer_conv(ctx, x, w, widen(ctx, 0, 2, x.numel()), widen(ctx, 1, 3, per_channel));
    std::copy(acc.begin(), acc.end(), ctx.output(0).data<int32_t>());
}

template <class Q>
void requantize(const KernelContext& ctx, const std::vector<int32_t>& acc, int64_t out_channels, Tensor& y) {
    const float x_scale = ctx.input(1).data<float>()[0], y_scale = ctx.input(6).data<float>()[0];
    const Tensor& w_scale = ctx.input(4);
    const int32_t zero = ctx.input(7).data<Q>()[0];
    const int32_t* bias = ctx.has_input(8) ? ctx.input(8).data<int32_t>() : nullptr;
    const int64_t positions = static_cast<int64_t>(acc.size()) / std::max<int64_t>(y.shape()[0] * out_channels, 1);
    Q* py = y.data<Q>();
    for (size_t i = 0; i < acc.size(); ++i) {
        const int64_t m = static_cast<int64_t>(i) / positions % out_channels;
        const double scale = double(x_scale) * w_scale.data<float>()[w_scale.numel() == 1 ? 0 : m] / y_scale;
        const double v = std::nearbyint((acc[i] + (bias ? bias[m] : 0)) * scale) + zero;
        py[i] = static_cast<Q>(std::clamp(v, double(std::numeric_limits<Q>::min()), double(std::numeric_limits<Q>::max())));
    }
}

void qlinear_conv_kernel(KernelContext& ctx) {
    require_f32_scales(ctx);
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(3);
    if (ctx.input(1).numel() != 1 || ctx.input(6).numel() != 1) unsupported(ctx, "per-axis x or y scales");
    const int64_t per_channel = w.numel() / std::max<int64_t>(w.shape()[0], 1);
    const std::vector<int32_t> acc =
        integer_conv(ctx, x, w, widen(ctx, 0, 2, x.numel()), widen(ctx, 3, 5, per_channel));
    Tensor& y = ctx.output(0);
    if (y.dtype() == DType::u8) requantize<uint8_t>(ctx, acc, w.shape()[0], y);
    else if (y.dtype() == DType::i8) requantize<int8_t>(ctx, acc, w.shape()[0], y);
    else unsupported(ctx, "output dtype " + std::string(dtype_name(y.dtype())));
}

}  // namespace

void register_integer_conv_kernels(KernelRegistry& r) {
    r.add("ConvInteger", {DType::u8, DType::i8}, conv_integer_kernel);
    r.add("QLinearConv", {DType::u8, DType::i8}, qlinear_conv_kernel);
}

}  // namespace infer::cpu
