// Float64 references of the indexing family: plain loops over every output element.
#include "reference_indexing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ref {

namespace {
int64_t idx(double v, int64_t extent) {
    const auto i = static_cast<int64_t>(v);
    return i < 0 ? i + extent : i;
}
RefTensor zeros(const infer::Shape& shape) { return {shape, std::vector<double>(static_cast<size_t>(numel(shape)), 0.0)}; }
double combine(const std::string& reduction, double old, double update) {
    if (reduction == "add") return old + update;
    if (reduction == "mul") return old * update;
    if (reduction == "max") return std::max(old, update);
    if (reduction == "min") return std::min(old, update);
    return update;
}
}  // namespace

RefTensor gather_elements(const RefTensor& data, const RefTensor& indices, int64_t axis) {
    axis = normalize_axis(axis, static_cast<int64_t>(data.shape.rank()));
    RefTensor out = zeros(indices.shape);
    for (int64_t i = 0; i < numel(indices.shape); ++i) {
        Dims at = unravel(i, indices.shape);
        at[static_cast<size_t>(axis)] = idx(indices.data[static_cast<size_t>(i)], data.shape[static_cast<size_t>(axis)]);
        out.data[static_cast<size_t>(i)] = data.data[static_cast<size_t>(ravel(at, data.shape))];
    }
    return out;
}

RefTensor gather_nd(const RefTensor& data, const RefTensor& indices, int64_t batch_dims) {
    const size_t b = static_cast<size_t>(batch_dims), q = indices.shape.rank();
    const size_t depth = static_cast<size_t>(indices.shape[q - 1]);
    Dims out_dims(indices.shape.dims().begin(), indices.shape.dims().end() - 1);
    out_dims.insert(out_dims.end(), data.shape.dims().begin() + static_cast<std::ptrdiff_t>(b + depth), data.shape.dims().end());
    RefTensor out = zeros(infer::Shape(out_dims));
    for (int64_t o = 0; o < numel(out.shape); ++o) {
        const Dims at = unravel(o, out.shape);
        Dims tuple(at.begin(), at.begin() + static_cast<std::ptrdiff_t>(q - 1));
        tuple.push_back(0);
        Dims src(at.begin(), at.begin() + static_cast<std::ptrdiff_t>(b));
        for (size_t k = 0; k < depth; ++k) {
            tuple[q - 1] = static_cast<int64_t>(k);
            src.push_back(idx(indices.data[static_cast<size_t>(ravel(tuple, indices.shape))], data.shape[b + k]));
        }
        src.insert(src.end(), at.begin() + static_cast<std::ptrdiff_t>(q - 1), at.end());
        out.data[static_cast<size_t>(o)] = data.data[static_cast<size_t>(ravel(src, data.shape))];
    }
    return out;
}

RefTensor scatter_elements(const RefTensor& data, const RefTensor& indices, const RefTensor& updates,
                           int64_t axis, const std::string& reduction) {
    axis = normalize_axis(axis, static_cast<int64_t>(data.shape.rank()));
    RefTensor out = data;
    for (int64_t i = 0; i < numel(indices.shape); ++i) {
        Dims at = unravel(i, indices.shape);
        at[static_cast<size_t>(axis)] = idx(indices.data[static_cast<size_t>(i)], data.shape[static_cast<size_t>(axis)]);
        double& slot = out.data[static_cast<size_t>(ravel(at, data.shape))];
        slot = combine(reduction, slot, updates.data[static_cast<size_t>(i)]);
    }
    return out;
}

