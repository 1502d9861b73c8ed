// Conv over [N, C, spatial...] with any number of spatial axes: im2col into the workspace, then
// one product per image and group (packed_float_gemm.hpp's f32 kernel, the bias added per tile;
// or sgemm, then the bias per output channel). Depthwise 1-D and 2-D
// convolutions, where that GEMM would have a single row, are summed directly instead.
#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/conv_columns.hpp"
#include "backends/cpu/kernels/convolution_taps.hpp"
#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/transpose8x8.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"


#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace infer::cpu {

namespace {

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
    const __m256 low = _mm256_set1_ps(activation.low), high = _mm256_set1_ps(activation.high), b = _mm256_set1_ps(bias);
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
            sum = _mm256_min_ps(high, _mm256_max_ps(low, sum));  // NaN stays NaN
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

// Narrow planes: a row of 7 or 14 outputs leaves the row kernel above little to do in vectors.
// Eight planes at a time instead, interleaved so that each lane is a plane: every tap is one
// vector multiply-add over the eight, whatever the kernel, stride, dilation or padding.
inline constexpr int64_t kInterleavedWidth = 16;  // widest output row that takes this way (measured: 28 lost)

struct DepthwisePlanes {  // lanes [0, count) of a group of eight planes
    const float* in[8];
    const float* kernel[8];
    float* out[8];
    const float* residual[8];  // Z's planes, or null
    float bias[8];
    int count;
};

// act(sums + bias + Z) of each plane; the caller's planes are finished here. The planes go in
// and out through 8x8 transposes in registers.
__attribute__((target("avx2,fma"))) void depthwise_interleaved(const DepthwisePlanes& p, const ConvGeometry& g,
                                                               ConvActivation activation, std::vector<float>& scratch) {
    const SpatialAxis& h = g.axes[0];
    const SpatialAxis& v = g.axes[1];
    scratch.resize(static_cast<size_t>((g.input_size + g.taps + g.positions) * 8));
    float* x = scratch.data();
    float* taps = x + g.input_size * 8;
    float* y = taps + g.taps * 8;
    const float* in[8];  // lanes past count repeat the first plane
    for (int lane = 0; lane < 8; ++lane) in[lane] = p.in[lane < p.count ? lane : 0];
    int64_t i = 0;
    for (; i + 8 <= g.input_size; i += 8) {
        __m256 r[8];
        for (int lane = 0; lane < 8; ++lane) r[lane] = _mm256_loadu_ps(in[lane] + i);
        transpose8x8(r);
        for (int j = 0; j < 8; ++j) _mm256_storeu_ps(x + (i + j) * 8, r[j]);
    }
    for (; i < g.input_size; ++i)
        for (int lane = 0; lane < 8; ++lane) x[i * 8 + lane] = in[lane][i];
    for (int lane = 0; lane < 8; ++lane)
        for (int64_t t = 0; t < g.taps; ++t) taps[t * 8 + lane] = p.kernel[lane < p.count ? lane : 0][t];
    for (int64_t oh = 0; oh < h.out; ++oh)
        for (int64_t ow = 0; ow < v.out; ++ow) {
            __m256 sum = _mm256_setzero_ps();
            for (int64_t ki = 0; ki < h.kernel; ++ki) {
                const int64_t ih = oh * h.stride - h.pad_begin + ki * h.dilation;
                if (ih < 0 || ih >= h.in) continue;
                for (int64_t kj = 0; kj < v.kernel; ++kj) {
                    const int64_t iw = ow * v.stride - v.pad_begin + kj * v.dilation;
                    if (iw < 0 || iw >= v.in) continue;
                    sum = _mm256_fmadd_ps(_mm256_loadu_ps(taps + (ki * v.kernel + kj) * 8),
                                          _mm256_loadu_ps(x + (ih * v.in + iw) * 8), sum);
                }
            }
            _mm256_storeu_ps(y + (oh * v.out + ow) * 8, sum);
        }
    const __m256 low = _mm256_set1_ps(activation.low), high = _mm256_set1_ps(activation.high);
    for (i = 0; i + 8 <= g.positions; i += 8) {
        __m256 r[8];
        for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(y + (i + j) * 8);
        transpose8x8(r);  // r[lane]: eight positions of one plane
        for (int lane = 0; lane < p.count; ++lane) {
            __m256 value = _mm256_add_ps(r[lane], _mm256_set1_ps(p.bias[lane]));
            if (p.residual[lane]) value = _mm256_add_ps(value, _mm256_loadu_ps(p.residual[lane] + i));
            _mm256_storeu_ps(p.out[lane] + i, _mm256_min_ps(high, _mm256_max_ps(low, value)));  // NaN stays NaN
        }
    }
    for (; i < g.positions; ++i)
        for (int lane = 0; lane < p.count; ++lane) {
            float value = y[i * 8 + lane] + p.bias[lane];
            if (p.residual[lane]) value += p.residual[lane][i];
            p.out[lane][i] = std::min(std::max(value, activation.low), activation.high);  // NaN stays NaN
        }
}

// Depthwise 2-D convolution (one input channel per group). Planes run over (image, output
// channel); `multiplier` output channels share an input channel. With AVX2, output rows up to
// kInterleavedWidth wide go eight planes at a time (depthwise_interleaved), wider ones of
// stride 1 or 2 without dilation a plane at a time through a padded copy
// (depthwise_padded_plane); both finish their planes (returns true). Others sum a tap at a
// time, and the caller finishes those planes.
bool depthwise(const float* x, const float* w, const ConvGeometry& g, int64_t images, int64_t out_channels,
               int64_t multiplier, const float* bias, const float* residual, ConvActivation activation, float* y) {
    const SpatialAxis& h = g.axes[0];
    const SpatialAxis& v = g.axes[1];
    const int64_t planes = images * out_channels;
    if (has_avx2_fma() && v.out <= kInterleavedWidth) {
        parallel_for((planes + 7) / 8, grain_for(8 * g.positions * g.taps), [&](int64_t begin, int64_t end) {
            thread_local std::vector<float> scratch;  // eight planes' input, taps and sums
            for (int64_t group = begin; group < end; ++group) {
                DepthwisePlanes p{};
                p.count = static_cast<int>(std::min<int64_t>(8, planes - group * 8));
                for (int lane = 0; lane < p.count; ++lane) {
                    const int64_t plane = group * 8 + lane;
                    p.in[lane] = x + plane / multiplier * g.input_size;
                    p.kernel[lane] = w + plane % out_channels * g.taps;
                    p.out[lane] = y + plane * g.positions;
                    p.residual[lane] = residual ? residual + plane * g.positions : nullptr;
                    p.bias[lane] = bias ? bias[plane % out_channels] : 0.0f;
                }
                depthwise_interleaved(p, g, activation, scratch);
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

// One product per image and group: weights [M/group, C/group * taps] x columns. On our own f32
// kernel (bias, residual and ReLU per tile) a 2-D convolution reads its columns from the
// image's phases (convolution_taps.hpp), a group at a time; others unfold their columns
// and multiply a chunk of output positions at a time, the chunks spread over the threads, or
// read X in place for a 1x1 kernel; sgemm takes the whole column matrix. Returns whether the tiles were finished (bias,
// residual, ReLU) already.
bool grouped_gemm(const KernelContext& ctx, const float* x, const float* w, const ChannelBiasWriter& finish,
                  const ConvGeometry& g, int64_t images, int64_t out_channels, int64_t group, float* y) {
    const int64_t group_out = out_channels / group, rows = g.channels * g.taps;
    const bool direct = reads_input_directly(g);
    const FloatGemmKernel kernel = f32_gemm_kernel();
    const bool blas = kernel == FloatGemmKernel::blas;
    if (!direct && convolution_by_taps_takes(g, kernel)) {
        void* scratch = ctx.workspace(convolution_by_taps_bytes(g));
        if (group == 1) {
            convolution_by_taps(x, w, finish, g, images, out_channels, kernel, scratch);
            return true;
        }
        for (int64_t n = 0; n < images; ++n)  // each group a convolution of its own channels
            for (int64_t k = 0; k < group; ++k) {
                const int64_t plane = (n * out_channels + k * group_out) * g.positions;
                ChannelBiasWriter writer = finish;
                writer.y = static_cast<float*>(finish.y) + plane;
                if (finish.bias) writer.bias = finish.bias + k * group_out;
                if (finish.residual) writer.residual = static_cast<const float*>(finish.residual) + plane;
                convolution_by_taps(x + (n * group + k) * g.channels * g.input_size, w + k * group_out * rows, writer, g, 1,
                                    group_out, kernel, scratch);
            }
        return true;
    }
    auto* col = direct || !blas ? nullptr : static_cast<float*>(ctx.workspace(sizeof(float) * rows * g.positions));
    const int64_t chunk = column_chunk(g, sizeof(float)), chunks = (g.positions + chunk - 1) / chunk;
    for (int64_t n = 0; n < images; ++n) {
        for (int64_t k = 0; k < group; ++k) {
            const float* in = x + (n * group + k) * g.channels * g.input_size;
            const float* weights = w + k * group_out * rows;
            const int64_t plane = (n * out_channels + k * group_out) * g.positions;
            if (blas) {
                if (!direct) im2col(in, g, 0, g.positions, col);
                sgemm(false, false, group_out, g.positions, rows, 1.0f, weights, rows, direct ? in : col, g.positions,
                      0.0f, y + plane, g.positions);
                continue;
            }
            // The tiles of positions [p0, p1) from columns `b` (rows `ldb` apart).
            const auto multiply = [&](const float* b, int64_t ldb, int64_t p0, int64_t p1) {
                ChannelBiasWriter writer = finish;
                writer.y = y + plane + p0;
                if (finish.bias) writer.bias = finish.bias + k * group_out;
                if (finish.residual) writer.residual = static_cast<const float*>(finish.residual) + plane + p0;
                gemm_packed_float(packed_float_layout(kernel, rows, p1 - p0, ldb), b, weights, rows, group_out,
                                  &ChannelBiasWriter::tile, &writer);
            };
            if (direct) {
                multiply(in, g.positions, 0, g.positions);
                continue;
            }
            parallel_for(chunks, 1, [&](int64_t first, int64_t last) {
                thread_local std::vector<float> columns;  // one chunk: bounded by kColumnChunkBytes
                columns.resize(static_cast<size_t>(rows * chunk));
                for (int64_t c = first; c < last; ++c) {
                    const int64_t p0 = c * chunk, p1 = std::min(g.positions, p0 + chunk);
                    im2col(in, g, p0, p1, columns.data());
                    multiply(columns.data(), p1 - p0, p0, p1);
                }
            });
        }
    }
    return !blas;
}

// Conv, and FusedConv: act(Conv(X, W, B) + Z).
void conv_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    Tensor& y = ctx.output(0);
    require_same_dtype(ctx, 0, 1);
    const int64_t group = ctx.attrs().get_int("group", 1);
    const ConvGeometry g = conv_geometry(ctx, x.shape(), w.shape(), group);
    const int64_t images = x.shape()[0], out_channels = w.shape()[0];
    float* py = y.data<float>();
    if (y.numel() == 0) return;
    const float* bias = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
    const float* residual = ctx.has_input(3) ? ctx.input(3).data<float>() : nullptr;
    const ConvActivation activation = ConvActivation::of(ctx.attrs());
    bool finished = false;
    if (g.channels == 0)
        std::memset(py, 0, y.nbytes());  // no taps: sgemm would leave the output unwritten
    else if (g.channels == 1 && group > 1 && g.axes.size() == 2)
        finished = depthwise(x.data<float>(), w.data<float>(), g, images, out_channels, out_channels / group, bias,
                             residual, activation, py);
    else
        finished = grouped_gemm(ctx, x.data<float>(), w.data<float>(), {py, false, g.positions, bias, residual, activation}, g,
                                images, out_channels, group, py);
    if (!finished) finish_conv_planes(py, bias, residual, activation, images * out_channels, out_channels, g.positions);
}

}  // namespace

void register_conv_kernels(KernelRegistry& r) {
    for (const char* op : {"Conv", "FusedConv"}) {
        add_floating(r, op, conv_kernel);
        register_bf16_conv_kernel(r, op);
    }
}

}  // namespace infer::cpu
