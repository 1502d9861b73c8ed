// Resize (nearest, linear and cubic, every coordinate transformation mode of opset 13) and the
// deprecated Upsample (Resize with scales, asymmetric coordinates, nearest rounding down).
// Resizing is separable: each output axis gets a list of (input index, weight) taps, and an
// output element is the weighted sum over the product of its axes' taps. The arithmetic
// follows the ONNX reference: the neighbours of a source coordinate x are the ones around
// floor(x) (an integral x counts as the right end of its interval), read with edge clamping.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/indexing_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace infer::cpu {

namespace {

struct Tap {
    int64_t index;
    double weight;
};
struct AxisTaps {
    std::vector<std::vector<Tap>> taps;  // per output index; empty: the extrapolation value
};

struct ResizeParams {
    std::string mode, coordinates, nearest_mode;
    double cubic_a = -0.75;
    bool exclude_outside = false;
};

std::vector<double> cubic_weights(double r, double a) {
    const auto near = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };       // |t| <= 1
    const auto far = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };  // 1 < |t| < 2
    return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

// Source coordinate of output index x, or NaN when it lies outside a tf_crop_and_resize box.
double source_coordinate(const ResizeParams& p, int64_t x, int64_t in, double scale,
                         double roi_start, double roi_end) {
    const double length = scale * static_cast<double>(in);  // the reference's (unrounded) length
    const double xd = static_cast<double>(x);
    const std::string& c = p.coordinates;
    if (c == "half_pixel") return (xd + 0.5) / scale - 0.5;
    if (c == "pytorch_half_pixel") return length == 1 ? -0.5 : (xd + 0.5) / scale - 0.5;
    if (c == "align_corners") return length == 1 ? 0.0 : xd * static_cast<double>(in - 1) / (length - 1);
    if (c == "asymmetric") return xd / scale;
    if (c == "tf_half_pixel_for_nn") return (xd + 0.5) / scale;
    // tf_crop_and_resize
    const double span = (roi_end - roi_start) * static_cast<double>(in - 1);
    const double s = (length == 1 ? span / 2 : xd * span / (length - 1)) + roi_start * static_cast<double>(in - 1);
    return s < 0 || s > static_cast<double>(in - 1) ? std::nan("") : s;
}

bool known_coordinates(const std::string& mode) {
    for (const char* known : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                              "tf_half_pixel_for_nn", "tf_crop_and_resize"})
        if (mode == known) return true;
    return false;
}

