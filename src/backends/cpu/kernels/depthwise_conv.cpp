// Depthwise 2-D convolutions. Planes go L at a time (16 with AVX-512, 8 with AVX2), interleaved
// so that each lane is a plane, into a zero-bordered scratch holding just the input the outputs
// read: every output vector is then its taps' multiply-adds with no bounds checks, the taps'
// vectors in registers for 3x3 kernels, whatever the stride, dilation or padding. The lanes go
// in and out through 8x8 transposes. Planes too wide for that scratch to stay in L2 go a plane at
// a time through a padded copy of the plane (depthwise_padded_plane); without AVX2, a tap at a
// time.
#include "backends/cpu/kernels/depthwise_conv.hpp"

#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/transpose8x8.hpp"
#include "backends/cpu/kernels/vector_lanes.hpp"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace infer::cpu {

namespace {

// FusedConv's activation on eight values (ConvActivation's, in vectors): the clamp or HardSwish,
// NaN staying NaN (the value is max's and min's second operand).
struct ActivationVector {
    __m256 low, high;
    bool hard_swish;
    __attribute__((target("avx2"))) static ActivationVector of(ConvActivation a) {
        return {_mm256_set1_ps(a.low), _mm256_set1_ps(a.high), a.hard_swish};
    }
    __attribute__((target("avx2"))) __m256 operator()(__m256 v) const {
        if (!hard_swish) return _mm256_min_ps(high, _mm256_max_ps(low, v));
        const __m256 t = _mm256_add_ps(_mm256_mul_ps(v, _mm256_set1_ps(detail::kHardSwishAlpha)), _mm256_set1_ps(0.5f));
        return _mm256_mul_ps(v, _mm256_min_ps(_mm256_set1_ps(1.0f), _mm256_max_ps(_mm256_setzero_ps(), t)));
    }
};

// Wide depthwise planes (stride 1 or 2, no dilation, any kernel): the plane is copied into a
// zero-bordered scratch first, so that the padding is explicit and every output row goes eight
// columns at a time with no edge cases (the scratch has slack for the last vector's reads),
// finished (bias, residual, activation) as each vector is stored. Without the copy, the columns
// whose taps cross the border took a scalar loop: 8 of MobileNetV2's 56 columns cost more
// than the other 48. For stride 2 each scratch row holds its even columns, then its odd ones,
// so that every tap is one contiguous load rather than two loads and two shuffles.
struct PaddedPlane {
    int64_t width, rows;  // of the scratch; width is a multiple of 16
    static PaddedPlane of(const ConvGeometry& g) {
        const SpatialAxis& h = g.axes[0];
        const SpatialAxis& v = g.axes[1];
        const int64_t vectors = (v.out + 7) / 8;
        // The last vector reads up to column 8·vectors·stride + kernel.
        const int64_t width = vectors * 8 * v.stride + v.kernel + 8;
        return {(width + 15) / 16 * 16, (h.out - 1) * h.stride + h.kernel};
    }
};

// A thread's scratch for padded planes. Every plane of one convolution writes the same interior,
// so the zero border is written once per geometry, not once per plane.
struct PaddedScratch {
    std::vector<float> data;
    std::array<int64_t, 6> geometry{};
    float* prepare(const ConvGeometry& g, const PaddedPlane& padded, size_t floats) {
        const std::array<int64_t, 6> key{g.axes[0].in, g.axes[0].pad_begin, g.axes[1].in, g.axes[1].pad_begin,
                                         padded.width, padded.rows};
        if (key != geometry || data.size() != floats) {
            data.assign(floats, 0.0f);
            geometry = key;
        }
        return data.data();
    }
};

// Eight outputs of one row: taps of rows `top`, `top + width`, ... (KH x KW known at compile
// time where K > 0, else the geometry's). Stride 2 reads the rows' even and odd halves.
template <int Stride, int K>
__attribute__((target("avx2,fma"), always_inline)) inline __m256 depthwise_vector(const float* top, int64_t width,
                                                                                  const float* kernel, int64_t kh,
                                                                                  int64_t kw, __m256 sum) {
    const int64_t rows = K > 0 ? K : kh, columns = K > 0 ? K : kw;
    for (int64_t ki = 0; ki < rows; ++ki) {
        const float* row = top + ki * width;
        for (int64_t kj = 0; kj < columns; ++kj) {
            const float* x = Stride == 1 ? row + kj : row + (kj % 2) * (width / 2) + kj / 2;
            sum = _mm256_fmadd_ps(_mm256_broadcast_ss(kernel + ki * columns + kj), _mm256_loadu_ps(x), sum);
        }
    }
    return sum;
}

template <int Stride, int K>
__attribute__((target("avx2,fma"))) void depthwise_padded_plane(const float* in, const float* kernel, const ConvGeometry& g,
                                                                float bias, const float* residual, ConvActivation activation,
                                                                float* out, PaddedScratch& scratch) {
    const SpatialAxis& h = g.axes[0];
    const SpatialAxis& v = g.axes[1];
    const PaddedPlane padded = PaddedPlane::of(g);
    float* const plane = scratch.prepare(g, padded, static_cast<size_t>(padded.width * (padded.rows + (Stride == 2 ? 1 : 0))));
    // Input rows and columns the outputs read, at their padded place (stride 2: through the
    // spare row at the end, split into halves).
    const int64_t copy_rows = std::min(h.in, padded.rows - h.pad_begin), copy_columns = std::min(v.in, padded.width - v.pad_begin);
    float* line = plane + padded.rows * padded.width;
    for (int64_t ih = 0; ih < copy_rows; ++ih) {
        float* row = plane + (ih + h.pad_begin) * padded.width;
        float* target = Stride == 1 ? row : line;
        std::memcpy(target + v.pad_begin, in + ih * v.in, sizeof(float) * static_cast<size_t>(std::max<int64_t>(copy_columns, 0)));
        if (Stride == 1) continue;
        for (int64_t c = 0; c < padded.width; c += 16) {
            const __m256 a = _mm256_loadu_ps(line + c), b = _mm256_loadu_ps(line + c + 8);
            const __m256 evens = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)), odds = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
            const auto in_order = [](__m256 t) {  // a0 a2 b0 b2 | a4 a6 b4 b6 → a0 a2 a4 a6 b0 b2 b4 b6
                return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
            };
            _mm256_storeu_ps(row + c / 2, in_order(evens));
            _mm256_storeu_ps(row + padded.width / 2 + c / 2, in_order(odds));
        }
    }
    const ActivationVector act = ActivationVector::of(activation);
    const __m256 b = _mm256_set1_ps(bias);
    const int64_t tail = v.out % 8;
    const __m256i tail_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(tail)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    for (int64_t oh = 0; oh < h.out; ++oh) {
        const float* top = plane + oh * h.stride * padded.width;
        float* dst = out + oh * v.out;
        const float* skip = residual ? residual + oh * v.out : nullptr;
        for (int64_t ow = 0; ow < v.out; ow += 8) {
            __m256 sum = depthwise_vector<Stride, K>(top + ow, padded.width, kernel, h.kernel, v.kernel, b);
            const bool full = ow + 8 <= v.out;
            if (skip) sum = _mm256_add_ps(sum, full ? _mm256_loadu_ps(skip + ow) : _mm256_maskload_ps(skip + ow, tail_mask));
            sum = act(sum);
            if (full) _mm256_storeu_ps(dst + ow, sum);
            else _mm256_maskstore_ps(dst + ow, tail_mask, sum);
        }
    }
}