RefTensor scatter_nd(const RefTensor& data, const RefTensor& indices, const RefTensor& updates,
                     const std::string& reduction) {
    RefTensor out = data;
    const size_t q = indices.shape.rank();
    const size_t depth = static_cast<size_t>(indices.shape[q - 1]);
    for (int64_t u = 0; u < numel(updates.shape); ++u) {
        const Dims at = unravel(u, updates.shape);
        Dims tuple(at.begin(), at.begin() + static_cast<std::ptrdiff_t>(q - 1));
        tuple.push_back(0);
        Dims dst;
        for (size_t k = 0; k < depth; ++k) {
            tuple[q - 1] = static_cast<int64_t>(k);
            dst.push_back(idx(indices.data[static_cast<size_t>(ravel(tuple, indices.shape))], data.shape[k]));
        }
        dst.insert(dst.end(), at.begin() + static_cast<std::ptrdiff_t>(q - 1), at.end());
        double& slot = out.data[static_cast<size_t>(ravel(dst, data.shape))];
        slot = combine(reduction, slot, updates.data[static_cast<size_t>(u)]);
    }
    return out;
}

RefTensor tensor_scatter(const RefTensor& past, const RefTensor& update, const RefTensor* write_indices, int64_t axis,
                         bool circular) {
    RefTensor out = past;
    const size_t a = static_cast<size_t>(normalize_axis(axis, static_cast<int64_t>(past.shape.rank())));
    const int64_t capacity = past.shape[a];
    for (int64_t u = 0; u < numel(update.shape); ++u) {
        Dims at = unravel(u, update.shape);
        const int64_t start = write_indices ? static_cast<int64_t>(write_indices->data[static_cast<size_t>(at[0])]) : 0;
        at[a] += start;
        if (circular) at[a] %= capacity;
        out.data[static_cast<size_t>(ravel(at, past.shape))] = update.data[static_cast<size_t>(u)];
    }
    return out;
}

RefTensor trilu(const RefTensor& x, bool upper, int64_t k) {
    RefTensor out = x;
    const size_t r = x.shape.rank();
    for (int64_t i = 0; i < numel(x.shape); ++i) {
        const Dims at = unravel(i, x.shape);
        const int64_t col_minus_row = at[r - 1] - at[r - 2];
        if (upper ? col_minus_row < k : col_minus_row > k) out.data[static_cast<size_t>(i)] = 0;
    }
    return out;
}

RefTensor eye_like(const infer::Shape& shape, int64_t k) {
    RefTensor out = zeros(shape);
    for (int64_t i = 0; i < numel(shape); ++i) {
        const Dims at = unravel(i, shape);
        if (at[1] - at[0] == k) out.data[static_cast<size_t>(i)] = 1;
    }
    return out;
}

RefTensor one_hot(const RefTensor& indices, int64_t depth, double off, double on, int64_t axis) {
    const int64_t r = static_cast<int64_t>(indices.shape.rank()) + 1;
    axis = normalize_axis(axis, r);
    Dims dims = indices.shape.dims();
    dims.insert(dims.begin() + axis, depth);
    RefTensor out = zeros(infer::Shape(dims));
    for (int64_t o = 0; o < numel(out.shape); ++o) {
        Dims at = unravel(o, out.shape);
        const int64_t d = at[static_cast<size_t>(axis)];
        at.erase(at.begin() + axis);
        const int64_t hot = idx(indices.data[static_cast<size_t>(ravel(at, indices.shape))], depth);
        out.data[static_cast<size_t>(o)] = hot == d ? on : off;
    }
    return out;
}

RefTensor tile(const RefTensor& x, const Dims& repeats) {
    Dims dims = x.shape.dims();
    for (size_t d = 0; d < dims.size(); ++d) dims[d] *= repeats[d];
    RefTensor out = zeros(infer::Shape(dims));
    for (int64_t o = 0; o < numel(out.shape); ++o) {
        Dims at = unravel(o, out.shape);
        for (size_t d = 0; d < at.size(); ++d) at[d] %= x.shape[d];
        out.data[static_cast<size_t>(o)] = x.data[static_cast<size_t>(ravel(at, x.shape))];
    }
    return out;
}

