#pragma once
// e^x for a vector of floats, for kernels compiled for AVX2 + FMA (8 lanes: exp_avx2) or
// AVX-512 (16 lanes: exp_avx512): Softmax's rows are most of a small transformer's attention
// time, and Eigen's exp in the baseline build uses four-float SSE2 vectors. Within 2 ulp of
// std::exp for x in [-87.3, 88]; below, 0 (where std::exp gives subnormals), above, infinity
// (std::exp's own overflow begins at 88.72); NaN stays NaN.
// The arithmetic is written once on GCC's vector types (vector_lanes.hpp) and inlined into
// each target-specific caller, which compiles it for its own ISA.
#include "backends/cpu/kernels/vector_lanes.hpp"

namespace infer::cpu {

template <class V>
[[gnu::always_inline]] inline V exp_lanes(V x) {
    using I = IntLanes<V>;
    // n = round(x·log2 e) stays in [-126, 127], so 2^n is a normal float.
    const V highest = splat<V>(88.0f), lowest = splat<V>(-87.3365f);
    V clamped = x > lowest ? x : lowest;  // NaN: lowest, put back at the end
    clamped = clamped < highest ? clamped : highest;
    // Rounded to the nearest integer by adding and taking away 1.5·2^23 (|x·log2 e| < 2^22).
    const V n = (clamped * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    // x = n·ln2 + r with |r| <= ln2 / 2; ln2 in two parts so that n·ln2 loses nothing.
    V r = clamped - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    // e^r = 1 + r + r²·P(r), P of degree 5 with minimax coefficients for |r| <= ln2 / 2 (the
    // classic single-precision fit; Taylor's 1/k! leave 2.5 ulp), then 2^n put in the exponent.
    V p = splat<V>(1.9875691500e-4f);
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + (r + 1.0f);
    const I exponent = (__builtin_convertvector(n, I) + 127) << 23;
    V result = p * (V)exponent;
    result = x < lowest ? splat<V>(0.0f) : result;
    result = x > highest ? splat<V>(__builtin_inff()) : result;
    return x != x ? x : result;  // NaN in, NaN out
}

__attribute__((target("avx2,fma"), always_inline)) inline __m256 exp_avx2(__m256 x) { return exp_lanes(x); }
__attribute__((target("avx512f"), always_inline)) inline __m512 exp_avx512(__m512 x) { return exp_lanes(x); }

}  // namespace infer::cpu
