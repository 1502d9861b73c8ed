// QuantizedAdd (fused from a QDQ file's DequantizeLinear, DequantizeLinear, Add, QuantizeLinear,
// integer_qdq_products.cpp): y = saturate(rint(((a - za)·sa + (b - zb)·sb) / sy) + zy), each step
// rounded in f32 as the three ops round it (no fused multiply-add: src/CMakeLists.txt), so the
// result is theirs byte for byte. One pass over bytes where the chain wrote and read back three
// f32 images: ResNet-50's 16 residual Adds with their DequantizeLinear and QuantizeLinear took
// 2.4 ms of a 28 ms run on one Zen 4 core, as QuantizedAdds 1.4 ms (the division, kept for
// QuantizeLinear's rounding, is most of what is left).
#include "backends/cpu/kernels/broadcast.hpp"
#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/register.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace infer::cpu {

namespace {

struct AddGrid {
    float a_scale, a_zero, b_scale, b_zero, y_scale, y_zero, lowest, highest;
};

// Eight bytes widened to f32 lanes (exact: they are small integers).
template <class Q>
__attribute__((target("avx2"))) inline __m256 widen8(const Q* from) {
    const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(from));
    return _mm256_cvtepi32_ps(std::is_same_v<Q, uint8_t> ? _mm256_cvtepu8_epi32(bytes) : _mm256_cvtepi8_epi32(bytes));
}

// Sixteen values at a time; returns where it stopped. No fused multiply-add: each product is
// rounded before the sum, as DequantizeLinear's outputs are.
template <class Q>
__attribute__((target("avx2"))) int64_t quantized_add_avx2(const Q* a, const Q* b, Q* y, int64_t begin, int64_t end,
                                                           const AddGrid& g) {
    const __m256 sa = _mm256_set1_ps(g.a_scale), za = _mm256_set1_ps(g.a_zero), sb = _mm256_set1_ps(g.b_scale),
                 zb = _mm256_set1_ps(g.b_zero), sy = _mm256_set1_ps(g.y_scale), zy = _mm256_set1_ps(g.y_zero),
                 lowest = _mm256_set1_ps(g.lowest), highest = _mm256_set1_ps(g.highest);
    const auto eight = [&](int64_t i) {
        const __m256 sum = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(widen8(a + i), za), sa),
                                         _mm256_mul_ps(_mm256_sub_ps(widen8(b + i), zb), sb));
        const __m256 q = _mm256_round_ps(_mm256_div_ps(sum, sy), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, zy), lowest), highest));
    };
    int64_t i = begin;
    for (; i + 16 <= end; i += 16) {
        // i32 → i16 (exact) → bytes; the packs work per 128-bit half, so the halves are put back
        // in order before the store.
        const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(eight(i), eight(i + 8)), 0b11011000);
        const __m128i low = _mm256_castsi256_si128(words), high = _mm256_extracti128_si256(words, 1);
        const __m128i bytes = std::is_same_v<Q, uint8_t> ? _mm_packus_epi16(low, high) : _mm_packs_epi16(low, high);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), bytes);
    }
    return i;
}

// Sixteen bytes widened to f32 lanes.
template <class Q>
__attribute__((target("avx512f"))) inline __m512 widen16(const Q* from) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
    return _mm512_cvtepi32_ps(std::is_same_v<Q, uint8_t> ? _mm512_cvtepu8_epi32(bytes) : _mm512_cvtepi8_epi32(bytes));
}

// The same on AVX-512, sixteen values at a time, with the division made a product by 1/sy: the
// product t is within 2^-23·|t| of the exact quotient, so where |t| < 512 and t lies farther
// than 2^-11 from a half step, the rounded f32 quotient lies on the same side of it and rounds
// as t does (and where |t| >= 512 a step either way saturates: |zy| <= 255). A vector with a
// lane nearer a half step divides as the scalar form does. The division was most of the AVX2
// loop's time.
template <class Q>
__attribute__((target("avx512f,avx512bw,avx512vl"))) int64_t quantized_add_avx512(const Q* a, const Q* b, Q* y, int64_t begin,
                                                                                int64_t end, const AddGrid& g) {
    const __m512 sa = _mm512_set1_ps(g.a_scale), za = _mm512_set1_ps(g.a_zero), sb = _mm512_set1_ps(g.b_scale),
                 zb = _mm512_set1_ps(g.b_zero), sy = _mm512_set1_ps(g.y_scale), inverse = _mm512_set1_ps(1.0f / g.y_scale),
                 zy = _mm512_set1_ps(g.y_zero), lowest = _mm512_set1_ps(g.lowest), highest = _mm512_set1_ps(g.highest),
                 clear_of_half = _mm512_set1_ps(0.5f - 0x1p-11f);
    int64_t i = begin;
    for (; i + 16 <= end; i += 16) {
        const __m512 sum = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(widen16(a + i), za), sa),
                                         _mm512_mul_ps(_mm512_sub_ps(widen16(b + i), zb), sb));
        const __m512 t = _mm512_mul_ps(sum, inverse);
        __m512 q = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        if (_mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(t, q)), clear_of_half, _CMP_GE_OQ))
            q = _mm512_roundscale_ps(_mm512_div_ps(sum, sy), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m512i values = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(_mm512_add_ps(q, zy), lowest), highest));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm512_cvtepi32_epi8(values));  // in range: the low bytes
    }
    return i;
}