RefTensor pad(const RefTensor& x, const Dims& pads, const std::string& mode, double value) {
    const size_t r = x.shape.rank();
    Dims dims = x.shape.dims();
    for (size_t d = 0; d < r; ++d) dims[d] += pads[d] + pads[d + r];
    RefTensor out = zeros(infer::Shape(dims));
    for (int64_t o = 0; o < numel(out.shape); ++o) {
        Dims at = unravel(o, out.shape);
        bool inside = true;
        for (size_t d = 0; d < r; ++d) {
            int64_t i = at[d] - pads[d];
            const int64_t n = x.shape[d];
            if (mode == "edge") i = std::clamp<int64_t>(i, 0, n - 1);
            if (mode == "reflect") {
                if (i < 0) i = -i;
                if (i >= n) i = 2 * n - 2 - i;
            }
            inside = inside && i >= 0 && i < n;
            at[d] = i;
        }
        out.data[static_cast<size_t>(o)] = inside ? x.data[static_cast<size_t>(ravel(at, x.shape))] : value;
    }
    return out;
}

RefTensor depth_to_space(const RefTensor& x, int64_t block, bool crd) {
    const int64_t n = x.shape[0], c = x.shape[1] / (block * block), h = x.shape[2], w = x.shape[3];
    RefTensor out = zeros(infer::Shape({n, c, h * block, w * block}));
    // ONNX: reshape to 6-D, transpose, reshape back; here each source index directly.
    for (int64_t o = 0; o < numel(out.shape); ++o) {
        const Dims at = unravel(o, out.shape);
        const int64_t bi = at[2] % block, bj = at[3] % block;
        const int64_t channel = crd ? (at[1] * block + bi) * block + bj : (bi * block + bj) * c + at[1];
        out.data[static_cast<size_t>(o)] =
            x.data[static_cast<size_t>(ravel({at[0], channel, at[2] / block, at[3] / block}, x.shape))];
    }
    return out;
}

RefTensor space_to_depth(const RefTensor& x, int64_t block) {
    const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
    RefTensor out = zeros(infer::Shape({n, c * block * block, h / block, w / block}));
    for (int64_t i = 0; i < numel(x.shape); ++i) {
        const Dims at = unravel(i, x.shape);
        const int64_t bi = at[2] % block, bj = at[3] % block;
        const Dims to{at[0], (bi * block + bj) * c + at[1], at[2] / block, at[3] / block};
        out.data[static_cast<size_t>(ravel(to, out.shape))] = x.data[static_cast<size_t>(i)];
    }
    return out;
}

std::vector<RefTensor> top_k(const RefTensor& x, int64_t k, int64_t axis, bool largest) {
    const size_t a = static_cast<size_t>(normalize_axis(axis, static_cast<int64_t>(x.shape.rank())));
    Dims dims = x.shape.dims();
    const int64_t extent = dims[a];
    dims[a] = k;
    RefTensor values = zeros(infer::Shape(dims)), indices = zeros(infer::Shape(dims));
    for (int64_t o = 0; o < numel(values.shape); ++o) {
        Dims at = unravel(o, values.shape);
        if (at[a] != 0) continue;
        std::vector<std::pair<double, int64_t>> line;
        for (int64_t e = 0; e < extent; ++e) {
            at[a] = e;
            line.push_back({x.data[static_cast<size_t>(ravel(at, x.shape))], e});
        }
        std::sort(line.begin(), line.end(), [&](const auto& p, const auto& q) {
            if (p.first != q.first) return largest ? p.first > q.first : p.first < q.first;
            return p.second < q.second;
        });
        for (int64_t e = 0; e < k; ++e) {
            at[a] = e;
            values.data[static_cast<size_t>(ravel(at, values.shape))] = line[static_cast<size_t>(e)].first;
            indices.data[static_cast<size_t>(ravel(at, values.shape))] = static_cast<double>(line[static_cast<size_t>(e)].second);
        }
    }
    return {values, indices};
}

