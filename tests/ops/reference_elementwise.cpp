// References for elementwise ops: unary maps, broadcasting binary ops and Where.
#include "reference.hpp"

#include <cmath>
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

}  // namespace ref
