#include "backends/cpu/kernels/gelu_rows.hpp"

#include "backends/cpu/kernels/cpu_features.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace infer::cpu {

namespace {

__attribute__((target("avx2,fma"))) void gelu_avx2(float* x, int64_t n) {
    const __m256 a1 = _mm256_set1_ps(0.0705230784f), a2 = _mm256_set1_ps(0.0422820123f),
                 a3 = _mm256_set1_ps(0.0092705272f), a4 = _mm256_set1_ps(0.0001520143f),
                 a5 = _mm256_set1_ps(0.0002765672f), a6 = _mm256_set1_ps(0.0000430638f);
    const __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f), rsqrt2 = _mm256_set1_ps(float(M_SQRT1_2));
    const __m256 sign_bit = _mm256_set1_ps(-0.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 z = _mm256_mul_ps(v, rsqrt2);
        const __m256 t = _mm256_andnot_ps(sign_bit, z);  // |z|
        // 1 + a1 t + ... + a6 t^6 by Horner, then its 16th power by four squarings.
        __m256 p = _mm256_fmadd_ps(a6, t, a5);
        p = _mm256_fmadd_ps(p, t, a4);
        p = _mm256_fmadd_ps(p, t, a3);
        p = _mm256_fmadd_ps(p, t, a2);
        p = _mm256_fmadd_ps(p, t, a1);
        p = _mm256_fmadd_ps(p, t, one);
        p = _mm256_mul_ps(p, p);
        p = _mm256_mul_ps(p, p);
        p = _mm256_mul_ps(p, p);
        p = _mm256_mul_ps(p, p);
        __m256 erf = _mm256_sub_ps(one, _mm256_div_ps(one, p));
        erf = _mm256_or_ps(erf, _mm256_and_ps(z, sign_bit));  // erf is odd
        _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, erf)));
    }
    for (; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * float(M_SQRT1_2)));
}

}  // namespace

void gelu_in_place(float* x, int64_t n) {
    const bool avx2 = has_avx2_fma();
    if (avx2) {
        gelu_avx2(x, n);
        return;
    }
    for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * float(M_SQRT1_2)));
}

void gelu_tanh_in_place(float* x, int64_t n) {
    const float k = std::sqrt(2.0f / float(M_PI));
    for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::tanh(k * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}

RowActivation row_activation_named(const std::string& name) {
    return name == "Relu"       ? RowActivation::relu
           : name == "Gelu"     ? RowActivation::gelu
           : name == "GeluTanh" ? RowActivation::gelu_tanh
                                : RowActivation::none;
}

void activate_row(float* x, int64_t n, RowActivation activation) {
    switch (activation) {
        case RowActivation::none: return;
        case RowActivation::relu:
            for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], 0.0f);  // NaN stays NaN
            return;
        case RowActivation::gelu: gelu_in_place(x, n); return;
        case RowActivation::gelu_tanh: gelu_tanh_in_place(x, n); return;
    }
}

}  // namespace infer::cpu
