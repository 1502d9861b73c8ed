// Float64 references of the neural family's layers: Softmax, the normalizations, convolution
// and pooling.
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ref {

RefTensor softmax(const RefTensor& x, int64_t axis) {
    const auto a = static_cast<size_t>(normalize_axis(axis, static_cast<int64_t>(x.shape.rank())));
    const int64_t len = x.shape[a], stride = strides_of(x.shape)[a];
    RefTensor out{x.shape, std::vector<double>(x.data.size())};
    for (int64_t i = 0; i < numel(x.shape); ++i) {
        if (unravel(i, x.shape)[a] != 0) continue;  // i is the first element of a softmax row
        double max = -std::numeric_limits<double>::infinity(), sum = 0;
        for (int64_t j = 0; j < len; ++j) max = std::max(max, x.data[static_cast<size_t>(i + j * stride)]);
        for (int64_t j = 0; j < len; ++j) sum += std::exp(x.data[static_cast<size_t>(i + j * stride)] - max);
        for (int64_t j = 0; j < len; ++j) {
            const auto e = static_cast<size_t>(i + j * stride);
            out.data[e] = std::exp(x.data[e] - max) / sum;
        }
    }
    return out;
}

std::vector<RefTensor> layer_norm(const RefTensor& x, const RefTensor& scale,
                                  const RefTensor* bias, int64_t axis, double epsilon) {
    const auto a = static_cast<size_t>(normalize_axis(axis, static_cast<int64_t>(x.shape.rank())));
    const infer::Shape inner_shape(Dims(x.shape.begin() + static_cast<int64_t>(a), x.shape.end()));
    const int64_t inner = numel(inner_shape), outer = numel(x.shape) / inner;
    Dims stat_dims = x.shape.dims();
    for (size_t i = a; i < stat_dims.size(); ++i) stat_dims[i] = 1;
    RefTensor y{x.shape, {}}, mean{infer::Shape(stat_dims), {}}, inv_std{infer::Shape(stat_dims), {}};
    for (int64_t o = 0; o < outer; ++o) {
        const double* row = x.data.data() + o * inner;
        double m = 0, var = 0;
        for (int64_t j = 0; j < inner; ++j) m += row[j];
        m /= static_cast<double>(inner);
        for (int64_t j = 0; j < inner; ++j) var += (row[j] - m) * (row[j] - m);
        var /= static_cast<double>(inner);
        const double inv = 1.0 / std::sqrt(var + epsilon);
        for (int64_t j = 0; j < inner; ++j) {
            const Dims index = unravel(j, inner_shape);  // scale and bias broadcast to X[axis:]
            double v = (row[j] - m) * inv * broadcast_at(scale, index);
            if (bias) v += broadcast_at(*bias, index);
            y.data.push_back(v);
        }
        mean.data.push_back(m);
        inv_std.data.push_back(inv);
    }
    return {y, mean, inv_std};
}

RefTensor rms_norm(const RefTensor& x, const RefTensor& scale, int64_t axis, double epsilon) {
    const auto a = static_cast<size_t>(normalize_axis(axis, static_cast<int64_t>(x.shape.rank())));
    const infer::Shape inner_shape(Dims(x.shape.begin() + static_cast<int64_t>(a), x.shape.end()));
    const int64_t inner = numel(inner_shape), outer = numel(x.shape) / inner;
    RefTensor y{x.shape, {}};
    for (int64_t o = 0; o < outer; ++o) {
        const double* row = x.data.data() + o * inner;
        double squares = 0;
        for (int64_t j = 0; j < inner; ++j) squares += row[j] * row[j];
        const double inv = 1.0 / std::sqrt(squares / static_cast<double>(inner) + epsilon);
        for (int64_t j = 0; j < inner; ++j) y.data.push_back(row[j] * inv * broadcast_at(scale, unravel(j, inner_shape)));
    }
    return y;
}

RefTensor batch_norm(const RefTensor& x, const RefTensor& scale, const RefTensor& bias,
                     const RefTensor& mean, const RefTensor& var, double epsilon) {
    RefTensor out{x.shape, {}};
    for (int64_t i = 0; i < numel(x.shape); ++i) {
        const auto c = static_cast<size_t>(unravel(i, x.shape)[1]);
        const double xhat = (x.data[static_cast<size_t>(i)] - mean.data[c]) / std::sqrt(var.data[c] + epsilon);
        out.data.push_back(xhat * scale.data[c] + bias.data[c]);
    }
    return out;
}

namespace {
struct AxisGeometry {
    int64_t pad_begin, pad_end, out;
};

// Output size and leading pad of one spatial axis, from the ONNX formulas.
AxisGeometry axis_geometry(const Window& w, size_t axis, size_t spatial, int64_t in) {
    const int64_t k = w.kernel[axis], s = w.strides[axis], d = w.dilations[axis];
    const int64_t extent = (k - 1) * d + 1;
    if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
        const int64_t out = (in + s - 1) / s;
        const int64_t total = std::max<int64_t>((out - 1) * s + extent - in, 0);
        // SAME_UPPER puts the odd pad at the end, SAME_LOWER at the beginning.
        const int64_t begin = w.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
        return {begin, total - begin, out};
    }
    const bool valid = w.auto_pad == "VALID";
    const int64_t begin = valid ? 0 : w.pads[axis], end = valid ? 0 : w.pads[spatial + axis];
    const double span = static_cast<double>(in + begin + end - extent) / static_cast<double>(s);
    int64_t out = static_cast<int64_t>(w.ceil_mode ? std::ceil(span) : std::floor(span)) + 1;
    // With ceil_mode, a last window that would start in the end padding is dropped.
    if (w.ceil_mode && (out - 1) * s >= in + begin) --out;
    return {begin, end, out};
}

struct Geometry {
    std::vector<AxisGeometry> axes;
    infer::Shape out_spatial;
};

Geometry geometry(Window& w, const RefTensor& x) {
    const size_t spatial = x.shape.rank() - 2;
    if (w.strides.empty()) w.strides.assign(spatial, 1);
    if (w.dilations.empty()) w.dilations.assign(spatial, 1);
    if (w.pads.empty()) w.pads.assign(2 * spatial, 0);
    Geometry g;
    Dims out;
    for (size_t i = 0; i < spatial; ++i) {
        g.axes.push_back(axis_geometry(w, i, spatial, x.shape[2 + i]));
        out.push_back(g.axes.back().out);
    }
    g.out_spatial = infer::Shape(out);
    return g;
}

// Input spatial position of kernel tap `tap` for output position `pos`; false when outside.
bool input_position(const Window& w, const Geometry& g, const infer::Shape& in_spatial,
                    const Dims& pos, const Dims& tap, Dims& in) {
    in.resize(pos.size());
    bool inside = true;
    for (size_t i = 0; i < pos.size(); ++i) {
        in[i] = pos[i] * w.strides[i] - g.axes[i].pad_begin + tap[i] * w.dilations[i];
        inside = inside && in[i] >= 0 && in[i] < in_spatial[i];
    }
    return inside;
}

infer::Shape spatial_of(const infer::Shape& s) { return infer::Shape(Dims(s.begin() + 2, s.end())); }

// Visits every (n, c, output position): f(n, c, pos) returns the output value.
template <class F>
RefTensor over_outputs(int64_t batch, int64_t channels, const infer::Shape& out_spatial, F f) {
    Dims dims{batch, channels};
    dims.insert(dims.end(), out_spatial.begin(), out_spatial.end());
    RefTensor out{infer::Shape(dims), {}};
    for (int64_t n = 0; n < batch; ++n)
        for (int64_t c = 0; c < channels; ++c)
            for (int64_t p = 0; p < numel(out_spatial); ++p)
                out.data.push_back(f(n, c, unravel(p, out_spatial)));
    return out;
}

double at(const RefTensor& x, int64_t n, int64_t c, const Dims& spatial) {
    Dims index{n, c};
    index.insert(index.end(), spatial.begin(), spatial.end());
    return x.data[static_cast<size_t>(ravel(index, x.shape))];
}
}  // namespace