// A and B of different shapes, broadcast to Y's: element by element, an index per operand.
template <class Q, class Y>
void quantized_add_broadcast(const Q* a, const Shape& a_shape, const Q* b, const Shape& b_shape, Y* y, const Shape& y_shape,
                             const AddGrid& g) {
    const std::vector<int64_t> a_strides = broadcast_strides(a_shape, y_shape), b_strides = broadcast_strides(b_shape, y_shape);
    const size_t rank = y_shape.rank();
    std::vector<int64_t> at(rank, 0);
    int64_t ia = 0, ib = 0;
    for (int64_t i = 0, count = y_shape.numel(); i < count; ++i) {
        const float v = (static_cast<float>(a[ia]) - g.a_zero) * g.a_scale + (static_cast<float>(b[ib]) - g.b_zero) * g.b_scale;
        y[i] = static_cast<Y>(std::clamp(std::rint(v / g.y_scale) + g.y_zero, g.lowest, g.highest));
        for (size_t d = rank; d-- > 0;) {  // the next output index, last axis fastest
            ia += a_strides[d], ib += b_strides[d];
            if (++at[d] < y_shape[d]) break;
            ia -= a_strides[d] * y_shape[d], ib -= b_strides[d] * y_shape[d];
            at[d] = 0;
        }
    }
}

template <class Q, class Y>
void quantized_add(KernelContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    const auto value = [&](size_t i) { return static_cast<float>(ctx.input(i).template data<Q>()[0]); };
    const AddGrid g{ctx.input(1).data<float>()[0], value(2), ctx.input(4).data<float>()[0], value(5),
                    ctx.input(6).data<float>()[0], static_cast<float>(ctx.input(7).data<Y>()[0]),
                    static_cast<float>(std::numeric_limits<Y>::min()), static_cast<float>(std::numeric_limits<Y>::max())};
    const Q* pa = a.data<Q>();
    const Q* pb = b.data<Q>();
    Y* py = ctx.output(0).data<Y>();
    const Shape& y_shape = ctx.output(0).shape();
    if (a.shape() != y_shape || b.shape() != y_shape)
        return quantized_add_broadcast(pa, a.shape(), pb, b.shape(), py, y_shape, g);
    // The vector paths write Y with A's packing: only where they are one type.
    const bool avx512 = std::is_same_v<Q, Y> && has_avx512_bw(), avx2 = std::is_same_v<Q, Y> && has_avx2();
    parallel_for(a.numel(), 16384, [&](int64_t begin, int64_t end) {
        if constexpr (std::is_same_v<Q, Y>) {
            if (avx512) begin = quantized_add_avx512(pa, pb, py, begin, end, g);
            else if (avx2) begin = quantized_add_avx2(pa, pb, py, begin, end, g);
        }
        for (int64_t i = begin; i < end; ++i) {
            const float v = (static_cast<float>(pa[i]) - g.a_zero) * g.a_scale + (static_cast<float>(pb[i]) - g.b_zero) * g.b_scale;
            py[i] = static_cast<Y>(std::clamp(std::rint(v / g.y_scale) + g.y_zero, g.lowest, g.highest));
        }
    });
}

template <class Q>
void quantized_add_kernel(KernelContext& ctx) {
    const DType y = ctx.output(0).dtype();
    if (y == DType::u8) return quantized_add<Q, uint8_t>(ctx);
    if (y == DType::i8) return quantized_add<Q, int8_t>(ctx);
    unsupported(ctx, "output dtype " + std::string(dtype_name(y)));
}

}  // namespace

void register_quantized_add_kernel(KernelRegistry& r) {
    r.add("QuantizedAdd", DType::u8, quantized_add_kernel<uint8_t>);
    r.add("QuantizedAdd", DType::i8, quantized_add_kernel<int8_t>);
}

}  // namespace infer::cpu