using PaddedPlaneKernel = void (*)(const float*, const float*, const ConvGeometry&, float, const float*, ConvActivation,
                                   float*, PaddedScratch&);

// The padded-plane kernel for this geometry: unrolled for square 3x3 and 5x5 kernels.
template <int Stride>
PaddedPlaneKernel padded_plane_kernel(const ConvGeometry& g) {
    const int64_t kh = g.axes[0].kernel, kw = g.axes[1].kernel;
    if (kh == 3 && kw == 3) return depthwise_padded_plane<Stride, 3>;
    if (kh == 5 && kw == 5) return depthwise_padded_plane<Stride, 5>;
    return depthwise_padded_plane<Stride, 0>;
}

// The interleaved scratch: the padded input's rows and columns the outputs read (R x C
// pixels, each L lanes), then the taps (L lanes each), then the sums (a vector per position).
// The border is zeroed when the geometry changes; every group writes the same interior.
struct LaneScratch {
    std::vector<float> data;
    std::array<int64_t, 8> geometry{};
    int64_t rows = 0, columns = 0;

    static int64_t padded_extent(const SpatialAxis& a) { return (a.out - 1) * a.stride + (a.kernel - 1) * a.dilation + 1; }
    static size_t floats(const ConvGeometry& g, int lanes) {
        return static_cast<size_t>((padded_extent(g.axes[0]) * padded_extent(g.axes[1]) + g.taps + g.positions) * lanes);
    }
    float* prepare(const ConvGeometry& g, int lanes) {
        const SpatialAxis &h = g.axes[0], &v = g.axes[1];
        // What decides which elements are border: the input, its place and the padded extent.
        const std::array<int64_t, 8> key{h.in, h.pad_begin, padded_extent(h), v.in, v.pad_begin, padded_extent(v), g.taps, lanes};
        if (key != geometry || data.size() != floats(g, lanes)) {
            data.assign(floats(g, lanes), 0.0f);
            geometry = key;
            rows = padded_extent(h);
            columns = padded_extent(v);
        }
        return data.data();
    }
};

