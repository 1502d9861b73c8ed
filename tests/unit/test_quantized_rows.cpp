// quantize_rows (the int8 products' dynamic quantization of A, one range per row) on this CPU's
// widest path (AVX-512, AVX2 or plain C++) against the rule written out here in double: the
// row's range widened to hold 0 and NaN ignored, scale = range / 255, zero = round(-low / scale),
// q = clamp(round_even(x / scale) + zero, 0, 255), NaN to 0. Rows of lengths that leave vector
// tails, with NaN, infinities and all-zero rows among them.
#include "backends/cpu/kernels/quantized_rows.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

struct Expected {
    std::vector<uint8_t> values;
    float scale;
    int32_t zero;
};

Expected quantize_row_reference(const float* x, int64_t k) {
    float low = 0, high = 0;
    for (int64_t j = 0; j < k; ++j)
        if (!std::isnan(x[j])) low = std::min(low, x[j]), high = std::max(high, x[j]);
    float scale = (high - low) / 255.0f;
    if (!(scale > 0.0f)) scale = 1.0f;
    const float inverse = 1.0f / scale;
    const auto clamp_u8 = [](float v) { return v > 0.0f ? std::min(v, 255.0f) : 0.0f; };  // NaN to 0
    const float zero = clamp_u8(std::nearbyint(-low * inverse));
    Expected e{std::vector<uint8_t>(static_cast<size_t>(k)), scale, static_cast<int32_t>(zero)};
    for (int64_t j = 0; j < k; ++j)
        e.values[static_cast<size_t>(j)] = static_cast<uint8_t>(clamp_u8(std::nearbyint(x[j] * inverse) + zero));
    return e;
}

}  // namespace

TEST_CASE("quantize_rows gives each row the reference's bytes, scale and zero point", "[int8]") {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    for (const int64_t k : {1, 7, 16, 33, 64, 100, 384}) {
        const int64_t rows = 9, stride = (k + 63) / 64 * 64;
        std::vector<float> x(static_cast<size_t>(rows * k));
        for (float& v : x) v = normal(rng);
        for (int64_t j = 0; j < k; ++j) x[static_cast<size_t>(2 * k + j)] = std::abs(x[static_cast<size_t>(2 * k + j)]);  // all > 0
        std::fill(x.begin() + 3 * k, x.begin() + 4 * k, 0.0f);                       // all zero
        x[static_cast<size_t>(4 * k + k / 2)] = nan;                                  // NaN ignored, quantized to 0
        x[static_cast<size_t>(5 * k)] = inf;                                          // the range is infinite
        x[static_cast<size_t>(6 * k + k - 1)] = -inf;
        for (int64_t j = 0; j < k; ++j) x[static_cast<size_t>(7 * k + j)] *= 1e6f;  // large values
        INFO("k " << k);
        std::vector<uint8_t> memory(infer::cpu::quantized_rows_bytes(rows, stride));
        const infer::cpu::QuantizedRows q = infer::cpu::quantize_rows(x.data(), rows, k, stride, memory.data());
        for (int64_t r = 0; r < rows; ++r) {
            INFO("row " << r);
            const Expected e = quantize_row_reference(x.data() + r * k, k);
            CHECK(q.scale[r] == e.scale);
            CHECK(q.zero[r] == e.zero);
            for (int64_t j = 0; j < k; ++j) {
                INFO("value " << j << " of " << x[static_cast<size_t>(r * k + j)]);
                CHECK(int{q.values[r * stride + j]} == int{e.values[static_cast<size_t>(j)]});
            }
            for (int64_t j = k; j < stride; ++j) CHECK(q.values[r * stride + j] == 0);  // K's padding
        }
    }
}
