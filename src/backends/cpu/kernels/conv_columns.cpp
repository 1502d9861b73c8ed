#include "backends/cpu/kernels/conv_columns.hpp"

#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/half_convert.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "core/ops/shapes_neural.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

namespace infer::cpu {

ConvGeometry conv_geometry(const KernelContext& ctx, const Shape& x, const Shape& w,
                           int64_t group) {
    const size_t spatial = x.rank() - 2;
    const std::vector<int64_t> kernel(w.dims().begin() + 2, w.dims().end());
    const detail::WindowParams p = detail::read_window_params(ctx.attrs(), spatial, kernel);
    if (p.kernel != kernel)
        invalid_argument(ctx, "kernel_shape differs from the weights' " + w.to_string());
    const std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
    const std::vector<detail::WindowGeometry> geometry = detail::window_geometry(p, in);
    ConvGeometry g;
    g.channels = x[1] / group;
    if (spatial == 1) g.axes.push_back({1, 1, 1, 1, 0, 1});
    for (size_t i = 0; i < spatial; ++i)
        g.axes.push_back({in[i], kernel[i], p.strides[i], p.dilations[i], geometry[i].pad_begin,
                          geometry[i].out});
    for (const SpatialAxis& a : g.axes) {
        g.input_size *= a.in;
        g.taps *= a.kernel;
        g.positions *= a.out;
    }
    return g;
}

bool reads_input_directly(const ConvGeometry& g) {
    return std::all_of(g.axes.begin(), g.axes.end(), [](const SpatialAxis& a) {
        return a.kernel == 1 && a.stride == 1 && a.pad_begin == 0 && a.out == a.in;
    });
}

// Output positions are walked a line (the last axis) at a time, from the line holding p0.
template <class T>
void im2col(const T* x, const ConvGeometry& g, int64_t p0, int64_t p1, T* col) {
    const size_t rank = g.axes.size();
    const SpatialAxis& last = g.axes.back();
    const int64_t width = p1 - p0;
    parallel_for(g.channels * g.taps, grain_for(width), [&](int64_t begin, int64_t end_row) {
        std::vector<int64_t> tap(rank), line(rank - 1);
        for (int64_t row = begin; row < end_row; ++row) {
            for (size_t d = rank, rest = static_cast<size_t>(row % g.taps); d-- > 0;) {
                tap[d] = static_cast<int64_t>(rest) % g.axes[d].kernel;
                rest /= static_cast<size_t>(g.axes[d].kernel);
            }
            const T* plane = x + row / g.taps * g.input_size;
            const int64_t shift = tap[rank - 1] * last.dilation - last.pad_begin;
            // Output positions [first, end) of a line read inside the input line.
            const int64_t first = std::clamp<int64_t>((last.stride - 1 - shift) / last.stride, 0, last.out);
            const int64_t end = std::clamp<int64_t>((last.in - shift + last.stride - 1) / last.stride, first, last.out);
            T* dst = col + row * width;
            for (int64_t q = p0 / last.out, d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
                line[d] = q % g.axes[d].out;
                q /= g.axes[d].out;
            }
            for (int64_t pos = p0; pos < p1;) {
                // Positions [a, b) of this line.
                const int64_t a = pos % last.out, b = std::min(last.out, a + (p1 - pos));
                int64_t offset = 0;  // of the input line, in lines
                bool inside = true;
                for (size_t d = 0; d + 1 < rank; ++d) {
                    const SpatialAxis& axis = g.axes[d];
                    const int64_t i = line[d] * axis.stride - axis.pad_begin + tap[d] * axis.dilation;
                    inside = inside && i >= 0 && i < axis.in;
                    offset = offset * axis.in + i;
                }
                if (inside) {
                    // Zeros where the tap reads the padding, a copy (strided or not) between.
                    const T* src = plane + offset * last.in + shift;
                    const int64_t lo = std::clamp(first, a, b), hi = std::clamp(end, lo, b);
                    std::fill(dst, dst + (lo - a), T{0});
                    if (last.stride == 1)
                        std::copy(src + lo, src + hi, dst + (lo - a));
                    else
                        for (int64_t o = lo; o < hi; ++o) dst[o - a] = src[o * last.stride];
                    std::fill(dst + (hi - a), dst + (b - a), T{0});
                } else {
                    std::fill(dst, dst + (b - a), T{0});
                }
                dst += b - a;
                pos += b - a;
                for (size_t d = rank - 1; d-- > 0;) {
                    if (++line[d] < g.axes[d].out) break;
                    line[d] = 0;
                }
            }
        }
    });
}

int64_t column_chunk(const ConvGeometry& g, size_t element) {
    const int64_t rows = std::max<int64_t>(1, g.channels * g.taps);
    const int64_t fit = kColumnChunkBytes / (rows * static_cast<int64_t>(element)) / kFloatTileColumns * kFloatTileColumns;
    return std::min(g.positions, std::max(kFloatTileColumns, fit));
}

template void im2col<float>(const float*, const ConvGeometry&, int64_t, int64_t, float*);
template void im2col<uint16_t>(const uint16_t*, const ConvGeometry&, int64_t, int64_t, uint16_t*);

namespace {

// out[c] = act(acc[c] + b + z[c]) in one pass; Z f32, bf16 bits, or none. Act: none, a clamp,
// or HardSwish (a separate loop each, so that each vectorizes).
enum class Act { none, clamp, hard_swish };

// HardSwish rows without a residual eight values at a time: the compiler leaves the scalar
// loop's clamp a compare and a branch per value (MobileNetV3's epilogues were a seventh of its
// run on one core). max(NaN, 0) is 0 here, and v · 0 keeps a NaN v NaN. Returns where it stopped.
__attribute__((target("avx2"))) int64_t hard_swish_row_avx2(const float* acc, float b, float* out, int64_t cols) {
    const __m256 bias = _mm256_set1_ps(b), alpha = _mm256_set1_ps(detail::kHardSwishAlpha), half = _mm256_set1_ps(0.5f),
                 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8) {
        const __m256 v = _mm256_add_ps(_mm256_loadu_ps(acc + c), bias);
        const __m256 t = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(_mm256_mul_ps(v, alpha), half), zero), one);
        _mm256_storeu_ps(out + c, _mm256_mul_ps(v, t));
    }
    return c;
}

