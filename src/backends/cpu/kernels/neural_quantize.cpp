// QuantizeLinear, DequantizeLinear (per tensor or per axis) and DynamicQuantizeLinear between
// f32 and u8/i8 (and i32 for dequantization). Rounding is to nearest, ties to even, as ONNX asks.
#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/quantized_rows.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <array>
#include <type_traits>
#include <utility>

namespace infer::cpu {

namespace {

// Which scale/zero point element serves flat index i: all share one, or one per slice of `axis`.
struct AxisMap {
    int64_t inner = 1, extent = 1;
    int64_t operator()(int64_t i) const { return i / inner % extent; }
    // Calls f(first, last, k) for the runs of [begin, end) that share element k: the divisions
    // happen once per run, not per element (they were most of a QDQ model's run), and the
    // loop inside a run vectorizes.
    template <class F>
    void runs(int64_t begin, int64_t end, F&& f) const {
        while (begin < end) {
            const int64_t last = std::min(end, (begin / inner + 1) * inner);
            f(begin, last, (*this)(begin));
            begin = last;
        }
    }
};

AxisMap axis_map(const KernelContext& ctx, const Tensor& x, const Tensor& scale) {
    if (scale.numel() == 1) return {x.numel() > 0 ? x.numel() : 1, 1};
    const size_t axis = x.shape().normalize_axis(ctx.attrs().get_int("axis", 1));
    return {product(x.shape().dims(), axis + 1, x.rank()), x.shape()[axis]};
}

// x / s rounded to nearest even, plus z, saturated to Q, 32 at a time; returns where it stopped.
// The four vectors of i32 (already within Q's range) narrow to bytes through the saturating
// packs, which interleave 128-bit lanes; one permutation puts the 32 bytes back in order.
template <class Q>
__attribute__((target("avx2"))) int64_t quantize_avx2(const float* x, Q* y, int64_t first, int64_t last, float s, float z) {
    const __m256 scale = _mm256_set1_ps(s), zero = _mm256_set1_ps(z);
    const __m256 lowest = _mm256_set1_ps(std::numeric_limits<Q>::min()), highest = _mm256_set1_ps(std::numeric_limits<Q>::max());
    const auto quantize8 = [&](const float* from) {
        __m256 v = _mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(from), scale), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, zero), lowest), highest));
    };
    int64_t i = first;
    for (; i + 32 <= last; i += 32) {
        const __m256i a = quantize8(x + i), b = quantize8(x + i + 8), c = quantize8(x + i + 16), d = quantize8(x + i + 24);
        const __m256i low = _mm256_packs_epi32(a, b), high = _mm256_packs_epi32(c, d);  // i16, exact
        const __m256i bytes = std::is_same_v<Q, uint8_t> ? _mm256_packus_epi16(low, high) : _mm256_packs_epi16(low, high);
        // Lanes now hold a0-3 b0-3 c0-3 d0-3 | a4-7 b4-7 c4-7 d4-7 (4-byte groups).
        const __m256i ordered = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), ordered);
    }
    return i;
}

template <class Q>
Q saturate(double v) {
    return static_cast<Q>(std::clamp(v, double(std::numeric_limits<Q>::min()), double(std::numeric_limits<Q>::max())));
}

template <class Q>
void quantize(const KernelContext& ctx, Tensor& y) {
    const Tensor& x = ctx.input(0);
    const AxisMap map = axis_map(ctx, x, ctx.input(1));
    const float* px = x.data<float>();
    const float* scale = ctx.input(1).data<float>();
    const Q* zero = ctx.has_input(2) ? ctx.input(2).data<Q>() : nullptr;
    Q* py = y.data<Q>();
    constexpr float lowest = std::numeric_limits<Q>::min(), highest = std::numeric_limits<Q>::max();
    const bool avx2 = has_avx2();
    parallel_for(x.numel(), 16384, [&](int64_t begin, int64_t end) {
        map.runs(begin, end, [&](int64_t first, int64_t last, int64_t k) {
            const float s = scale[k], z = zero ? zero[k] : 0;
            // rint rounds ties to even (the default mode) and, unlike nearbyint, compiles to one
            // vector instruction. In float: the rounded quotient is a whole number, and adding a zero point of at
            // most 255 to one below 2^24 is exact; anything larger saturates anyway.
            if (avx2) first = quantize_avx2(px, py, first, last, s, z);
            for (int64_t i = first; i < last; ++i) py[i] = static_cast<Q>(std::clamp(std::rint(px[i] / s) + z, lowest, highest));
        });
    });
}

