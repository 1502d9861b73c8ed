#pragma once
// e^x for eight floats at a time (AVX2 + FMA), for kernels compiled with that target: Softmax's
// rows are most of a small transformer's attention time, and Eigen's exp in the baseline build
// uses four-float SSE2 vectors. Within 2 ulp of std::exp for x in [-87.3, 88]; below, 0 (where
// std::exp gives subnormals), above, infinity (std::exp's own overflow begins at 88.72); NaN
// stays NaN.
#include <immintrin.h>

namespace infer::cpu {

__attribute__((target("avx2,fma"), always_inline)) inline __m256 exp_avx2(__m256 x) {
    // n = round(x·log2 e) stays in [-126, 127], so 2^n is a normal float.
    const __m256 highest = _mm256_set1_ps(88.0f), lowest = _mm256_set1_ps(-87.3365f);
    const __m256 clamped = _mm256_min_ps(_mm256_max_ps(x, lowest), highest);
    // x = n·ln2 + r with |r| <= ln2 / 2; ln2 in two parts so that n·ln2 loses nothing.
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(clamped, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), clamped);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    // e^r = 1 + r + r²·P(r), P of degree 5 with minimax coefficients for |r| <= ln2 / 2 (the
    // classic single-precision fit; Taylor's 1/k! leave 2.5 ulp), then 2^n put in the exponent.
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i exponent = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    __m256 result = _mm256_mul_ps(p, _mm256_castsi256_ps(exponent));
    result = _mm256_blendv_ps(result, _mm256_setzero_ps(), _mm256_cmp_ps(x, lowest, _CMP_LT_OQ));
    result = _mm256_blendv_ps(result, _mm256_set1_ps(__builtin_inff()), _mm256_cmp_ps(x, highest, _CMP_GT_OQ));
    return _mm256_blendv_ps(result, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));  // NaN in, NaN out
}

}  // namespace infer::cpu
