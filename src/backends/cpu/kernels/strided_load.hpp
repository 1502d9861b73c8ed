#pragma once
// Eight floats a stride of 1 or 2 apart in one AVX2 register, for the window kernels that step
// along a row (depthwise convolutions, max pooling).
#include <immintrin.h>

#include <cstdint>

namespace infer::cpu {

// x[stride·i] for i < 8: one load for stride 1; for stride 2, two loads and their even lanes.
__attribute__((target("avx2"))) inline __m256 strided8(const float* x, int64_t stride) {
    if (stride == 1) return _mm256_loadu_ps(x);
    const __m256 a = _mm256_loadu_ps(x), b = _mm256_loadu_ps(x + 8);
    const __m256 evens = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));  // a0 a2 b0 b2 | a4 a6 b4 b6
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(evens), _MM_SHUFFLE(3, 1, 2, 0)));
}

}  // namespace infer::cpu
