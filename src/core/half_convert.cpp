#include "core/half_convert.hpp"

#include "core/cpu_features.hpp"

#include <infer/dtype.hpp>

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace infer::detail {

namespace {

// One binary runs on CPUs with and without F16C, so the vector paths are chosen at run time
// (cpu_features.hpp).
__attribute__((target("avx,f16c"))) void half_to_float_f16c(const uint16_t* src, float* dst,
                                                            size_t count) {
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    for (; i < count; ++i) dst[i] = half_bits_to_float(src[i]);
}

__attribute__((target("avx,f16c"))) void float_to_half_f16c(const float* src, uint16_t* dst,
                                                            size_t count) {
    size_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
    }
    for (; i < count; ++i) dst[i] = float_to_half_bits(src[i]);
}

// The same rounding (to nearest even, NaN kept quiet with its sign and top payload bits) 16
// values at a time in integer lanes: vcvtneps2bf16 would flush denormals, which the scalar loop
// keeps. The bf16 convolutions narrow every output tile through here.
__attribute__((target("avx512f"))) size_t float_to_bfloat16_avx512(const float* src, uint16_t* dst, size_t count) {
    const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), infinity = _mm512_set1_epi32(0x7f800000);
    const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        const __m512i f = _mm512_loadu_si512(src + i);
        const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(f, magnitude), infinity);
        const __m512i high = _mm512_srli_epi32(f, 16);
        const __m512i rounded =
            _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(f, bias), _mm512_and_si512(high, one)), 16);
        const __m512i bits = _mm512_mask_blend_epi32(nan, rounded, _mm512_or_si512(high, quiet));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), _mm512_cvtepi32_epi16(bits));
    }
    return i;
}

}  // namespace

void half_to_float_serial(const uint16_t* src, float* dst, size_t count) {
    if (cpu_has_f16c()) {
        half_to_float_f16c(src, dst, count);
        return;
    }
    for (size_t i = 0; i < count; ++i) dst[i] = half_bits_to_float(src[i]);
}

void float_to_half_serial(const float* src, uint16_t* dst, size_t count) {
    if (cpu_has_f16c()) {
        float_to_half_f16c(src, dst, count);
        return;
    }
    for (size_t i = 0; i < count; ++i) dst[i] = float_to_half_bits(src[i]);
}

// Written out here (rather than calling dtype.hpp's) so the compiler can vectorize the loops.
void bfloat16_to_float_serial(const uint16_t* src, float* dst, size_t count) {
    for (size_t i = 0; i < count; ++i) {
        const uint32_t bits = static_cast<uint32_t>(src[i]) << 16;
        std::memcpy(dst + i, &bits, sizeof bits);
    }
}

void float_to_bfloat16_serial(const float* src, uint16_t* dst, size_t count) {
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    size_t i = avx512 ? float_to_bfloat16_avx512(src, dst, count) : 0;
    for (; i < count; ++i) {
        uint32_t f;
        std::memcpy(&f, src + i, sizeof f);
        const bool nan = (f & 0x7fffffffu) > 0x7f800000u;
        const uint32_t rounded = (f + 0x7fffu + ((f >> 16) & 1u)) >> 16;
        dst[i] = static_cast<uint16_t>(nan ? ((f >> 16) | 0x40u) : rounded);
    }
}

namespace {

// In fixed blocks of 32 lanes that the compiler vectorizes, in an AVX2 version where the CPU has
// it (the core is built for baseline x86-64, whose SSE2 has no unsigned 16-bit max): the first
// f16 run of a plan scans every step's output, and element by element that took seconds.
__attribute__((always_inline)) inline uint16_t largest_f16_magnitude_lanes(const uint16_t* bits, size_t count) {
    constexpr size_t kLanes = 32;
    uint16_t lanes[kLanes] = {};
    size_t i = 0;
    for (; i + kLanes <= count; i += kLanes)
        for (size_t j = 0; j < kLanes; ++j) lanes[j] = std::max<uint16_t>(lanes[j], bits[i + j] & 0x7fff);
    uint16_t largest = 0;
    for (; i < count; ++i) largest = std::max<uint16_t>(largest, bits[i] & 0x7fff);
    for (const uint16_t lane : lanes) largest = std::max(largest, lane);
    return largest;
}

__attribute__((target("avx2"))) uint16_t largest_f16_magnitude_avx2(const uint16_t* bits, size_t count) {
    return largest_f16_magnitude_lanes(bits, count);
}

}  // namespace

uint16_t largest_f16_magnitude_bits(const uint16_t* bits, size_t count) {
    return cpu_has_avx2() ? largest_f16_magnitude_avx2(bits, count) : largest_f16_magnitude_lanes(bits, count);
}

}  // namespace infer::detail
