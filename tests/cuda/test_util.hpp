#pragma once
// Helpers for the cuda tests: random data that is never zero, and error norms.
#include <infer/infer.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace cuda_test {

// Uniform in ±[low, high]: no zeros, which would hide unwritten or misindexed elements.
inline std::vector<float> random_values(size_t n, uint32_t seed, float low = 0.1f,
                                        float high = 1.0f) {
    std::mt19937 engine(seed);
    std::uniform_real_distribution<float> magnitude(low, high);
    std::bernoulli_distribution negative(0.5);
    std::vector<float> v(n);
    for (float& x : v) x = negative(engine) ? -magnitude(engine) : magnitude(engine);
    return v;
}

inline std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
    std::mt19937 engine(seed);
    std::vector<uint8_t> v(n);
    for (uint8_t& b : v) b = static_cast<uint8_t>(engine());
    return v;
}

// ‖a − b‖ / ‖b‖; infinity when either holds a NaN or the sizes differ.
inline double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size()) return INFINITY;
    double diff = 0, norm = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) || std::isnan(b[i])) return INFINITY;
        diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        norm += double(b[i]) * b[i];
    }
    return norm == 0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

}  // namespace cuda_test