void quantize_kernel(KernelContext& ctx) {
    Tensor& y = ctx.output(0);
    if (y.dtype() == DType::u8) quantize<uint8_t>(ctx, y);
    else if (y.dtype() == DType::i8) quantize<int8_t>(ctx, y);
    else unsupported(ctx, "quantizing to " + std::string(dtype_name(y.dtype())));
}

template <class Q>
void dequantize(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (ctx.input(1).dtype() != DType::f32)  // f16/bf16 arrive as f32 through the boundary
        unsupported(ctx, "scale of dtype " + std::string(dtype_name(ctx.input(1).dtype())));
    const AxisMap map = axis_map(ctx, x, ctx.input(1));
    if (ctx.has_input(2) && ctx.input(2).dtype() != x.dtype())
        invalid_argument(ctx, "zero point and input differ in dtype");
    const Q* px = x.data<Q>();
    const float* scale = ctx.input(1).data<float>();
    const Q* zero = ctx.has_input(2) ? ctx.input(2).data<Q>() : nullptr;
    float* py = ctx.output(0).data<float>();
    parallel_for(x.numel(), 16384, [&](int64_t begin, int64_t end) {
        map.runs(begin, end, [&](int64_t first, int64_t last, int64_t k) {
            // (q - z) is exact in float for 8-bit q, so the product is rounded once, as in f64;
            // i32 values may not fit a float's 24 bits and go through f64.
            using Wide = std::conditional_t<sizeof(Q) == 1, float, double>;
            const Wide s = scale[k], z = zero ? static_cast<Wide>(zero[k]) : Wide(0);
            for (int64_t i = first; i < last; ++i) py[i] = static_cast<float>((static_cast<Wide>(px[i]) - z) * s);
        });
    });
}

// Scale and zero point from the data's range widened to include 0, then QuantizeLinear to u8.
// Both passes over the data run on the pool, the quantization 32 values at a time where AVX2
// is there: at precision int8 every quantized convolution's input goes through here (ResNet-50
// spent 8.3 of 32 ms in it with scalar loops).
void dynamic_quantize_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const float* px = x.data<float>();
    const int64_t n = x.numel();  // once: Shape::numel was a tenth of an ORT-quantized MiniLM run
    // At most kChunks ranges of at least 65 536 values: on the stack, no allocation per run.
    constexpr int64_t kChunks = 64;
    const int64_t chunk = std::max<int64_t>(65536, (n + kChunks - 1) / kChunks), chunks = (n + chunk - 1) / chunk;
    std::array<std::pair<float, float>, kChunks> ranges{};
    parallel_for(chunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
            auto& [low, high] = ranges[static_cast<size_t>(c)];
            range_with_zero(px + c * chunk, std::min(chunk, n - c * chunk), low, high);
        }
    });
    float low = 0, high = 0;
    for (int64_t c = 0; c < chunks; ++c)
        low = std::min(low, ranges[static_cast<size_t>(c)].first), high = std::max(high, ranges[static_cast<size_t>(c)].second);
    const float scale = (high - low) / 255.0f;
    const uint8_t zero = scale == 0 ? 0 : saturate<uint8_t>(std::nearbyint(-low / scale));
    uint8_t* py = ctx.output(0).data<uint8_t>();
    const bool avx2 = has_avx2() && scale != 0;
    parallel_for(n, 16384, [&](int64_t begin, int64_t end) {
        if (avx2) begin = quantize_avx2(px, py, begin, end, scale, static_cast<float>(zero));
        for (int64_t i = begin; i < end; ++i) {
            const float v = std::clamp(std::rint(px[i] / scale) + zero, 0.0f, 255.0f);
            py[i] = scale == 0 ? zero : static_cast<uint8_t>(v);
        }
    });
    *ctx.output(1).data<float>() = scale;
    *ctx.output(2).data<uint8_t>() = zero;
}

}  // namespace

void register_quantize_kernels(KernelRegistry& r) {
    add_floating(r, "QuantizeLinear", quantize_kernel);
    r.add_compiled("DequantizeLinear", DType::u8, with_f32_compute(dequantize<uint8_t>));
    r.add_compiled("DequantizeLinear", DType::i8, with_f32_compute(dequantize<int8_t>));
    r.add_compiled("DequantizeLinear", DType::i32, with_f32_compute(dequantize<int32_t>));
    add_floating(r, "DynamicQuantizeLinear", dynamic_quantize_kernel);
}

}  // namespace infer::cpu
