// MaxPool, AveragePool (1-D and 2-D windows) and GlobalAveragePool over [N, C, spatial...].
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "core/ops/shapes_neural.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace infer::cpu {

namespace {

// One spatial axis of a pooling window; 1-D pools get a trivial height axis.
struct PoolAxis {
    int64_t in, kernel, stride, dilation, pad_begin, pad_end, out;
};

std::pair<PoolAxis, PoolAxis> pool_axes(const KernelContext& ctx, const Shape& x) {
    const size_t spatial = x.rank() - 2;
    if (spatial != 1 && spatial != 2)
        unsupported(ctx, std::to_string(spatial) + "-D pooling (only 1-D and 2-D)");
    const detail::WindowParams p = detail::read_window_params(ctx.attrs(), spatial, {});
    const std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
    const std::vector<detail::WindowGeometry> g = detail::window_geometry(p, in);
    const auto axis = [&](size_t i) {
        return PoolAxis{in[i],          p.kernel[i],  p.strides[i], p.dilations[i],
                        g[i].pad_begin, g[i].pad_end, g[i].out};
    };
    const PoolAxis unit{1, 1, 1, 1, 0, 0, 1};
    return spatial == 1 ? std::pair{unit, axis(0)} : std::pair{axis(0), axis(1)};
}

// Window taps [first, last) of output `o` that fall inside the input, and the number of taps
// inside the padded input (what count_include_pad divides by).
struct Taps {
    int64_t first, last, padded;
};
Taps taps(const PoolAxis& a, int64_t o) {
    const int64_t start = o * a.stride - a.pad_begin;
    const auto position = [&](int64_t k) { return start + k * a.dilation; };
    Taps t{0, a.kernel, 0};
    while (t.first < a.kernel && position(t.first) < 0) ++t.first;
    while (t.last > t.first && position(t.last - 1) >= a.in) --t.last;
    for (int64_t k = 0; k < a.kernel; ++k)
        if (position(k) >= -a.pad_begin && position(k) < a.in + a.pad_end) ++t.padded;
    return t;
}

template <bool kMax>
void pool_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    // Plain variables, not a structured binding: clang before 16 cannot capture bindings.
    const std::pair<PoolAxis, PoolAxis> axes = pool_axes(ctx, x.shape());
    const PoolAxis& h = axes.first;
    const PoolAxis& w = axes.second;
    const bool include_pad = ctx.attrs().get_int("count_include_pad", 0) != 0;
    const float* px = x.data<float>();
    float* py = y.data<float>();
    const int64_t planes = x.shape()[0] * x.shape()[1];
    // Every plane shares the window bounds, so they are worked out once.
    auto* bounds = static_cast<Taps*>(ctx.workspace(sizeof(Taps) * (h.out + w.out)));
    Taps* rows = bounds;
    Taps* columns = bounds + h.out;
    for (int64_t o = 0; o < h.out; ++o) rows[o] = taps(h, o);
    for (int64_t o = 0; o < w.out; ++o) columns[o] = taps(w, o);
    const int64_t work = h.out * w.out * h.kernel * w.kernel;
    parallel_for(planes, grain_for(work), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const float* in = px + p * h.in * w.in;
            float* out = py + p * h.out * w.out;
            for (int64_t oh = 0; oh < h.out; ++oh) {
                const Taps th = rows[oh];
                const int64_t ih0 = oh * h.stride - h.pad_begin;
                for (int64_t ow = 0; ow < w.out; ++ow) {
                    const Taps tw = columns[ow];
                    const int64_t iw0 = ow * w.stride - w.pad_begin;
                    float acc = kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
                    for (int64_t ki = th.first; ki < th.last; ++ki) {
                        const float* row = in + (ih0 + ki * h.dilation) * w.in;
                        for (int64_t kj = tw.first; kj < tw.last; ++kj) {
                            const float v = row[iw0 + kj * w.dilation];
                            acc = kMax ? (v > acc || std::isnan(v) ? v : acc) : acc + v;
                        }
                    }
                    if constexpr (!kMax) {
                        const int64_t count = include_pad
                                                  ? th.padded * tw.padded
                                                  : (th.last - th.first) * (tw.last - tw.first);
                        acc /= static_cast<float>(count);
                    }
                    out[oh * w.out + ow] = acc;
                }
            }
        }
    });
}

void global_average_pool_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t>& dims = x.shape().dims();
    const int64_t planes = dims[0] * dims[1], size = product(dims, 2, dims.size());
    const float* px = x.data<float>();
    float* py = ctx.output(0).data<float>();
    parallel_for(planes, grain_for(size), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            double sum = 0;
            for (int64_t i = 0; i < size; ++i) sum += px[p * size + i];
            py[p] = static_cast<float>(sum / static_cast<double>(size));
        }
    });
}

}  // namespace

void register_pool_kernels(KernelRegistry& r) {
    add_floating(r, "MaxPool", pool_kernel<true>);
    add_floating(r, "AveragePool", pool_kernel<false>);
    add_floating(r, "GlobalAveragePool", global_average_pool_kernel);
}

}  // namespace infer::cpu
