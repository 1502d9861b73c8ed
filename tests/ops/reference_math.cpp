// Float64 references of the math family, plain loops over the ONNX definitions.
#include "reference_math.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ref {

namespace {

// Calls body(first, stride) once per line along `axis`.
template <class Body>
void for_each_line(const infer::Shape& shape, size_t axis, Body body) {
    const int64_t stride = strides_of(shape)[axis];
    for (int64_t i = 0; i < numel(shape); ++i)
        if (unravel(i, shape)[axis] == 0) body(i, stride);
}

size_t axis_of(const RefTensor& x, int64_t axis) {
    return static_cast<size_t>(normalize_axis(axis, static_cast<int64_t>(x.shape.rank())));
}

}  // namespace

RefTensor log_softmax(const RefTensor& x, int64_t axis) {
    const size_t a = axis_of(x, axis);
    const int64_t len = x.shape[a];
    RefTensor out{x.shape, std::vector<double>(x.data.size())};
    for_each_line(x.shape, a, [&](int64_t first, int64_t stride) {
        double sum = 0;
        for (int64_t j = 0; j < len; ++j) sum += std::exp(x.data[static_cast<size_t>(first + j * stride)]);
        for (int64_t j = 0; j < len; ++j) {
            const auto e = static_cast<size_t>(first + j * stride);
            out.data[e] = x.data[e] - std::log(sum);
        }
    });
    return out;
}

RefTensor hardmax(const RefTensor& x, int64_t axis) {
    const size_t a = axis_of(x, axis);
    const int64_t len = x.shape[a];
    RefTensor out{x.shape, std::vector<double>(x.data.size(), 0.0)};
    for_each_line(x.shape, a, [&](int64_t first, int64_t stride) {
        int64_t best = 0;
        for (int64_t j = 1; j < len; ++j)
            if (x.data[static_cast<size_t>(first + j * stride)] > x.data[static_cast<size_t>(first + best * stride)])
                best = j;
        out.data[static_cast<size_t>(first + best * stride)] = 1.0;
    });
    return out;
}

RefTensor arg_extreme(const RefTensor& x, int64_t axis, bool keepdims, bool last, bool largest) {
    const size_t a = axis_of(x, axis);
    const int64_t len = x.shape[a];
    Dims dims;
    for (size_t d = 0; d < x.shape.rank(); ++d)
        if (d != a || keepdims) dims.push_back(d == a ? 1 : x.shape[d]);
    RefTensor out{infer::Shape(dims), {}};
    // Lines come in row-major order of their first element, which is the output's order.
    for_each_line(x.shape, a, [&](int64_t first, int64_t stride) {
        int64_t best = 0;
        double best_value = x.data[static_cast<size_t>(first)];
        for (int64_t j = 1; j < len; ++j) {
            const double v = x.data[static_cast<size_t>(first + j * stride)];
            const bool better = largest ? v > best_value : v < best_value;
            if (better || (last && v == best_value)) {
                best = j;
                best_value = v;
            }
        }
        out.data.push_back(static_cast<double>(best));
    });
    return out;
}

RefTensor reduce_math(const RefTensor& x, MathReduction kind, const Dims& axes, bool keepdims) {
    const auto rank = static_cast<int64_t>(x.shape.rank());
    std::vector<bool> reduced(x.shape.rank(), axes.empty());
    for (int64_t a : axes) reduced[static_cast<size_t>(normalize_axis(a, rank))] = true;
    Dims kept_dims;
    for (size_t i = 0; i < x.shape.rank(); ++i) kept_dims.push_back(reduced[i] ? 1 : x.shape[i]);
    const infer::Shape kept(kept_dims);
    // Gather each output's values, then apply the definition to the list.
    std::vector<std::vector<double>> groups(static_cast<size_t>(numel(kept)));
    for (int64_t i = 0; i < numel(x.shape); ++i) {
        Dims index = unravel(i, x.shape);
        for (size_t d = 0; d < index.size(); ++d)
            if (reduced[d]) index[d] = 0;
        groups[static_cast<size_t>(ravel(index, kept))].push_back(x.data[static_cast<size_t>(i)]);
    }
    RefTensor out{{}, {}};
    for (const auto& values : groups) {
        double r = 0;
        switch (kind) {
            case MathReduction::min:
                r = std::numeric_limits<double>::infinity();
                for (double v : values) r = std::min(r, v);
                break;
            case MathReduction::prod:
                r = 1;
                for (double v : values) r *= v;
                break;
            case MathReduction::sum_square:
                for (double v : values) r += v * v;
                break;
            case MathReduction::log_sum_exp:
                for (double v : values) r += std::exp(v);
                r = std::log(r);
                break;
            case MathReduction::log_sum:
                for (double v : values) r += v;
                r = std::log(r);
                break;
            case MathReduction::l1:
                for (double v : values) r += std::fabs(v);
                break;
            case MathReduction::l2:
                for (double v : values) r += v * v;
                r = std::sqrt(r);
                break;
        }
        out.data.push_back(r);
    }
    Dims out_dims;
    for (size_t i = 0; i < x.shape.rank(); ++i)
        if (!reduced[i] || keepdims) out_dims.push_back(kept_dims[i]);
    out.shape = infer::Shape(out_dims);
    return out;
}

RefTensor fold(const std::vector<RefTensor>& xs, const std::function<double(double, double)>& f) {
    RefTensor acc = xs.at(0);
    for (size_t k = 1; k < xs.size(); ++k) acc = binary(acc, xs[k], f);
    return acc;
}

RefTensor cumsum(const RefTensor& x, int64_t axis, bool exclusive, bool reverse) {
    const size_t a = axis_of(x, axis);
    RefTensor out{x.shape, std::vector<double>(x.data.size())};
    for (int64_t i = 0; i < numel(x.shape); ++i) {
        const Dims index = unravel(i, x.shape);
        double sum = 0;
        for (int64_t j = 0; j < x.shape[a]; ++j) {
            const bool before = reverse ? j > index[a] : j < index[a];
            if (before || (!exclusive && j == index[a])) {
                Dims at = index;
                at[a] = j;
                sum += x.data[static_cast<size_t>(ravel(at, x.shape))];
            }
        }
        out.data[static_cast<size_t>(i)] = sum;
    }
    return out;
}

RefTensor batch_diagonal(const RefTensor& x) {
    const size_t r = x.shape.rank();
    Dims dims(x.shape.begin(), x.shape.end() - 1);
    RefTensor out{infer::Shape(dims), {}};
    for (int64_t i = 0; i < numel(out.shape); ++i) {
        Dims index = unravel(i, out.shape);
        index.push_back(index[r - 2]);
        out.data.push_back(x.data[static_cast<size_t>(ravel(index, x.shape))]);
    }
    return out;
}

double round_half_even(double x) {
    const double below = std::floor(x), fraction = x - below;
    if (fraction > 0.5) return below + 1;
    if (fraction < 0.5) return below;
    return std::fmod(below, 2.0) == 0 ? below : below + 1;
}

double python_mod(double a, double b) {
    return a - b * std::floor(a / b);
}

double softplus(double x) { return std::log(1 + std::exp(x)); }

}  // namespace ref