AxisTaps axis_taps(const ResizeParams& p, int64_t in, int64_t out, double scale, double roi_start,
                   double roi_end) {
    AxisTaps axis;
    axis.taps.resize(static_cast<size_t>(out));
    for (int64_t x = 0; x < out; ++x) {
        const double s = source_coordinate(p, x, in, scale, roi_start, roi_end);
        if (std::isnan(s)) continue;
        // The interval (x0, x0 + 1] holding s, and s's place in it.
        int64_t x0 = static_cast<int64_t>(std::floor(s));
        double r = s - static_cast<double>(x0);
        if (r == 0) {
            x0 -= 1;
            r = 1;
        }
        std::vector<double> weights;
        int64_t first = x0;
        if (p.mode == "nearest") {
            bool right = true;
            if (r < 1) {
                const std::string& m = p.nearest_mode;
                right = m == "ceil" || (m == "round_prefer_ceil" && r >= 0.5) ||
                        (m == "round_prefer_floor" && r > 0.5);
            }
            weights = {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
        } else if (p.mode == "linear") {
            weights = {1 - r, r};
        } else {
            weights = cubic_weights(r, p.cubic_a);
            first = x0 - 1;
        }
        if (p.exclude_outside) {
            double sum = 0;
            for (size_t k = 0; k < weights.size(); ++k) {
                const int64_t i = first + static_cast<int64_t>(k);
                if (i < 0 || i >= in) weights[k] = 0;
                sum += weights[k];
            }
            for (double& w : weights) w /= sum;
        }
        for (size_t k = 0; k < weights.size(); ++k) {
            if (weights[k] == 0) continue;
            const int64_t i = std::clamp<int64_t>(first + static_cast<int64_t>(k), 0, in - 1);
            axis.taps[static_cast<size_t>(x)].push_back({i, weights[k]});
        }
    }
    return axis;
}

void resize_with(KernelContext& ctx, const ResizeParams& p, const std::vector<float>& scales,
                 const std::vector<float>& roi, float extrapolation) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    const Shape& is = in.shape();
    const Shape& os = out.shape();
    const size_t rank = is.rank();
    std::vector<AxisTaps> axes;
    for (size_t d = 0; d < rank; ++d) {
        // With sizes, the scale is the ratio of the extents.
        const double scale = scales.empty() ? static_cast<double>(os[d]) / static_cast<double>(is[d])
                                            : static_cast<double>(scales[d]);
        const double start = roi.size() == 2 * rank ? roi[d] : 0.0;
        const double end = roi.size() == 2 * rank ? roi[d + rank] : 1.0;
        axes.push_back(axis_taps(p, is[d], os[d], scale, start, end));
    }
    const std::vector<int64_t> strides = strides_of(is);
    const float* src = in.data<float>();
    float* dst = out.data<float>();
    if (out.numel() == 0) return;
    if (rank == 0) {
        dst[0] = src[0];
        return;
    }
    // Row by row along the last axis: the leading axes' taps are combined once per row, then
    // each output element sums its last-axis taps under every combination, in the order of an
    // odometer over all the axes (the last fastest), so the sums are those of the reference.
    // Nearest resizing, one tap of weight 1 per axis, is a gather of the row's source values.
    const size_t last = rank - 1;
    const int64_t width = os[last], rows = out.numel() / width;
    const std::vector<std::vector<Tap>>& last_taps = axes[last].taps;
    std::vector<int64_t> gather(static_cast<size_t>(width), -1);  // the one source index, or -1
    for (size_t x = 0; x < gather.size(); ++x)
        if (last_taps[x].size() == 1 && last_taps[x][0].weight == 1.0) gather[x] = last_taps[x][0].index;
    const bool gather_row = std::find(gather.begin(), gather.end(), int64_t{-1}) == gather.end();
    parallel_for(rows, std::max<int64_t>(1, 4096 / width), [&](int64_t begin, int64_t end) {
        std::vector<const std::vector<Tap>*> taps(last);
        std::vector<size_t> pick(last);
        struct Combination {
            double weight;
            int64_t offset;
        };
        std::vector<Combination> combinations;
        for (int64_t row = begin; row < end; ++row) {
            float* y = dst + row * width;
            int64_t rest = row;
            bool outside = false;
            for (size_t d = last; d-- > 0;) {
                taps[d] = &axes[d].taps[static_cast<size_t>(rest % os[d])];
                rest /= os[d];
                outside = outside || taps[d]->empty();
            }
            if (outside) {
                std::fill(y, y + width, extrapolation);
                continue;
            }
            combinations.clear();
            std::fill(pick.begin(), pick.end(), 0);
            while (true) {
                double w = 1;
                int64_t offset = 0;
                for (size_t d = 0; d < last; ++d) {
                    const Tap& t = (*taps[d])[pick[d]];
                    w *= t.weight;
                    offset += t.index * strides[d];
                }
                combinations.push_back({w, offset});
                size_t d = last;
                while (d-- > 0 && ++pick[d] == taps[d]->size()) pick[d] = 0;
                if (d == static_cast<size_t>(-1)) break;
            }
            if (gather_row && combinations.size() == 1 && combinations[0].weight == 1.0) {
                const float* source = src + combinations[0].offset;
                for (int64_t x = 0; x < width; ++x) y[x] = source[gather[static_cast<size_t>(x)]];
                continue;
            }
            for (int64_t x = 0; x < width; ++x) {
                const std::vector<Tap>& xs = last_taps[static_cast<size_t>(x)];
                if (xs.empty()) {
                    y[x] = extrapolation;
                    continue;
                }
                double sum = 0;
                for (const Combination& c : combinations)
                    for (const Tap& t : xs) sum += c.weight * t.weight * static_cast<double>(src[c.offset + t.index]);
                y[x] = static_cast<float>(sum);
            }
        }
    });
}

std::vector<float> float_input(const KernelContext& ctx, size_t i) {
    if (!ctx.has_input(i) || ctx.input(i).numel() == 0) return {};
    return ctx.input(i).to_vector<float>();
}

void resize_kernel(KernelContext& ctx) {
    const Attributes& a = ctx.attrs();
    ResizeParams p{a.get_string("mode", "nearest"), a.get_string("coordinate_transformation_mode", "half_pixel"),
                   a.get_string("nearest_mode", "round_prefer_floor"), a.get_float("cubic_coeff_a", -0.75f),
                   a.get_int("exclude_outside", 0) != 0};
    if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic")
        unsupported(ctx, "mode '" + p.mode + "'");
    if (!known_coordinates(p.coordinates))
        unsupported(ctx, "coordinate_transformation_mode '" + p.coordinates + "'");
    if (p.nearest_mode != "round_prefer_floor" && p.nearest_mode != "round_prefer_ceil" &&
        p.nearest_mode != "floor" && p.nearest_mode != "ceil")
        unsupported(ctx, "nearest_mode '" + p.nearest_mode + "'");
    const bool by_sizes = ctx.has_input(3) && ctx.input(3).numel() > 0;
    resize_with(ctx, p, by_sizes ? std::vector<float>{} : float_input(ctx, 2), float_input(ctx, 1),
                a.get_float("extrapolation_value", 0.0f));
}

void upsample_kernel(KernelContext& ctx) {
    std::string mode = ctx.attrs().get_string("mode", "nearest");
    if (mode == "bilinear") mode = "linear";
    if (mode != "nearest" && mode != "linear") unsupported(ctx, "mode '" + mode + "'");
    resize_with(ctx, {mode, "asymmetric", "floor"}, float_input(ctx, 1), {}, 0.0f);
}

}  // namespace

void register_indexing_resize(KernelRegistry& r) {
    add_floating(r, "Resize", resize_kernel);
    add_floating(r, "Upsample", upsample_kernel);
}

}  // namespace infer::cpu
