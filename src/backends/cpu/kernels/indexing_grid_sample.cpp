// GridSample over [N, C, H, W]: each output pixel reads X at the point its grid entry (x, y in
// [-1, 1]) names, by nearest, bilinear or bicubic interpolation, with zeros, border or
// reflection padding, as ONNX's reference computes it (padding applied to the point, then
// again to each tap). Computed in double.
#include "backends/cpu/kernels/indexing_kernels.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <cmath>

namespace infer::cpu {

namespace {

enum class Padding { zeros, border, reflection };
enum class Mode { nearest, linear, cubic };

struct Axis {
    int64_t size;
    double low, high;  // the range padding keeps points in
};

double reflect(double x, double low, double high) {
    const double range = high - low;
    if (range <= 0) return low;
    if (x < low) {
        const double d = low - x;
        const auto n = static_cast<int64_t>(d / range);
        const double r = d - static_cast<double>(n) * range;
        return n % 2 == 0 ? low + r : high - r;
    }
    if (x > high) {
        const double d = x - high;
        const auto n = static_cast<int64_t>(d / range);
        const double r = d - static_cast<double>(n) * range;
        return n % 2 == 0 ? high - r : low + r;
    }
    return x;
}

// The tap at integer position i of an axis, or -1 for a zero (outside, zeros padding).
int64_t tap(int64_t i, const Axis& a, Padding padding) {
    if (i >= 0 && i < a.size) return i;
    if (padding == Padding::zeros) return -1;
    if (padding == Padding::border) return std::clamp<int64_t>(i, 0, a.size - 1);
    return std::clamp<int64_t>(static_cast<int64_t>(reflect(static_cast<double>(i), a.low, a.high)), 0, a.size - 1);
}

void cubic_coefficients(double t, double c[4]) {
    constexpr double a = -0.75;
    const double x = std::abs(t);
    c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
    c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
    c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

template <class T>
void grid_sample_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& grid = ctx.input(1);
    Tensor& y = ctx.output(0);
    const auto& xd = x.shape().dims();
    if (xd.size() != 4) unsupported(ctx, "only 4-D inputs ([N, C, H, W])");
    const std::string mode_name = ctx.attrs().get_string("mode", "bilinear");
    const std::string padding_name = ctx.attrs().get_string("padding_mode", "zeros");
    const Mode mode = mode_name == "nearest" ? Mode::nearest
                      : (mode_name == "bilinear" || mode_name == "linear") ? Mode::linear
                      : (mode_name == "bicubic" || mode_name == "cubic")   ? Mode::cubic
                                                                           : throw InvalidArgument(node_label(ctx) + ": unknown mode '" + mode_name + "'");
    const Padding padding = padding_name == "zeros"    ? Padding::zeros
                            : padding_name == "border" ? Padding::border
                            : padding_name == "reflection"
                                ? Padding::reflection
                                : throw InvalidArgument(node_label(ctx) + ": unknown padding_mode '" + padding_name + "'");
    const bool align = ctx.attrs().get_int("align_corners", 0) != 0;
    const int64_t n_count = xd[0], channels = xd[1], height = xd[2], width = xd[3];
    const int64_t out_h = grid.shape()[1], out_w = grid.shape()[2];
    const auto axis = [align](int64_t size) {
        return align ? Axis{size, 0.0, static_cast<double>(size - 1)} : Axis{size, -0.5, static_cast<double>(size) - 0.5};
    };
    const Axis ax = axis(width), ay = axis(height);
    const T* px = x.data<T>();
    const T* pg = grid.data<T>();
    T* py = y.data<T>();
    // Where a grid point lands on one axis, after denormalizing, rounding (nearest) and padding.
    const auto place = [&](double g, const Axis& a) {
        double v = align ? (g + 1) / 2 * static_cast<double>(a.size - 1) : ((g + 1) * static_cast<double>(a.size) - 1) / 2;
        if (mode == Mode::nearest) v = std::nearbyint(v);
        if (v < a.low || v > a.high) {
            if (padding == Padding::border) v = std::clamp(v, 0.0, static_cast<double>(a.size - 1));
            else if (padding == Padding::reflection) v = reflect(v, a.low, a.high);
        }
        return v;
    };
    parallel_for(n_count * out_h, grain_for(out_w * channels * 16), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
            const int64_t n = row / out_h, oh = row % out_h;
            for (int64_t ow = 0; ow < out_w; ++ow) {
                const T* g = pg + ((n * out_h + oh) * out_w + ow) * 2;
                const double fx = place(static_cast<double>(g[0]), ax), fy = place(static_cast<double>(g[1]), ay);
                for (int64_t c = 0; c < channels; ++c) {
                    const T* plane = px + (n * channels + c) * height * width;
                    const auto at = [&](int64_t iy, int64_t ix) {
                        const int64_t ty = tap(iy, ay, padding), tx = tap(ix, ax, padding);
                        return ty < 0 || tx < 0 ? 0.0 : static_cast<double>(plane[ty * width + tx]);
                    };
                    double value = 0;
                    if (mode == Mode::nearest) {
                        value = at(static_cast<int64_t>(fy), static_cast<int64_t>(fx));
                    } else if (mode == Mode::linear) {
                        const double x0 = std::floor(fx), y0 = std::floor(fy), wx = fx - x0, wy = fy - y0;
                        const auto ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
                        value = (1 - wy) * ((1 - wx) * at(iy, ix) + wx * at(iy, ix + 1)) +
                                wy * ((1 - wx) * at(iy + 1, ix) + wx * at(iy + 1, ix + 1));
                    } else {
                        const double x0 = std::floor(fx), y0 = std::floor(fy);
                        double cx[4], cy[4];
                        cubic_coefficients(fx - x0, cx);
                        cubic_coefficients(fy - y0, cy);
                        const auto ix = static_cast<int64_t>(x0) - 1, iy = static_cast<int64_t>(y0) - 1;
                        for (int64_t i = 0; i < 4; ++i) {
                            double line = 0;
                            for (int64_t j = 0; j < 4; ++j) line += cx[j] * at(iy + i, ix + j);
                            value += cy[i] * line;
                        }
                    }
                    py[((n * channels + c) * out_h + oh) * out_w + ow] = static_cast<T>(value);
                }
            }
        }
    });
}

}  // namespace

void register_indexing_grid_sample(KernelRegistry& r) {
    add_floating(r, "GridSample", grid_sample_kernel<float>);
    r.add("GridSample", DType::f64, grid_sample_kernel<double>);
}

}  // namespace infer::cpu