RefTensor conv(const RefTensor& x, const RefTensor& w, const RefTensor* bias, Window window,
               int64_t group) {
    const infer::Shape kernel = spatial_of(w.shape);
    if (window.kernel.empty()) window.kernel = kernel.dims();
    const Geometry g = geometry(window, x);
    const int64_t out_channels = w.shape[0], group_in = w.shape[1];
    const int64_t group_out = out_channels / group;
    const infer::Shape in_spatial = spatial_of(x.shape);
    Dims in;
    return over_outputs(x.shape[0], out_channels, g.out_spatial, [&](int64_t n, int64_t m, const Dims& pos) {
        double sum = bias ? bias->data[static_cast<size_t>(m)] : 0.0;
        const int64_t first_channel = (m / group_out) * group_in;
        for (int64_t c = 0; c < group_in; ++c)
            for (int64_t t = 0; t < numel(kernel); ++t) {
                const Dims tap = unravel(t, kernel);
                if (input_position(window, g, in_spatial, pos, tap, in))
                    sum += at(x, n, first_channel + c, in) * at(w, m, c, tap);
            }
        return sum;
    });
}

RefTensor max_pool(const RefTensor& x, Window window) {
    const Geometry g = geometry(window, x);
    const infer::Shape kernel(window.kernel), in_spatial = spatial_of(x.shape);
    Dims in;
    return over_outputs(x.shape[0], x.shape[1], g.out_spatial, [&](int64_t n, int64_t c, const Dims& pos) {
        double best = -std::numeric_limits<double>::infinity();
        for (int64_t t = 0; t < numel(kernel); ++t)
            if (input_position(window, g, in_spatial, pos, unravel(t, kernel), in))
                best = std::max(best, at(x, n, c, in));
        return best;
    });
}

