// Float64 references of the math family's arithmetic: unary maps, broadcasting binary ops,
// Where, the matrix products and the core reductions.
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

namespace ref {

RefTensor unary(const RefTensor& x, const std::function<double(double)>& f) {
    RefTensor out{x.shape, {}};
    out.data.reserve(x.data.size());
    for (double v : x.data) out.data.push_back(f(v));
    return out;
}

RefTensor binary(const RefTensor& a, const RefTensor& b,
                 const std::function<double(double, double)>& f) {
    RefTensor out{broadcast_shapes(a.shape, b.shape), {}};
    const int64_t n = numel(out.shape);
    for (int64_t i = 0; i < n; ++i) {
        const Dims index = unravel(i, out.shape);
        out.data.push_back(f(broadcast_at(a, index), broadcast_at(b, index)));
    }
    return out;
}

RefTensor where(const RefTensor& cond, const RefTensor& x, const RefTensor& y) {
    RefTensor out{broadcast_shapes(broadcast_shapes(cond.shape, x.shape), y.shape), {}};
    const int64_t n = numel(out.shape);
    for (int64_t i = 0; i < n; ++i) {
        const Dims index = unravel(i, out.shape);
        out.data.push_back(broadcast_at(cond, index) != 0 ? broadcast_at(x, index)
                                                          : broadcast_at(y, index));
    }
    return out;
}

double gelu(double x, bool tanh_approximation) {
    if (tanh_approximation) {
        const double k = std::sqrt(2.0 / std::numbers::pi);
        return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
    }
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

RefTensor matmul(const RefTensor& a_in, const RefTensor& b_in) {
    // 1-D operands become matrices ([K] -> [1,K] on the left, [K,1] on the right) and the
    // added dimension is dropped from the result, as numpy.matmul does.
    RefTensor a = a_in, b = b_in;
    if (a.shape.rank() == 1) a.shape = infer::Shape({1, a.shape[0]});
    if (b.shape.rank() == 1) b.shape = infer::Shape({b.shape[0], 1});
    const size_t ra = a.shape.rank(), rb = b.shape.rank();
    const int64_t m = a.shape[ra - 2], k = a.shape[ra - 1], n = b.shape[rb - 1];
    const infer::Shape batch_a(Dims(a.shape.begin(), a.shape.end() - 2));
    const infer::Shape batch_b(Dims(b.shape.begin(), b.shape.end() - 2));
    const infer::Shape batch = broadcast_shapes(batch_a, batch_b);
    Dims out_dims = batch.dims();
    out_dims.push_back(m);
    out_dims.push_back(n);
    RefTensor out{infer::Shape(out_dims), {}};
    for (int64_t i = 0; i < numel(out.shape); ++i) {
        const Dims o = unravel(i, out.shape);
        Dims ia(o.end() - 2 - static_cast<int64_t>(batch_a.rank()), o.end());
        Dims ib(o.end() - 2 - static_cast<int64_t>(batch_b.rank()), o.end());
        // Broadcast batch dimensions of size 1.
        for (size_t d = 0; d < batch_a.rank(); ++d) if (batch_a[d] == 1) ia[d] = 0;
        for (size_t d = 0; d < batch_b.rank(); ++d) if (batch_b[d] == 1) ib[d] = 0;
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
            ia[ia.size() - 1] = p;                        // a[..., row, p]
            ib[ib.size() - 2] = p;                        // b[..., p, col]
            ib[ib.size() - 1] = o[o.size() - 1];
            sum += a.data[static_cast<size_t>(ravel(ia, a.shape))] *
                   b.data[static_cast<size_t>(ravel(ib, b.shape))];
        }
        out.data.push_back(sum);
    }
    Dims final_dims = batch.dims();
    if (a_in.shape.rank() != 1) final_dims.push_back(m);
    if (b_in.shape.rank() != 1) final_dims.push_back(n);
    out.shape = infer::Shape(final_dims);
    return out;
}

RefTensor gemm(const RefTensor& a, const RefTensor& b, const RefTensor* c, bool trans_a,
               bool trans_b, double alpha, double beta) {
    const int64_t m = trans_a ? a.shape[1] : a.shape[0], k = trans_a ? a.shape[0] : a.shape[1];
    const int64_t n = trans_b ? b.shape[0] : b.shape[1];
    RefTensor out{infer::Shape({m, n}), {}};
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (int64_t p = 0; p < k; ++p) {
                const double av = trans_a ? a.data[static_cast<size_t>(p * m + i)] : a.data[static_cast<size_t>(i * k + p)];
                const double bv = trans_b ? b.data[static_cast<size_t>(j * k + p)] : b.data[static_cast<size_t>(p * n + j)];
                sum += av * bv;
            }
            double value = alpha * sum;
            if (c) value += beta * broadcast_at(*c, {i, j});
            out.data.push_back(value);
        }
    }
    return out;
}

RefTensor reduce(const RefTensor& x, Reduction kind, Dims axes, bool keepdims,
                 bool noop_with_empty_axes) {
    const int64_t rank = static_cast<int64_t>(x.shape.rank());
    if (axes.empty() && noop_with_empty_axes) return x;
    std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
    for (int64_t a : axes) reduced[static_cast<size_t>(normalize_axis(a, rank))] = true;
    Dims kept_dims;  // the output shape with reduced axes as 1
    for (size_t i = 0; i < x.shape.rank(); ++i) kept_dims.push_back(reduced[i] ? 1 : x.shape[i]);
    const infer::Shape kept(kept_dims);
    std::vector<double> acc(static_cast<size_t>(numel(kept)),
                            kind == Reduction::max ? -std::numeric_limits<double>::infinity() : 0.0);
    std::vector<int64_t> count(acc.size(), 0);
    for (int64_t i = 0; i < numel(x.shape); ++i) {
        Dims index = unravel(i, x.shape);
        for (size_t d = 0; d < index.size(); ++d) if (reduced[d]) index[d] = 0;
        const auto o = static_cast<size_t>(ravel(index, kept));
        const double v = x.data[static_cast<size_t>(i)];
        acc[o] = kind == Reduction::max ? std::max(acc[o], v) : acc[o] + v;
        ++count[o];
    }
    if (kind == Reduction::mean)
        for (size_t o = 0; o < acc.size(); ++o) acc[o] /= static_cast<double>(count[o]);
    Dims out_dims;
    for (size_t i = 0; i < x.shape.rank(); ++i)
        if (!reduced[i] || keepdims) out_dims.push_back(kept_dims[i]);
    return {infer::Shape(out_dims), acc};
}

}  // namespace ref