template <class Z, Act A>
void finish_row(const float* acc, float b, const Z* z, ConvActivation a, float* out, int64_t cols) {
    int64_t first = 0;
    if constexpr (A == Act::hard_swish && std::is_void_v<Z>) {
        static const bool avx2 = has_avx2();
        if (avx2) first = hard_swish_row_avx2(acc, b, out, cols);
    }
    for (int64_t c = first; c < cols; ++c) {
        float v = acc[c] + b;
        if constexpr (std::is_same_v<Z, float>) v += z[c];
        if constexpr (std::is_same_v<Z, uint16_t>) {
            const uint32_t bits = uint32_t{z[c]} << 16;
            float widened;
            std::memcpy(&widened, &bits, sizeof widened);
            v += widened;
        }
        if constexpr (A == Act::clamp) v = std::min(std::max(v, a.low), a.high);  // NaN stays NaN
        if constexpr (A == Act::hard_swish) v *= std::min(std::max(v * detail::kHardSwishAlpha + 0.5f, 0.0f), 1.0f);
        out[c] = v;
    }
}

template <class Z>
void finish_row(const float* acc, float b, const Z* z, ConvActivation a, float* out, int64_t cols) {
    if (a.hard_swish)
        finish_row<Z, Act::hard_swish>(acc, b, z, a, out, cols);
    else if (a.clamps())
        finish_row<Z, Act::clamp>(acc, b, z, a, out, cols);
    else
        finish_row<Z, Act::none>(acc, b, z, a, out, cols);
}

}  // namespace

void ChannelBiasWriter::tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc,
                             int64_t ld) {
    const auto& w = *static_cast<const ChannelBiasWriter*>(self);
    alignas(64) float narrowed[kFloatTileColumns];
    for (int64_t r = 0; r < rows; ++r) {
        const float b = w.bias ? w.bias[row0 + r] : 0.0f;
        const int64_t at = (row0 + r) * w.positions + col0;
        float* out = w.bf16_out ? narrowed : static_cast<float*>(w.y) + at;
        const float* from = acc + r * ld;
        if (!w.residual)
            finish_row<void>(from, b, nullptr, w.activation, out, cols);
        else if (w.bf16_out)
            finish_row(from, b, static_cast<const uint16_t*>(w.residual) + at, w.activation, out, cols);
        else
            finish_row(from, b, static_cast<const float*>(w.residual) + at, w.activation, out, cols);
        if (w.bf16_out) float_to_bfloat16_serial(narrowed, static_cast<uint16_t*>(w.y) + at, static_cast<size_t>(cols));
    }
}

void finish_conv_planes(float* y, const float* bias, const float* residual, ConvActivation activation, int64_t planes,
                        int64_t channels, int64_t positions) {
    if (!bias && !residual && !activation.applies()) return;
    parallel_for(planes, grain_for(positions), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            float* plane = y + p * positions;
            const float b = bias ? bias[p % channels] : 0.0f;
            if (residual)
                finish_row(plane, b, residual + p * positions, activation, plane, positions);
            else
                finish_row<void>(plane, b, nullptr, activation, plane, positions);
        }
    });
}

}  // namespace infer::cpu