RefTensor compress(const RefTensor& x, const std::vector<bool>& condition, bool has_axis, int64_t axis) {
    if (!has_axis) {
        RefTensor out{infer::Shape({0}), {}};
        for (size_t i = 0; i < condition.size(); ++i)
            if (condition[i]) out.data.push_back(x.data[i]);
        out.shape = infer::Shape({static_cast<int64_t>(out.data.size())});
        return out;
    }
    const size_t a = static_cast<size_t>(normalize_axis(axis, static_cast<int64_t>(x.shape.rank())));
    Dims kept;
    for (size_t i = 0; i < condition.size(); ++i)
        if (condition[i]) kept.push_back(static_cast<int64_t>(i));
    Dims dims = x.shape.dims();
    dims[a] = static_cast<int64_t>(kept.size());
    RefTensor out = zeros(infer::Shape(dims));
    for (int64_t o = 0; o < numel(out.shape); ++o) {
        Dims at = unravel(o, out.shape);
        at[a] = kept[static_cast<size_t>(at[a])];
        out.data[static_cast<size_t>(o)] = x.data[static_cast<size_t>(ravel(at, x.shape))];
    }
    return out;
}

RefTensor reverse_sequence(const RefTensor& x, const Dims& lengths, int64_t batch_axis, int64_t time_axis) {
    RefTensor out = x;
    for (int64_t i = 0; i < numel(x.shape); ++i) {
        Dims at = unravel(i, x.shape);
        const int64_t length = lengths[static_cast<size_t>(at[static_cast<size_t>(batch_axis)])];
        int64_t& t = at[static_cast<size_t>(time_axis)];
        if (t >= length) continue;
        t = length - 1 - t;
        out.data[static_cast<size_t>(i)] = x.data[static_cast<size_t>(ravel(at, x.shape))];
    }
    return out;
}

RefTensor nonzero(const RefTensor& x) {
    std::vector<Dims> found;
    for (int64_t i = 0; i < numel(x.shape); ++i)
        if (x.data[static_cast<size_t>(i)] != 0) found.push_back(unravel(i, x.shape));
    const auto count = static_cast<int64_t>(found.size());
    RefTensor out = zeros(infer::Shape({static_cast<int64_t>(x.shape.rank()), count}));
    for (int64_t j = 0; j < count; ++j)
        for (size_t d = 0; d < x.shape.rank(); ++d)
            out.data[static_cast<size_t>(static_cast<int64_t>(d) * count + j)] = static_cast<double>(found[static_cast<size_t>(j)][d]);
    return out;
}

