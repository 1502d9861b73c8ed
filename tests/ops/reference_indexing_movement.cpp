// Float64 references of the indexing family's ops that move elements around without arithmetic (and Range, which makes them).
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ref {

namespace {
int64_t product(const Dims& dims, size_t begin, size_t end) {
    int64_t p = 1;
    for (size_t i = begin; i < end; ++i) p *= dims[i];
    return p;
}
}  // namespace

RefTensor reshape(const RefTensor& x, Dims target, bool allowzero) {
    int64_t known = 1, inferred = -1;
    for (size_t i = 0; i < target.size(); ++i) {
        if (target[i] == 0 && !allowzero) target[i] = x.shape[i];
        if (target[i] == -1) inferred = static_cast<int64_t>(i);
        else known *= target[i];
    }
    if (inferred >= 0) target[static_cast<size_t>(inferred)] = numel(x.shape) / known;
    return {infer::Shape(target), x.data};
}

RefTensor flatten(const RefTensor& x, int64_t axis) {
    const int64_t rank = static_cast<int64_t>(x.shape.rank());
    if (axis < 0) axis += rank;
    const auto& d = x.shape.dims();
    const auto a = static_cast<size_t>(axis);
    return {infer::Shape({product(d, 0, a), product(d, a, d.size())}), x.data};
}

RefTensor transpose(const RefTensor& x, Dims perm) {
    const size_t rank = x.shape.rank();
    if (perm.empty())
        for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
    Dims out_dims;
    for (int64_t p : perm) out_dims.push_back(x.shape[static_cast<size_t>(p)]);
    RefTensor out{infer::Shape(out_dims), {}};
    for (int64_t i = 0; i < numel(out.shape); ++i) {
        const Dims o = unravel(i, out.shape);
        Dims in(rank);
        for (size_t k = 0; k < rank; ++k) in[static_cast<size_t>(perm[k])] = o[k];
        out.data.push_back(x.data[static_cast<size_t>(ravel(in, x.shape))]);
    }
    return out;
}

RefTensor concat(const std::vector<RefTensor>& xs, int64_t axis) {
    const auto a = static_cast<size_t>(normalize_axis(axis, static_cast<int64_t>(xs[0].shape.rank())));
    Dims dims = xs[0].shape.dims();
    dims[a] = 0;
    for (const auto& x : xs) dims[a] += x.shape[a];
    RefTensor out{infer::Shape(dims), {}};
    for (int64_t i = 0; i < numel(out.shape); ++i) {
        Dims index = unravel(i, out.shape);
        size_t which = 0;
        while (index[a] >= xs[which].shape[a]) index[a] -= xs[which++].shape[a];
        out.data.push_back(xs[which].data[static_cast<size_t>(ravel(index, xs[which].shape))]);
    }
    return out;
}

Dims even_split_sizes(int64_t dim, int64_t parts) {
    const int64_t chunk = (dim + parts - 1) / parts;
    Dims sizes;
    for (int64_t left = dim, i = 0; i < parts; ++i, left -= sizes.back())
        sizes.push_back(std::min(chunk, left));
    return sizes;
}

std::vector<RefTensor> split(const RefTensor& x, int64_t axis, const Dims& sizes) {
    const int64_t a = normalize_axis(axis, static_cast<int64_t>(x.shape.rank()));
    std::vector<RefTensor> outs;
    int64_t begin = 0;
    for (int64_t size : sizes) {
        outs.push_back(slice(x, {begin}, {begin + size}, {a}, {1}));
        begin += size;
    }
    return outs;
}

RefTensor slice(const RefTensor& x, const Dims& starts, const Dims& ends, Dims axes, Dims steps) {
    const size_t rank = x.shape.rank();
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    // Per axis: first element taken, stride, count. Unsliced axes take everything.
    Dims first(rank, 0), stride(rank, 1), count = x.shape.dims();
    for (size_t i = 0; i < starts.size(); ++i) {
        const auto a = static_cast<size_t>(normalize_axis(axes[i], static_cast<int64_t>(rank)));
        const int64_t dim = x.shape[a], step = steps[i];
        // Python slice semantics (numpy's PySlice_AdjustIndices), which ONNX follows.
        auto adjust = [&](int64_t v) {
            if (v < 0) v += dim;
            if (step > 0) return std::clamp<int64_t>(v, 0, dim);
            return std::clamp<int64_t>(v, -1, dim - 1);
        };
        const int64_t s = adjust(starts[i]), e = adjust(ends[i]);
        int64_t n = 0;
        if (step > 0 && s < e) n = (e - s - 1) / step + 1;
        if (step < 0 && s > e) n = (s - e - 1) / (-step) + 1;
        first[a] = s;
        stride[a] = step;
        count[a] = n;
    }
    RefTensor out{infer::Shape(count), {}};
    for (int64_t i = 0; i < numel(out.shape); ++i) {
        Dims index = unravel(i, out.shape);
        for (size_t k = 0; k < rank; ++k) index[k] = first[k] + index[k] * stride[k];
        out.data.push_back(x.data[static_cast<size_t>(ravel(index, x.shape))]);
    }
    return out;
}

RefTensor gather(const RefTensor& data, const RefTensor& indices, int64_t axis) {
    const auto a = static_cast<size_t>(normalize_axis(axis, static_cast<int64_t>(data.shape.rank())));
    const Dims& d = data.shape.dims();
    Dims dims(d.begin(), d.begin() + static_cast<int64_t>(a));
    dims.insert(dims.end(), indices.shape.begin(), indices.shape.end());
    dims.insert(dims.end(), d.begin() + static_cast<int64_t>(a) + 1, d.end());
    RefTensor out{infer::Shape(dims), {}};
    const size_t ir = indices.shape.rank();
    for (int64_t i = 0; i < numel(out.shape); ++i) {
        const Dims o = unravel(i, out.shape);
        Dims idx_index(o.begin() + static_cast<int64_t>(a), o.begin() + static_cast<int64_t>(a + ir));
        auto k = static_cast<int64_t>(indices.data[static_cast<size_t>(ravel(idx_index, indices.shape))]);
        if (k < 0) k += d[a];
        Dims in(o.begin(), o.begin() + static_cast<int64_t>(a));
        in.push_back(k);
        in.insert(in.end(), o.begin() + static_cast<int64_t>(a + ir), o.end());
        out.data.push_back(data.data[static_cast<size_t>(ravel(in, data.shape))]);
    }
    return out;
}

RefTensor unsqueeze(const RefTensor& x, const Dims& axes) {
    const int64_t out_rank = static_cast<int64_t>(x.shape.rank() + axes.size());
    std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
    for (int64_t a : axes) inserted[static_cast<size_t>(normalize_axis(a, out_rank))] = true;
    Dims dims;
    size_t next = 0;
    for (bool one : inserted) dims.push_back(one ? 1 : x.shape[next++]);
    return {infer::Shape(dims), x.data};
}

RefTensor squeeze(const RefTensor& x, const Dims& axes) {
    const int64_t rank = static_cast<int64_t>(x.shape.rank());
    std::vector<bool> removed(static_cast<size_t>(rank), false);
    for (int64_t a : axes) removed[static_cast<size_t>(normalize_axis(a, rank))] = true;
    Dims dims;
    for (size_t i = 0; i < x.shape.rank(); ++i) {
        const bool drop = axes.empty() ? x.shape[i] == 1 : removed[i];
        if (!drop) dims.push_back(x.shape[i]);
    }
    return {infer::Shape(dims), x.data};
}

RefTensor expand(const RefTensor& x, const Dims& shape) {
    const RefTensor ones{infer::Shape(shape), std::vector<double>(static_cast<size_t>(numel(infer::Shape(shape))), 1.0)};
    return binary(x, ones, [](double v, double) { return v; });
}

RefTensor shape_of(const infer::Shape& shape, int64_t start, int64_t end) {
    const int64_t rank = static_cast<int64_t>(shape.rank());
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    RefTensor out{infer::Shape({std::max<int64_t>(end - start, 0)}), {}};
    for (int64_t i = start; i < end; ++i) out.data.push_back(static_cast<double>(shape[static_cast<size_t>(i)]));
    return out;
}

RefTensor constant_of_shape(const Dims& shape, double value) {
    const infer::Shape s(shape);
    return {s, std::vector<double>(static_cast<size_t>(numel(s)), value)};
}

RefTensor range(double start, double limit, double delta) {
    const auto n = std::max<int64_t>(static_cast<int64_t>(std::ceil((limit - start) / delta)), 0);
    RefTensor out{infer::Shape({n}), {}};
    for (int64_t i = 0; i < n; ++i) out.data.push_back(start + static_cast<double>(i) * delta);
    return out;
}

}  // namespace ref
