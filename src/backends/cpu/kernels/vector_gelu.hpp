#pragma once
// GELU (the exact, erf one) of a vector of floats, for kernels compiled for AVX2 + FMA (8 lanes:
// gelu_avx2) or AVX-512 (16 lanes: gelu_avx512): 0.5·x·(1 + erf(x/√2)), erf from Abramowitz
// and Stegun's 7.1.28, 1 - (1 + a1·t + … + a6·t⁶)^-16 for t = |x/√2|, error below 3e-7, no exp.
// An epilogue that applies it in registers saves a second pass over the tile it wrote. Written
// once on GCC's vector types (vector_lanes.hpp).
#include "backends/cpu/kernels/vector_lanes.hpp"

#include <cmath>

namespace infer::cpu {

template <class V>
[[gnu::always_inline]] inline V gelu_lanes(V v) {
    using I = IntLanes<V>;
    const I sign_bit = (I)splat<V>(-0.0f);
    const V z = v * float(M_SQRT1_2);
    const V t = (V)((I)z & ~sign_bit);  // |z|
    // 1 + a1 t + ... + a6 t^6 by Horner, then its 16th power by four squarings.
    V p = t * 0.0000430638f + 0.0002765672f;
    p = p * t + 0.0001520143f;
    p = p * t + 0.0092705272f;
    p = p * t + 0.0422820123f;
    p = p * t + 0.0705230784f;
    p = p * t + 1.0f;
    p = p * p;
    p = p * p;
    p = p * p;
    p = p * p;
    V erf = 1.0f - 1.0f / p;
    erf = (V)((I)erf | ((I)z & sign_bit));  // erf is odd
    return (0.5f * v) * (1.0f + erf);
}

__attribute__((target("avx2,fma"), always_inline)) inline __m256 gelu_avx2(__m256 v) { return gelu_lanes(v); }
__attribute__((target("avx512f"), always_inline)) inline __m512 gelu_avx512(__m512 v) { return gelu_lanes(v); }

}  // namespace infer::cpu