// The lanes' planes of one group: lanes past `count` repeat the first plane (computed, not stored).
struct DepthwisePlanes {
    const float* in[16];
    const float* kernel[16];
    float* out[16];
    const float* residual[16];  // Z's planes, or null
    float bias[16];
    int count;
};

// The sums of every output position, L lanes each, from the padded interleaved input; K > 0:
// a K x K kernel, its taps' vectors held in registers. Compiled for the caller's instruction set
// (always inline into a function with a target).
template <int L, int K>
__attribute__((always_inline)) inline void lane_sums(const float* x, int64_t columns, const float* taps, const ConvGeometry& g,
                                                     float* y) {
    const SpatialAxis &h = g.axes[0], &v = g.axes[1];
    const int64_t kh = K > 0 ? K : h.kernel, kw = K > 0 ? K : v.kernel;
    FloatLanes<L> held[K > 0 ? K * K : 1];
    if constexpr (K > 0)
        for (int t = 0; t < K * K; ++t) held[t] = load_lanes<FloatLanes<L>>(taps + t * L);
    for (int64_t oh = 0; oh < h.out; ++oh)
        for (int64_t ow = 0; ow < v.out; ++ow) {
            const float* top = x + (oh * h.stride * columns + ow * v.stride) * L;
            FloatLanes<L> sum{};
            for (int64_t ki = 0; ki < kh; ++ki)
                for (int64_t kj = 0; kj < kw; ++kj) {
                    FloatLanes<L> tap;
                    if constexpr (K > 0) tap = held[ki * kw + kj];
                    else tap = load_lanes<FloatLanes<L>>(taps + (ki * kw + kj) * L);
                    sum += tap * load_lanes<FloatLanes<L>>(top + (ki * h.dilation * columns + kj * v.dilation) * L);
                }
            store_lanes(y + (oh * v.out + ow) * L, sum);
        }
}

using LaneSums = void (*)(const float*, int64_t, const float*, const ConvGeometry&, float*);

__attribute__((target("avx512f"))) void lane_sums_16_3x3(const float* x, int64_t c, const float* t, const ConvGeometry& g, float* y) {
    lane_sums<16, 3>(x, c, t, g, y);
}
__attribute__((target("avx512f"))) void lane_sums_16(const float* x, int64_t c, const float* t, const ConvGeometry& g, float* y) {
    lane_sums<16, 0>(x, c, t, g, y);
}
__attribute__((target("avx2,fma"))) void lane_sums_8_3x3(const float* x, int64_t c, const float* t, const ConvGeometry& g, float* y) {
    lane_sums<8, 3>(x, c, t, g, y);
}
__attribute__((target("avx2,fma"))) void lane_sums_8(const float* x, int64_t c, const float* t, const ConvGeometry& g, float* y) {
    lane_sums<8, 0>(x, c, t, g, y);
}

