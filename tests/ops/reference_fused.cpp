// Float64 references for the fused family (core/ops/table_fused.cpp), written from the ops'
// definitions as the chains of ONNX ops they replace.
#include "reference.hpp"

#include "int8_emulation.hpp"

#include <algorithm>
#include <cmath>

namespace ref {

RefTensor attention(const RefTensor& q, const RefTensor& k, const RefTensor& v, const RefTensor* bias,
                    int64_t heads, double scale) {
    const int64_t batch = q.shape[0], sq = q.shape[1], sk = k.shape[1];
    const int64_t d = q.shape[2] / heads, dv = v.shape[2] / heads;
    RefTensor out{infer::Shape({batch, sq, heads * dv}), {}};
    out.data.assign(static_cast<size_t>(numel(out.shape)), 0.0);
    std::vector<double> p(static_cast<size_t>(sk));
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t i = 0; i < sq; ++i) {
                double max = -INFINITY;
                for (int64_t j = 0; j < sk; ++j) {
                    double s = 0;
                    for (int64_t c = 0; c < d; ++c)
                        s += q.data[(b * sq + i) * heads * d + h * d + c] * k.data[(b * sk + j) * heads * d + h * d + c];
                    s *= scale;
                    if (bias) s += broadcast_at(*bias, {b, h, i, j});
                    p[j] = s;
                    max = std::max(max, s);
                }
                double sum = 0;
                for (double& e : p) sum += e = std::exp(e - max);
                for (int64_t c = 0; c < dv; ++c) {
                    double acc = 0;
                    for (int64_t j = 0; j < sk; ++j) acc += p[j] / sum * v.data[(b * sk + j) * heads * dv + h * dv + c];
                    out.data[(b * sq + i) * heads * dv + h * dv + c] = acc;
                }
            }
    return out;
}

// The steps are taken in f32 as the op defines them, so that the roundings to integers agree
// with the kernel's exactly; what is left is the dequantization's f32 rounding.
RefTensor quantized_matmul(const RefTensor& a, const RefTensor& b) {
    const int64_t k = b.shape[0], n = b.shape[1];
    std::vector<int64_t> dims = a.shape.dims();
    dims.back() = n;
    const std::vector<float> x(a.data.begin(), a.data.end()), w(b.data.begin(), b.data.end());
    return RefTensor{infer::Shape(dims), infer_test::int8_products(x, w, numel(a.shape) / k, k, n)};
}

}  // namespace ref