RefTensor max_pool_indices(const RefTensor& x, Window window, bool column_major) {
    const Geometry g = geometry(window, x);
    const infer::Shape kernel(window.kernel), in_spatial = spatial_of(x.shape);
    Dims in;
    return over_outputs(x.shape[0], x.shape[1], g.out_spatial, [&](int64_t n, int64_t c, const Dims& pos) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t best_at = -1;
        for (int64_t t = 0; t < numel(kernel); ++t)
            if (input_position(window, g, in_spatial, pos, unravel(t, kernel), in) && (best_at < 0 || at(x, n, c, in) > best)) {
                best = at(x, n, c, in);
                // Row-major over [N, C, spatial...]; column-major reverses the spatial axes.
                Dims index{n, c}, dims{x.shape[0], x.shape[1]};
                for (size_t i = 0; i < in.size(); ++i) {
                    const size_t axis = column_major ? in.size() - 1 - i : i;
                    index.push_back(in[axis]);
                    dims.push_back(x.shape[axis + 2]);
                }
                best_at = ravel(index, infer::Shape(dims));
            }
        return static_cast<double>(best_at);
    });
}

RefTensor average_pool(const RefTensor& x, Window window, bool count_include_pad) {
    const Geometry g = geometry(window, x);
    const infer::Shape kernel(window.kernel), in_spatial = spatial_of(x.shape);
    const size_t spatial = in_spatial.rank();
    Dims in;
    return over_outputs(x.shape[0], x.shape[1], g.out_spatial, [&](int64_t n, int64_t c, const Dims& pos) {
        double sum = 0;
        int64_t count = 0;
        for (int64_t t = 0; t < numel(kernel); ++t) {
            const bool inside = input_position(window, g, in_spatial, pos, unravel(t, kernel), in);
            if (inside) sum += at(x, n, c, in);
            // count_include_pad counts taps in the padded input (explicit or SAME pads), but
            // not taps past the end padding that ceil_mode adds (as PyTorch and onnxruntime do).
            bool in_padded = true;
            for (size_t i = 0; i < spatial; ++i)
                in_padded = in_padded && in[i] >= -g.axes[i].pad_begin &&
                            in[i] < in_spatial[i] + g.axes[i].pad_end;
            if (count_include_pad ? in_padded : inside) ++count;
        }
        return sum / static_cast<double>(count);
    });
}

RefTensor global_average_pool(const RefTensor& x) {
    Dims axes;
    for (size_t i = 2; i < x.shape.rank(); ++i) axes.push_back(static_cast<int64_t>(i));
    return reduce(x, Reduction::mean, axes, true);
}

}  // namespace ref