// One group of planes: interleaved in (eight lanes at a time through 8x8 transposes, the row's
// last pixels one by one), summed, and finished on the way out: act(sum + bias + Z).
__attribute__((target("avx2,fma"))) void depthwise_lanes(const DepthwisePlanes& p, const ConvGeometry& g, int lanes,
                                                         LaneSums sums, ConvActivation activation, LaneScratch& scratch) {
    const SpatialAxis &h = g.axes[0], &v = g.axes[1];
    float* const x = scratch.prepare(g, lanes);
    const int64_t rows = scratch.rows, columns = scratch.columns;
    float* const taps = x + rows * columns * lanes;
    float* const y = taps + g.taps * lanes;
    const float* in[16];
    for (int lane = 0; lane < lanes; ++lane) in[lane] = p.in[lane < p.count ? lane : 0];
    // Input columns [first, last) land inside the scratch, at column iw + pad.
    const int64_t first = std::max<int64_t>(0, -v.pad_begin), last = std::min(v.in, columns - v.pad_begin);
    for (int64_t ih = std::max<int64_t>(0, -h.pad_begin); ih < std::min(h.in, rows - h.pad_begin); ++ih) {
        float* row = x + ((ih + h.pad_begin) * columns + v.pad_begin) * lanes;
        for (int half = 0; half < lanes; half += 8) {
            int64_t iw = first;
            for (; iw + 8 <= last; iw += 8) {
                __m256 r[8];
                for (int lane = 0; lane < 8; ++lane) r[lane] = _mm256_loadu_ps(in[half + lane] + ih * v.in + iw);
                transpose8x8(r);  // r[j]: pixel iw + j of the eight planes
                for (int j = 0; j < 8; ++j) _mm256_storeu_ps(row + (iw + j) * lanes + half, r[j]);
            }
            for (; iw < last; ++iw)
                for (int lane = 0; lane < 8; ++lane) row[iw * lanes + half + lane] = in[half + lane][ih * v.in + iw];
        }
    }
    for (int lane = 0; lane < lanes; ++lane)
        for (int64_t t = 0; t < g.taps; ++t) taps[t * lanes + lane] = p.kernel[lane < p.count ? lane : 0][t];
    sums(x, columns, taps, g, y);
    const ActivationVector act = ActivationVector::of(activation);
    for (int half = 0; half < p.count; half += 8) {
        const int count = std::min(8, p.count - half);
        int64_t i = 0;
        for (; i + 8 <= g.positions; i += 8) {
            __m256 r[8];
            for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(y + (i + j) * lanes + half);
            transpose8x8(r);  // r[lane]: eight positions of one plane
            for (int lane = 0; lane < count; ++lane) {
                const int plane = half + lane;
                __m256 value = _mm256_add_ps(r[lane], _mm256_set1_ps(p.bias[plane]));
                if (p.residual[plane]) value = _mm256_add_ps(value, _mm256_loadu_ps(p.residual[plane] + i));
                _mm256_storeu_ps(p.out[plane] + i, act(value));
            }
        }
        for (; i < g.positions; ++i)
            for (int lane = 0; lane < count; ++lane) {
                const int plane = half + lane;
                float value = y[i * lanes + plane] + p.bias[plane];
                if (p.residual[plane]) value += p.residual[plane][i];
                p.out[plane][i] = activation(value);
            }
    }
}

// Largest interleaved scratch (bytes) a thread keeps: it must stay in L2 with the planes
// streaming through. Wider planes (MobileNetV2's first 112x112 ones at 16 lanes) go a plane at a
// time instead.
inline constexpr size_t kLaneScratchBytes = 512 << 10;

}  // namespace