namespace {
// The ONNX reference's 1-D interpolation: the n neighbours of x nearest to it (ties to the
// smaller index) in the edge-padded line, weighted by the mode's coefficients.
double interpolate_1d(const std::vector<double>& line, double scale, int64_t x, const ResizeSpec& s) {
    const auto in = static_cast<int64_t>(line.size());
    const double length = scale * static_cast<double>(in), xd = static_cast<double>(x);
    double src = 0;
    if (s.coordinates == "half_pixel") src = (xd + 0.5) / scale - 0.5;
    else if (s.coordinates == "pytorch_half_pixel") src = length == 1 ? -0.5 : (xd + 0.5) / scale - 0.5;
    else if (s.coordinates == "align_corners") src = length == 1 ? 0 : xd * static_cast<double>(in - 1) / (length - 1);
    else src = xd / scale;  // asymmetric
    const double ratio = src == std::floor(src) ? 1.0 : src - std::floor(src);
    std::vector<double> coeffs;
    if (s.mode == "nearest") {
        bool ceil_side = ratio == 1.0 || s.nearest_mode == "ceil";
        if (s.nearest_mode == "round_prefer_floor") ceil_side = ceil_side || ratio > 0.5;
        if (s.nearest_mode == "round_prefer_ceil") ceil_side = ceil_side || ratio >= 0.5;
        coeffs = {ceil_side ? 0.0 : 1.0, ceil_side ? 1.0 : 0.0};
    } else if (s.mode == "linear") {
        coeffs = {1 - ratio, ratio};
    } else {
        const double a = s.cubic_a;
        const auto w = [a](double t) {
            t = std::fabs(t);
            if (t <= 1) return (a + 2) * t * t * t - (a + 3) * t * t + 1;
            if (t < 2) return a * t * t * t - 5 * a * t * t + 8 * a * t - 4 * a;
            return 0.0;
        };
        coeffs = {w(ratio + 1), w(ratio), w(1 - ratio), w(2 - ratio)};
    }
    const auto n = static_cast<int64_t>(coeffs.size());
    const int64_t pad = (n + 1) / 2;
    std::vector<int64_t> candidates(static_cast<size_t>(in + 2 * pad));
    std::iota(candidates.begin(), candidates.end(), -pad);
    std::stable_sort(candidates.begin(), candidates.end(), [&](int64_t p, int64_t q) {
        return std::fabs(src - static_cast<double>(p)) < std::fabs(src - static_cast<double>(q));
    });
    candidates.resize(static_cast<size_t>(n));
    std::sort(candidates.begin(), candidates.end());
    double sum = 0, total = 0;
    for (size_t k = 0; k < coeffs.size(); ++k) {
        const int64_t i = candidates[k];
        if (s.exclude_outside && (i < 0 || i >= in)) coeffs[k] = 0;
        total += coeffs[k];
        sum += coeffs[k] * line[static_cast<size_t>(std::clamp<int64_t>(i, 0, in - 1))];
    }
    return s.exclude_outside ? sum / total : sum;
}
}  // namespace

RefTensor resize(const RefTensor& x, const std::vector<double>& scales, const infer::Shape& out,
                 const ResizeSpec& spec) {
    RefTensor current = x;
    for (size_t a = 0; a < x.shape.rank(); ++a) {  // one axis at a time
        Dims dims = current.shape.dims();
        dims[a] = out[a];
        RefTensor next = zeros(infer::Shape(dims));
        for (int64_t o = 0; o < numel(next.shape); ++o) {
            Dims at = unravel(o, next.shape);
            const int64_t target = at[a];
            std::vector<double> line;
            for (int64_t i = 0; i < current.shape[a]; ++i) {
                at[a] = i;
                line.push_back(current.data[static_cast<size_t>(ravel(at, current.shape))]);
            }
            next.data[static_cast<size_t>(o)] = interpolate_1d(line, scales[a], target, spec);
        }
        current = std::move(next);
    }
    return current;
}

RefTensor non_max_suppression(const RefTensor& boxes, const RefTensor& scores, int64_t keep, double iou_limit,
                              double score_limit) {
    const int64_t batches = boxes.shape[0], count = boxes.shape[1], classes = scores.shape[1];
    const auto corner = [&](int64_t b, int64_t i, int k) { return boxes.data[static_cast<size_t>((b * count + i) * 4 + k)]; };
    const auto iou = [&](int64_t b, int64_t i, int64_t j) {
        double lo[2], hi[2], area_i = 1, area_j = 1, inter = 1;
        for (int axis = 0; axis < 2; ++axis) {
            const double i0 = std::min(corner(b, i, axis), corner(b, i, axis + 2)), i1 = std::max(corner(b, i, axis), corner(b, i, axis + 2));
            const double j0 = std::min(corner(b, j, axis), corner(b, j, axis + 2)), j1 = std::max(corner(b, j, axis), corner(b, j, axis + 2));
            lo[axis] = std::max(i0, j0);
            hi[axis] = std::min(i1, j1);
            area_i *= i1 - i0;
            area_j *= j1 - j0;
            inter *= std::max(0.0, hi[axis] - lo[axis]);
        }
        return inter / (area_i + area_j - inter);
    };
    std::vector<double> rows;
    int64_t n = 0;
    for (int64_t b = 0; b < batches; ++b)
        for (int64_t c = 0; c < classes; ++c) {
            // Repeatedly take the best remaining candidate (lowest index on ties), then drop
            // the candidates it overlaps too much.
            std::vector<bool> open(static_cast<size_t>(count));
            for (int64_t i = 0; i < count; ++i)
                open[static_cast<size_t>(i)] = scores.data[static_cast<size_t>((b * classes + c) * count + i)] > score_limit;
            for (int64_t taken = 0; taken < keep; ++taken) {
                int64_t best = -1;
                for (int64_t i = 0; i < count; ++i)
                    if (open[static_cast<size_t>(i)] &&
                        (best < 0 || scores.data[static_cast<size_t>((b * classes + c) * count + i)] >
                                         scores.data[static_cast<size_t>((b * classes + c) * count + best)]))
                        best = i;
                if (best < 0) break;
                rows.insert(rows.end(), {double(b), double(c), double(best)});
                ++n;
                for (int64_t i = 0; i < count; ++i)
                    if (open[static_cast<size_t>(i)] && (i == best || iou(b, best, i) > iou_limit)) open[static_cast<size_t>(i)] = false;
            }
        }
    return {infer::Shape({n, 3}), rows};
}

