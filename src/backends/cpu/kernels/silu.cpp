// Silu (fused from x · Sigmoid(x), fuse_silu.cpp): y = x / (1 + e^-x), one pass instead of two,
// eight lanes at a time with AVX2. e^t comes from t = n·ln2 + r (|r| ≤ ln2/2), 2^n built in the
// exponent bits and e^r from its degree-6 Taylor polynomial (relative error below 2e-7 there);
// t is clamped to [-87, 88] so that 2^n stays a normal float, where x / (1 + e^-x) has long
// reached x or 0 (-0 for negative x, as the unfused ops give).
#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/register.hpp"

#include <immintrin.h>

#include <cmath>

namespace infer::cpu {

namespace {

__attribute__((target("avx2,fma"))) inline __m256 exp_avx2(__m256 t) {
    t = _mm256_min_ps(_mm256_max_ps(t, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.0f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(t, _mm256_set1_ps(1.44269504f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    // r = t - n·ln2 in two steps (ln2's high part exact in float), so that r keeps its bits.
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145752f), t);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.42860677e-6f), r);
    __m256 p = _mm256_set1_ps(1.0f / 720.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    const __m256i scale = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(scale));
}

// Returns where it stopped (a multiple of 8 from `begin`).
__attribute__((target("avx2,fma"))) int64_t silu_avx2(const float* x, float* y, int64_t begin, int64_t end) {
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    int64_t i = begin;
    for (; i + 8 <= end; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 e = exp_avx2(_mm256_xor_ps(v, sign));  // e^-x
        __m256 out = _mm256_div_ps(v, _mm256_add_ps(one, e));
        // NaN in, NaN out (the clamp inside exp would hide it).
        out = _mm256_blendv_ps(out, v, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
        _mm256_storeu_ps(y + i, out);
    }
    return i;
}

void silu_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const float* px = x.data<float>();
    float* py = ctx.output(0).data<float>();
    const bool avx2 = has_avx2_fma();
    parallel_for(x.numel(), 16384, [&](int64_t begin, int64_t end) {
        if (avx2) begin = silu_avx2(px, py, begin, end);
        for (int64_t i = begin; i < end; ++i) py[i] = px[i] / (1.0f + std::exp(-px[i]));
    });
}

}  // namespace

void register_silu_kernel(KernelRegistry& r) { add_floating(r, "Silu", silu_kernel); }

}  // namespace infer::cpu