bool depthwise(const float* x, const float* w, const ConvGeometry& g, int64_t images, int64_t out_channels,
               int64_t multiplier, const float* bias, const float* residual, ConvActivation activation, float* y) {
    const SpatialAxis& h = g.axes[0];
    const SpatialAxis& v = g.axes[1];
    const int64_t planes = images * out_channels;
    const int lanes = has_avx512f_vl() ? 16 : 8;
    const bool three = h.kernel == 3 && v.kernel == 3;
    if (has_avx2_fma() && LaneScratch::floats(g, lanes) * sizeof(float) <= kLaneScratchBytes) {
        const LaneSums sums = lanes == 16 ? (three ? lane_sums_16_3x3 : lane_sums_16) : (three ? lane_sums_8_3x3 : lane_sums_8);
        parallel_for((planes + lanes - 1) / lanes, grain_for(lanes * g.positions * g.taps), [&](int64_t begin, int64_t end) {
            thread_local LaneScratch thread_scratch;
            LaneScratch& scratch = thread_scratch;  // one thread-local lookup per task
            for (int64_t group = begin; group < end; ++group) {
                DepthwisePlanes p{};
                p.count = static_cast<int>(std::min<int64_t>(lanes, planes - group * lanes));
                for (int lane = 0; lane < p.count; ++lane) {
                    const int64_t plane = group * lanes + lane;
                    p.in[lane] = x + plane / multiplier * g.input_size;
                    p.kernel[lane] = w + plane % out_channels * g.taps;
                    p.out[lane] = y + plane * g.positions;
                    p.residual[lane] = residual ? residual + plane * g.positions : nullptr;
                    p.bias[lane] = bias ? bias[plane % out_channels] : 0.0f;
                }
                depthwise_lanes(p, g, lanes, sums, activation, scratch);
            }
        });
        return true;
    }
    if (has_avx2_fma() && h.dilation == 1 && v.dilation == 1 && v.stride <= 2) {
        const PaddedPlaneKernel plane_kernel = v.stride == 1 ? padded_plane_kernel<1>(g) : padded_plane_kernel<2>(g);
        parallel_for(planes, grain_for(g.positions * g.taps), [&](int64_t begin, int64_t end) {
            thread_local PaddedScratch scratch;  // one padded plane
            for (int64_t p = begin; p < end; ++p)
                plane_kernel(x + p / multiplier * g.input_size, w + p % out_channels * g.taps, g,
                                       bias ? bias[p % out_channels] : 0.0f, residual ? residual + p * g.positions : nullptr,
                                       activation, y + p * g.positions, scratch);
        });
        return true;
    }
    parallel_for(planes, grain_for(g.positions * g.taps), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const float* in = x + p / multiplier * g.input_size;
            const float* kernel = w + p % out_channels * g.taps;
            float* out = y + p * g.positions;
            std::fill(out, out + g.positions, 0.0f);
            for (int64_t ki = 0; ki < h.kernel; ++ki) {
                for (int64_t kj = 0; kj < v.kernel; ++kj) {
                    const float tap = kernel[ki * v.kernel + kj];
                    const int64_t shift = kj * v.dilation - v.pad_begin;
                    // Output columns [first, last) read input columns inside the row.
                    const int64_t first =
                        std::clamp<int64_t>((v.stride - 1 - shift) / v.stride, 0, v.out);
                    const int64_t last =
                        std::clamp<int64_t>((v.in - shift + v.stride - 1) / v.stride, first, v.out);
                    for (int64_t oh = 0; oh < h.out; ++oh) {
                        const int64_t ih = oh * h.stride - h.pad_begin + ki * h.dilation;
                        if (ih < 0 || ih >= h.in) continue;
                        const float* row = in + ih * v.in;
                        float* dst = out + oh * v.out;
                        for (int64_t ow = first; ow < last; ++ow)
                            dst[ow] += tap * row[ow * v.stride + shift];
                    }
                }
            }
        }
    });
    return false;
}

}  // namespace infer::cpu