RefTensor grid_sample(const RefTensor& x, const RefTensor& grid, const std::string& mode, const std::string& padding,
                      bool align_corners) {
    const int64_t n_count = x.shape[0], channels = x.shape[1], h = x.shape[2], w = x.shape[3];
    const int64_t oh = grid.shape[1], ow = grid.shape[2];
    // Reflection folds a coordinate back into [lo, hi] as many times as it takes.
    const auto fold = [](double v, double lo, double hi) {
        const double period = 2 * (hi - lo);
        if (period <= 0) return lo;
        double t = std::fmod(v - lo, period);
        if (t < 0) t += period;
        return t <= hi - lo ? lo + t : hi - (t - (hi - lo));
    };
    const auto coordinate = [&](double g, int64_t size) {
        const double lo = align_corners ? 0.0 : -0.5, hi = align_corners ? double(size - 1) : double(size) - 0.5;
        double v = align_corners ? (g + 1) * double(size - 1) / 2 : ((g + 1) * double(size) - 1) / 2;
        if (mode == "nearest") v = std::nearbyint(v);
        if (v < lo || v > hi) {
            if (padding == "border") v = std::min(std::max(v, 0.0), double(size - 1));
            if (padding == "reflection") v = fold(v, lo, hi);
        }
        return v;
    };
    const auto index = [&](int64_t i, int64_t size) -> int64_t {
        if (i >= 0 && i < size) return i;
        if (padding == "zeros") return -1;
        if (padding == "border") return std::min<int64_t>(std::max<int64_t>(i, 0), size - 1);
        const double lo = align_corners ? 0.0 : -0.5, hi = align_corners ? double(size - 1) : double(size) - 0.5;
        return std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(fold(double(i), lo, hi)), 0), size - 1);
    };
    // Weights of the taps around t: linear (2 taps) or Keys cubic with a = -0.75 (4 taps).
    const auto weights = [&](double t, std::vector<std::pair<int64_t, double>>& taps) {
        taps.clear();
        const double f = std::floor(t), d = t - f;
        if (mode == "nearest") {
            taps.push_back({static_cast<int64_t>(t), 1.0});
        } else if (mode == "bilinear") {
            taps.push_back({static_cast<int64_t>(f), 1 - d});
            taps.push_back({static_cast<int64_t>(f) + 1, d});
        } else {
            const auto keys = [](double s) {
                const double a = -0.75, u = std::abs(s);
                return u <= 1 ? (a + 2) * u * u * u - (a + 3) * u * u + 1
                              : u < 2 ? a * u * u * u - 5 * a * u * u + 8 * a * u - 4 * a : 0.0;
            };
            for (int64_t k = -1; k <= 2; ++k) taps.push_back({static_cast<int64_t>(f) + k, keys(d - double(k))});
        }
    };
    RefTensor out{infer::Shape({n_count, channels, oh, ow}), {}};
    std::vector<std::pair<int64_t, double>> tx, ty;
    for (int64_t n = 0; n < n_count; ++n)
        for (int64_t c = 0; c < channels; ++c)
            for (int64_t i = 0; i < oh; ++i)
                for (int64_t j = 0; j < ow; ++j) {
                    const size_t g = static_cast<size_t>(((n * oh + i) * ow + j) * 2);
                    weights(coordinate(grid.data[g], w), tx);
                    weights(coordinate(grid.data[g + 1], h), ty);
                    double sum = 0;
                    for (const auto& [yy, wy] : ty)
                        for (const auto& [xx, wx] : tx) {
                            const int64_t r = index(yy, h), q = index(xx, w);
                            if (r >= 0 && q >= 0) sum += wy * wx * x.data[static_cast<size_t>(((n * channels + c) * h + r) * w + q)];
                        }
                    out.data.push_back(sum);
                }
    return out;
}

