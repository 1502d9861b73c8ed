#include "backends/cpu/kernels/quantized_rows.hpp"

#include "backends/cpu/kernels/cpu_features.hpp"

#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/vector_lanes.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace infer::cpu {

namespace {

// x · inverse rounded to the nearest integer, ties to even (the default rounding mode). Not the
// add-and-subtract-1.5·2^23 trick: with FMA the compiler fuses the product into that add, which
// then rounds the exact product, and a product near a tie could land on the other integer than
// in the vector paths, which round the product first.
inline float round_product(float x, float inverse) { return std::nearbyint(x * inverse); }

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
    zero = to_u8_range(round_product(-low, inverse));
}

// One row's values with a given scale (as its inverse) and zero point, for any CPU.
void quantize_values(const float* in, int64_t k, int64_t stride, uint8_t* out, float inverse, float zero) {
    for (int64_t j = 0; j < k; ++j) out[j] = static_cast<uint8_t>(to_u8_range(round_product(in[j], inverse) + zero));
    std::memset(out + k, 0, static_cast<size_t>(stride - k));
}

// The least and greatest of in[0, k) and 0 in V's lanes. `v < low ? v : low` keeps the
// accumulator where v is NaN, so NaN is ignored.
template <class V>
[[gnu::always_inline]] inline void range_lanes(const float* in, int64_t k, float& low, float& high) {
    V lo = splat<V>(0.0f), hi = splat<V>(0.0f);
    int64_t j = 0;
    for (; j + kLanes<V> <= k; j += kLanes<V>) {
        const V v = load_lanes<V>(in + j);
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    float l = -lane_max(-lo), h = lane_max(hi);
    for (; j < k; ++j) l = std::min(l, in[j]), h = std::max(h, in[j]);
    low = l;
    high = h;
}

// Each lane of x · inverse rounded to the nearest integer, ties to even, for |x · inverse| <
// 2^22: adding and taking away 1.5 · 2^23. The empty asm holds the product in a register, so
// the compiler cannot fuse it into the add (an FMA would round the exact product instead).
template <class V>
[[gnu::always_inline]] inline V rounded_product(V x, float inverse) {
    V product = x * inverse;
    asm("" : "+v"(product));
    return (product + 12582912.0f) - 12582912.0f;
}

// The same as quantize_values a vector at a time, with the same f32 operations (x · inverse
// rounded to nearest even, + zero, clamped; NaN to 0 as to_u8_range does), so the same bytes.
template <class V>
[[gnu::always_inline]] inline void quantize_values_lanes(const float* in, int64_t k, int64_t stride, uint8_t* out,
                                                         float inverse, float zero) {
    using Bytes = ByteLanes<V>;
    int64_t j = 0;
    for (; j + kLanes<V> <= k; j += kLanes<V>) {
        V q = rounded_product(load_lanes<V>(in + j), inverse) + zero;
        q = q > 0.0f ? (q < 255.0f ? q : 255.0f) : 0.0f;
        const Bytes bytes = __builtin_convertvector(__builtin_convertvector(q, IntLanes<V>), Bytes);
        std::memcpy(out + j, &bytes, sizeof bytes);
    }
    for (; j < k; ++j) out[j] = static_cast<uint8_t>(to_u8_range(round_product(in[j], inverse) + zero));
    std::memset(out + k, 0, static_cast<size_t>(stride - k));
}

__attribute__((target("avx2,fma"))) void range_avx2(const float* in, int64_t k, float& low, float& high) {
    range_lanes<__m256>(in, k, low, high);
}
__attribute__((target("avx512f,avx512bw,avx512vl"))) void range_avx512(const float* in, int64_t k, float& low, float& high) {
    range_lanes<__m512>(in, k, low, high);
}
__attribute__((target("avx2,fma"))) void quantize_values_avx2(const float* in, int64_t k, int64_t stride, uint8_t* out,
                                                              float inverse, float zero) {
    quantize_values_lanes<__m256>(in, k, stride, out, inverse, zero);
}
__attribute__((target("avx512f,avx512bw,avx512vl"))) void quantize_values_avx512(const float* in, int64_t k, int64_t stride,
                                                                                 uint8_t* out, float inverse, float zero) {
    quantize_values_lanes<__m512>(in, k, stride, out, inverse, zero);
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
    const VectorIsa isa = byte_vector_isa();
    parallel_for(rows, grain_for(k), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
            const float* in = x + row * k;
            float low = 0, high = 0, scale = 1, inverse = 1, zero = 0;
            row_range(in, low, high);
            scale_and_zero(low, high, scale, inverse, zero);
            uint8_t* out = q.values + row * stride;
            switch (isa) {
            case VectorIsa::avx512: quantize_values_avx512(in, k, stride, out, inverse, zero); break;
            case VectorIsa::avx2: quantize_values_avx2(in, k, stride, out, inverse, zero); break;
            case VectorIsa::scalar: quantize_values(in, k, stride, out, inverse, zero);
            }
            q.scale[row] = scale;
            q.zero[row] = static_cast<int32_t>(zero);
        }
    });
    return q;
}

}  // namespace

void range_with_zero(const float* x, int64_t n, float& low, float& high) {
    switch (byte_vector_isa()) {
    case VectorIsa::avx512: return range_avx512(x, n, low, high);
    case VectorIsa::avx2: return range_avx2(x, n, low, high);
    case VectorIsa::scalar: break;
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
