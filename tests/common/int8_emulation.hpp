#pragma once
// What precision int8 computes for x · w, done step by step in plain C++ for tests to compare
// with: w quantized symmetric per column (s8, scale max|w[:, c]| / 127), each row of x
// quantized asymmetric (u8, scale (max - min) / 255 over a range that holds 0, zero point
// rounded), exact integer sums, then dequantized. Shared by the op test's reference
// (tests/ops) and the unit tests of the int8 path (tests/unit/test_int8.cpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace infer_test {

// x is [rows, k] and w [k, n], row-major; returns [rows, n] without bias.
inline std::vector<double> int8_products(const std::vector<float>& x, const std::vector<float>& w, int64_t rows, int64_t k,
                                         int64_t n) {
    std::vector<float> wscale(static_cast<size_t>(n), 0.0f);
    for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j)
            wscale[static_cast<size_t>(j)] = std::max(wscale[static_cast<size_t>(j)], std::fabs(w[static_cast<size_t>(i * n + j)]));
    for (float& s : wscale) s = s > 0 ? s / 127.0f : 1.0f;
    std::vector<double> y;
    y.reserve(static_cast<size_t>(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
        const float* row = x.data() + r * k;
        float lo = 0, hi = 0;
        for (int64_t j = 0; j < k; ++j) lo = std::min(lo, row[j]), hi = std::max(hi, row[j]);
        float scale = (hi - lo) / 255.0f;
        if (!(scale > 0)) scale = 1.0f;
        const float inverse = 1.0f / scale;
        const float zero = std::clamp(std::nearbyint(-lo * inverse), 0.0f, 255.0f);
        for (int64_t c = 0; c < n; ++c) {
            int64_t acc = 0;
            for (int64_t j = 0; j < k; ++j) {
                const float qa = std::clamp(std::nearbyint(row[j] * inverse) + zero, 0.0f, 255.0f);
                const float qw = std::clamp(std::nearbyint(w[static_cast<size_t>(j * n + c)] / wscale[static_cast<size_t>(c)]),
                                            -127.0f, 127.0f);
                acc += (static_cast<int64_t>(qa) - static_cast<int64_t>(zero)) * static_cast<int64_t>(qw);
            }
            y.push_back(static_cast<double>(acc) * scale * wscale[static_cast<size_t>(c)]);
        }
    }
    return y;
}

}  // namespace infer_test