std::vector<RefTensor> unique(const RefTensor& x, std::optional<int64_t> axis, bool sorted) {
    // Slices as index lists into x.data: with an axis, every element whose coordinate along
    // it is s; without, element s alone.
    const int64_t rank = static_cast<int64_t>(x.shape.rank());
    const size_t a = axis ? static_cast<size_t>(normalize_axis(*axis, rank)) : 0;
    const int64_t count = axis ? x.shape[a] : static_cast<int64_t>(x.data.size());
    std::vector<std::vector<double>> slices(static_cast<size_t>(count));
    for (int64_t flat = 0; flat < static_cast<int64_t>(x.data.size()); ++flat) {
        const int64_t s = axis ? unravel(flat, x.shape)[a] : flat;
        slices[static_cast<size_t>(s)].push_back(x.data[static_cast<size_t>(flat)]);
    }
    std::vector<int64_t> reps;  // first occurrence of each distinct slice, in output order
    for (int64_t s = 0; s < count; ++s) {
        bool seen = false;
        for (int64_t r : reps) seen = seen || slices[static_cast<size_t>(r)] == slices[static_cast<size_t>(s)];
        if (!seen) reps.push_back(s);
    }
    if (sorted)
        std::stable_sort(reps.begin(), reps.end(), [&](int64_t p, int64_t q) {
            return slices[static_cast<size_t>(p)] < slices[static_cast<size_t>(q)];
        });
    const auto n = static_cast<int64_t>(reps.size());
    RefTensor indices{infer::Shape({n}), {}}, inverse{infer::Shape({count}), {}}, counts{infer::Shape({n}), {}};
    for (int64_t r : reps) indices.data.push_back(double(r));
    for (int64_t s = 0; s < count; ++s)
        for (int64_t k = 0; k < n; ++k)
            if (slices[static_cast<size_t>(reps[static_cast<size_t>(k)])] == slices[static_cast<size_t>(s)]) inverse.data.push_back(double(k));
    for (int64_t k = 0; k < n; ++k) {
        double c = 0;
        for (double v : inverse.data) c += v == double(k);
        counts.data.push_back(c);
    }
    // Y: x with the axis (or the flattened elements) reduced to the representatives.
    RefTensor y;
    if (!axis) {
        y.shape = infer::Shape({n});
        for (int64_t r : reps) y.data.push_back(x.data[static_cast<size_t>(r)]);
    } else {
        Dims dims = x.shape.dims();
        dims[a] = n;
        y.shape = infer::Shape(dims);
        for (int64_t flat = 0; flat < numel(y.shape); ++flat) {
            Dims index = unravel(flat, y.shape);
            index[a] = reps[static_cast<size_t>(index[a])];
            y.data.push_back(x.data[static_cast<size_t>(ravel(index, x.shape))]);
        }
    }
    return {y, indices, inverse, counts};
}

}  // namespace ref
