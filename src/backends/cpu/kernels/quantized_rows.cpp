#include "backends/cpu/kernels/quantized_rows.hpp"

#include "backends/cpu/kernels/cpu_features.hpp"

#include "backends/cpu/kernels/parallel.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace infer::cpu {

namespace {

// Round to nearest even for |v| < 2^22: adding and taking away 1.5 · 2^23 leaves v rounded in
// f32's own arithmetic, which compilers vectorize (std::nearbyint they call per element).
inline float round_even(float v) {
    constexpr float magic = 12582912.0f;
    return (v + magic) - magic;
}

// Into [0, 255]; NaN to 0 (a cast of NaN to an integer is undefined).
inline float to_u8_range(float v) { return v > 0.0f ? (v < 255.0f ? v : 255.0f) : 0.0f; }

size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

}  // namespace

size_t quantized_rows_bytes(int64_t rows, int64_t stride) {
    const auto r = static_cast<size_t>(rows);
    return align64(r * static_cast<size_t>(stride)) + align64(r * sizeof(float)) + align64(r * sizeof(int32_t));
}

namespace {

// Scale and zero point of the range [low, high] (which holds 0).
void scale_and_zero(float low, float high, float& scale, float& inverse, float& zero) {
    scale = (high - low) / 255.0f;
    if (!(scale > 0.0f)) scale = 1.0f;  // an all-zero row
    inverse = 1.0f / scale;
    zero = to_u8_range(round_even(-low * inverse));
}

// One row's values with a given scale (as its inverse) and zero point, for any CPU.
void quantize_values(const float* in, int64_t k, int64_t stride, uint8_t* out, float inverse, float zero) {
    for (int64_t j = 0; j < k; ++j) out[j] = static_cast<uint8_t>(to_u8_range(round_even(in[j] * inverse) + zero));
    std::memset(out + k, 0, static_cast<size_t>(stride - k));
}

__attribute__((target("avx2"))) void range_avx2(const float* in, int64_t k, float& low, float& high) {
    // min/max with the value second: a NaN operand gives the accumulator back, so NaN is ignored.
    __m256 lo8 = _mm256_setzero_ps(), hi8 = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= k; j += 8) {
        const __m256 v = _mm256_loadu_ps(in + j);
        lo8 = _mm256_min_ps(v, lo8);
        hi8 = _mm256_max_ps(v, hi8);
    }
    alignas(32) float lows[8], highs[8];
    _mm256_store_ps(lows, lo8);
    _mm256_store_ps(highs, hi8);
    float lo = 0.0f, hi = 0.0f;
    for (int i = 0; i < 8; ++i) lo = std::min(lo, lows[i]), hi = std::max(hi, highs[i]);
    for (int64_t t = j; t < k; ++t) lo = std::min(lo, in[t]), hi = std::max(hi, in[t]);
    low = lo;
    high = hi;
}

// The same eight values at a time, with the same f32 operations (x · inverse rounded to nearest
// even, + zero, clamped; NaN to 0 as to_u8_range does), so the same bytes.
__attribute__((target("avx2,fma"))) void quantize_values_avx2(const float* in, int64_t k, int64_t stride, uint8_t* out,
                                                              float inverse, float zero) {
    const __m256 inv8 = _mm256_set1_ps(inverse), zero8 = _mm256_set1_ps(zero), top = _mm256_set1_ps(255.0f);
    const __m256 floor = _mm256_setzero_ps();
    int64_t j = 0;
    for (; j + 8 <= k; j += 8) {
        __m256 q = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(in + j), inv8), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, zero8), floor), top);  // max(NaN, 0) is 0
        const __m256i i32 = _mm256_cvtps_epi32(q);
        const __m128i i16 = _mm_packus_epi32(_mm256_castsi256_si128(i32), _mm256_extracti128_si256(i32, 1));
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + j), _mm_packus_epi16(i16, i16));
    }
    for (; j < k; ++j) out[j] = static_cast<uint8_t>(to_u8_range(round_even(in[j] * inverse) + zero));
    std::memset(out + k, 0, static_cast<size_t>(stride - k));
}

// Rows of X quantized by `row_range(row, low, high)`'s range each, in parallel.
template <class RowRange>
QuantizedRows quantize_each_row(const float* x, int64_t rows, int64_t k, int64_t stride, void* memory,
                                RowRange row_range) {
    auto* base = static_cast<uint8_t*>(memory);
    const auto r = static_cast<size_t>(rows);
    QuantizedRows q{base, nullptr, nullptr};
    q.scale = reinterpret_cast<float*>(base + align64(r * static_cast<size_t>(stride)));
    q.zero = reinterpret_cast<int32_t*>(reinterpret_cast<uint8_t*>(q.scale) + align64(r * sizeof(float)));
    const bool avx2 = has_avx2_fma();
    parallel_for(rows, grain_for(k), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
            const float* in = x + row * k;
            float low = 0, high = 0, scale = 1, inverse = 1, zero = 0;
            row_range(in, low, high);
            scale_and_zero(low, high, scale, inverse, zero);
            if (avx2)
                quantize_values_avx2(in, k, stride, q.values + row * stride, inverse, zero);
            else
                quantize_values(in, k, stride, q.values + row * stride, inverse, zero);
            q.scale[row] = scale;
            q.zero[row] = static_cast<int32_t>(zero);
        }
    });
    return q;
}

}  // namespace

void range_with_zero(const float* x, int64_t n, float& low, float& high) {
    const bool avx2 = has_avx2();
    if (avx2) {
        range_avx2(x, n, low, high);
        return;
    }
    low = high = 0.0f;
    for (int64_t i = 0; i < n; ++i) low = std::min(low, x[i]), high = std::max(high, x[i]);
}

QuantizedRows quantize_rows(const float* x, int64_t rows, int64_t k, int64_t stride, void* memory) {
    return quantize_each_row(x, rows, k, stride, memory,
                             [k](const float* in, float& low, float& high) { range_with_zero(in, k, low, high); });
}

QuantizedRows quantize_rows_in_range(const float* x, int64_t rows, int64_t k, int64_t stride, float low, float high,
                                     void* memory) {
    return quantize_each_row(x, rows, k, stride, memory, [low, high](const float*, float& l, float& h) {
        l = low;
        h = high;
    });
}

}  // namespace infer::cpu
