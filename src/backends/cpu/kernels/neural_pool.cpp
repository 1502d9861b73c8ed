// MaxPool (with its Indices output), AveragePool (1-D to 3-D windows), GlobalAveragePool and
// MaxUnpool over [N, C, spatial...]; ChannelsLastMaxPool of 8-bit or f32 data over [N, spatial..., C].
#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/strided_load.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "core/ops/shapes_neural.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

namespace infer::cpu {

namespace {

// One spatial axis of a pooling window; 1-D and 2-D pools get trivial leading axes, so one
// loop nest serves 1-D, 2-D and 3-D windows.
struct PoolAxis {
    int64_t in, kernel, stride, dilation, pad_begin, pad_end, out;
};
constexpr size_t kPoolAxes = 3;

std::array<PoolAxis, kPoolAxes> pool_axes(const KernelContext& ctx, const Shape& x) {
    const size_t spatial = x.rank() - 2;
    if (spatial < 1 || spatial > kPoolAxes)
        unsupported(ctx, std::to_string(spatial) + "-D pooling (only 1-D to 3-D)");
    const detail::WindowParams p = detail::read_window_params(ctx.attrs(), spatial, {});
    const std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
    const std::vector<detail::WindowGeometry> g = detail::window_geometry(p, in);
    std::array<PoolAxis, kPoolAxes> axes;
    axes.fill(PoolAxis{1, 1, 1, 1, 0, 0, 1});
    for (size_t i = 0; i < spatial; ++i)
        axes[kPoolAxes - spatial + i] = PoolAxis{in[i],          p.kernel[i],  p.strides[i], p.dilations[i],
                                                 g[i].pad_begin, g[i].pad_end, g[i].out};
    return axes;
}

// Window taps [first, last) of output `o` that fall inside the input, and the number of taps
// inside the padded input (what count_include_pad divides by).
struct Taps {
    int64_t first, last, padded;
};
Taps taps(const PoolAxis& a, int64_t o) {
    const int64_t start = o * a.stride - a.pad_begin;
    const auto position = [&](int64_t k) { return start + k * a.dilation; };
    Taps t{0, a.kernel, 0};
    while (t.first < a.kernel && position(t.first) < 0) ++t.first;
    while (t.last > t.first && position(t.last - 1) >= a.in) --t.last;
    for (int64_t k = 0; k < a.kernel; ++k)
        if (position(k) >= -a.pad_begin && position(k) < a.in + a.pad_end) ++t.padded;
    return t;
}

// storage_order 1: Indices count the spatial axes in column-major order (the first fastest);
// the unit leading axes of 1-D and 2-D pools add nothing.
int64_t column_index(const std::array<PoolAxis, kPoolAxes>& a, int64_t row_major) {
    const int64_t w = row_major % a[2].in, h = row_major / a[2].in % a[1].in, d = row_major / (a[2].in * a[1].in);
    return (w * a[1].in + h) * a[0].in + d;
}

// max(a, b) that returns NaN when either is NaN (the generic loop's rule: a NaN in the window is
// the result); _mm256_max_ps alone gives its second operand back when one is NaN.
__attribute__((target("avx2"))) inline __m256 max_keeping_nan(__m256 a, __m256 b) {
    return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
}

// 2-D max pooling of floats without Indices and without dilation, the row stride 1 or 2 (a
// ResNet's stem: 3x3, stride 2), with AVX2: per output row, the maximum down the window's rows
// first, into a row padded with -inf on both sides, then across it eight outputs at a time
// (ResNet-50's stem pool took 1.29 ms on 2 cores in the loop below, ONNX Runtime 0.09 ms).
bool max_pool_2d_rows(const float* px, float* py, int64_t planes, const std::array<PoolAxis, kPoolAxes>& a,
                      const Taps* rows_of) {
    const PoolAxis& h = a[1];
    const PoolAxis& w = a[2];
    if (!has_avx2() || a[0].in != 1 || a[0].kernel != 1 || h.dilation != 1 || w.dilation != 1 || w.stride > 2) return false;
    const int64_t blocks = (w.out + 7) / 8;
    // The padded row: pad_begin of -inf, the row's maxima, then -inf as far as the last block reads.
    const int64_t length = std::max(w.pad_begin + w.in, (blocks * 8 - 1) * w.stride + w.kernel + 8 * w.stride);
    parallel_for(planes, grain_for(h.out * w.in * h.kernel), [&](int64_t begin, int64_t end) {
        thread_local std::vector<float> padded;  // one row: bounded by the input's width
        padded.assign(static_cast<size_t>(length), -std::numeric_limits<float>::infinity());
        const float* const padded_row = padded.data();  // once: each use of a thread_local is a call
        float* row = padded.data() + w.pad_begin;
        const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        for (int64_t p = begin; p < end; ++p) {
            const float* in = px + p * h.in * w.in;
            float* out = py + p * h.out * w.out;
            for (int64_t oh = 0; oh < h.out; ++oh) {
                const Taps t = rows_of[oh];
                const int64_t ih0 = oh * h.stride - h.pad_begin;
                if (t.first >= t.last) {
                    std::fill(row, row + w.in, -std::numeric_limits<float>::infinity());
                } else {
                    std::copy_n(in + (ih0 + t.first) * w.in, w.in, row);
                    for (int64_t kh = t.first + 1; kh < t.last; ++kh) {
                        const float* next = in + (ih0 + kh) * w.in;
                        int64_t i = 0;
                        for (; i + 8 <= w.in; i += 8)
                            _mm256_storeu_ps(row + i, max_keeping_nan(_mm256_loadu_ps(row + i), _mm256_loadu_ps(next + i)));
                        for (; i < w.in; ++i)
                            if (row[i] == row[i] && (next[i] != next[i] || next[i] > row[i])) row[i] = next[i];
                    }
                }
                float* dst = out + oh * w.out;
                for (int64_t ow = 0; ow < w.out; ow += 8) {
                    const float* x = padded_row + ow * w.stride;  // row index ow·stride - pad_begin
                    __m256 best = strided8(x, w.stride);
                    for (int64_t kw = 1; kw < w.kernel; ++kw) best = max_keeping_nan(best, strided8(x + kw, w.stride));
                    const int64_t count = std::min<int64_t>(8, w.out - ow);
                    if (count == 8)
                        _mm256_storeu_ps(dst + ow, best);
                    else
                        _mm256_maskstore_ps(dst + ow, _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)), lanes), best);
                }
            }
        }
    });
    return true;
}

// 2-D max pooling of 8-bit integers (a QDQ CNN's stem pool on its bytes), without Indices and
// without dilation, as max_pool_2d_rows does it: per output row the maximum down the window's
// rows into a row padded with the type's lowest value (the compiler vectorizes that loop), then
// across it (the generic loop took 3.2 ms for ResNet-50's stem pool on one core).
// to[i] = max(to[i], from[i]): distinct arrays (restrict), so that the compiler vectorizes it
// (byte stores may alias anything, and without it every element reloaded the loop's bounds).
template <class T>
void elementwise_max(T* __restrict__ to, const T* __restrict__ from, int64_t n) {
    for (int64_t i = 0; i < n; ++i) to[i] = std::max(to[i], from[i]);
}

template <class T>
void max_pool_2d_rows_integer(const T* px, T* py, int64_t planes, const std::array<PoolAxis, kPoolAxes>& a,
                              const Taps* rows_of) {
    const PoolAxis& h = a[1];
    const PoolAxis& w = a[2];
    const int64_t length = std::max(w.pad_begin + w.in, (w.out - 1) * w.stride + w.kernel);
    parallel_for(planes, grain_for(h.out * w.in * h.kernel), [&](int64_t begin, int64_t end) {
        thread_local std::vector<T> padded, across;  // one row each: bounded by the input's width
        padded.assign(static_cast<size_t>(length), std::numeric_limits<T>::lowest());
        across.resize(static_cast<size_t>(length));
        // Plain pointers from here on: in a shared library every use of a thread_local is a call.
        T* const padded_row = padded.data();
        T* const maxima = across.data();
        const int64_t starts = (w.out - 1) * w.stride + 1;
        T* row = padded_row + w.pad_begin;
        for (int64_t p = begin; p < end; ++p) {
            const T* in = px + p * h.in * w.in;
            T* out = py + p * h.out * w.out;
            for (int64_t oh = 0; oh < h.out; ++oh) {
                const Taps t = rows_of[oh];
                const int64_t ih0 = oh * h.stride - h.pad_begin;
                if (t.first >= t.last) {
                    std::fill(row, row + w.in, std::numeric_limits<T>::lowest());
                } else {
                    std::copy_n(in + (ih0 + t.first) * w.in, w.in, row);
                    for (int64_t kh = t.first + 1; kh < t.last; ++kh)
                        elementwise_max(row, in + (ih0 + kh) * w.in, w.in);
                }
                // The maximum of every window start, stride 1, in elementwise passes, then every
                // stride-th of them.
                std::copy_n(padded_row, starts, maxima);
                for (int64_t kw = 1; kw < w.kernel; ++kw) elementwise_max(maxima, padded_row + kw, starts);
                T* dst = out + oh * w.out;
                for (int64_t ow = 0; ow < w.out; ++ow) dst[ow] = maxima[ow * w.stride];
            }
        }
    });
}

// ChannelsLastMaxPool of 8-bit or f32 X [N, spatial..., C] (passes/channels_last.cpp): each
// output pixel's C maxima together, the window's pixels taken a whole channel row at a time
// (elementwise_max, vectorized over the channels); in parallel over output pixels.
template <class T>
void channels_last_max_pool_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const int64_t images = s[0], channels = s[s.rank() - 1];
    const std::array<PoolAxis, kPoolAxes> a = pool_axes(ctx, channels_first(s));
    const T* px = x.data<T>();
    T* py = ctx.output(0).data<T>();
    const int64_t out_pixels = a[0].out * a[1].out * a[2].out;
    parallel_for(images * out_pixels, grain_for(channels * a[0].kernel * a[1].kernel * a[2].kernel), [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
            const int64_t n = o / out_pixels, pixel = o % out_pixels;
            const int64_t at[kPoolAxes] = {pixel / (a[1].out * a[2].out), pixel / a[2].out % a[1].out, pixel % a[2].out};
            Taps t[kPoolAxes];
            for (size_t d = 0; d < kPoolAxes; ++d) t[d] = taps(a[d], at[d]);
            T* row = py + o * channels;
            std::fill_n(row, channels, std::numeric_limits<T>::lowest());
            for (int64_t kd = t[0].first; kd < t[0].last; ++kd)
                for (int64_t kh = t[1].first; kh < t[1].last; ++kh)
                    for (int64_t kw = t[2].first; kw < t[2].last; ++kw) {
                        const auto input_at = [&](size_t d, int64_t k) { return at[d] * a[d].stride - a[d].pad_begin + k * a[d].dilation; };
                        const int64_t from = ((n * a[0].in + input_at(0, kd)) * a[1].in + input_at(1, kh)) * a[2].in + input_at(2, kw);
                        elementwise_max(row, px + from * channels, channels);
                    }
        }
    });
}

// T is float for AveragePool and for MaxPool of floats (f16/bf16 convert at the boundary), or
// an integer type for MaxPool. MaxPool's optional Indices output gets the flat (row-major)
// index into X of each maximum, the first one on ties.
template <bool kMax, class T>
void pool_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const std::array<PoolAxis, kPoolAxes> a = pool_axes(ctx, x.shape());
    const bool include_pad = ctx.attrs().get_int("count_include_pad", 0) != 0;
    const T* px = x.data<T>();
    T* py = y.data<T>();
    int64_t* indices = kMax && ctx.num_outputs() > 1 ? ctx.output(1).data<int64_t>() : nullptr;
    const bool column_major = ctx.attrs().get_int("storage_order", 0) != 0;
    const int64_t planes = x.shape()[0] * x.shape()[1];
    // Every plane shares the window bounds, so they are worked out once per axis.
    int64_t total = 0;
    for (const PoolAxis& axis : a) total += axis.out;
    auto* bounds = static_cast<Taps*>(ctx.workspace(sizeof(Taps) * static_cast<size_t>(total)));
    std::array<Taps*, kPoolAxes> axis_taps;
    for (size_t d = 0, at = 0; d < kPoolAxes; at += static_cast<size_t>(a[d].out), ++d) {
        axis_taps[d] = bounds + at;
        for (int64_t o = 0; o < a[d].out; ++o) axis_taps[d][o] = taps(a[d], o);
    }
    if constexpr (kMax && std::is_same_v<T, float>)
        if (!indices && max_pool_2d_rows(px, py, planes, a, axis_taps[1])) return;
    if constexpr (kMax && sizeof(T) == 1)
        if (!indices && a[0].in == 1 && a[0].kernel == 1 && a[1].dilation == 1 && a[2].dilation == 1)
            return max_pool_2d_rows_integer(px, py, planes, a, axis_taps[1]);
    const int64_t in_size = a[0].in * a[1].in * a[2].in, out_size = a[0].out * a[1].out * a[2].out;
    const int64_t work = out_size * a[0].kernel * a[1].kernel * a[2].kernel;
    parallel_for(planes, grain_for(work), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const T* in = px + p * in_size;
            int64_t o = p * out_size;
            for (int64_t od = 0; od < a[0].out; ++od)
                for (int64_t oh = 0; oh < a[1].out; ++oh)
                    for (int64_t ow = 0; ow < a[2].out; ++ow, ++o) {
                        const Taps td = axis_taps[0][od], th = axis_taps[1][oh], tw = axis_taps[2][ow];
                        const int64_t id0 = od * a[0].stride - a[0].pad_begin;
                        const int64_t ih0 = oh * a[1].stride - a[1].pad_begin;
                        const int64_t iw0 = ow * a[2].stride - a[2].pad_begin;
                        T best = std::numeric_limits<T>::lowest();
                        if constexpr (std::numeric_limits<T>::has_infinity) best = -std::numeric_limits<T>::infinity();
                        int64_t best_at = -1;
                        double sum = 0;
                        if (kMax && !indices) {
                            // Without Indices, a branch-free maximum; a NaN anywhere in the window
                            // is the result, as the tracked loop below makes it.
                            bool nan = false;
                            for (int64_t kd = td.first; kd < td.last; ++kd)
                                for (int64_t kh = th.first; kh < th.last; ++kh) {
                                    const T* row = in + ((id0 + kd * a[0].dilation) * a[1].in + ih0 + kh * a[1].dilation) * a[2].in + iw0;
                                    for (int64_t kw = tw.first; kw < tw.last; ++kw) {
                                        const T v = row[kw * a[2].dilation];
                                        nan |= v != v;
                                        best = v > best ? v : best;
                                    }
                                }
                            if constexpr (std::numeric_limits<T>::has_quiet_NaN)
                                if (nan) best = std::numeric_limits<T>::quiet_NaN();
                            py[o] = best;
                            continue;
                        }
                        for (int64_t kd = td.first; kd < td.last; ++kd)
                            for (int64_t kh = th.first; kh < th.last; ++kh) {
                                const int64_t row = ((id0 + kd * a[0].dilation) * a[1].in + ih0 + kh * a[1].dilation) * a[2].in;
                                for (int64_t kw = tw.first; kw < tw.last; ++kw) {
                                    const int64_t at = row + iw0 + kw * a[2].dilation;
                                    const T v = in[at];
                                    if constexpr (kMax) {
                                        if (best_at < 0 || (best == best && (v > best || v != v))) best = v, best_at = at;
                                    } else {
                                        sum += static_cast<double>(v);
                                    }
                                }
                            }
                        if constexpr (kMax) {
                            py[o] = best;
                            if (indices) indices[o] = p * in_size + (column_major ? column_index(a, best_at) : best_at);
                        } else {
                            const int64_t count = include_pad ? td.padded * th.padded * tw.padded
                                                              : (td.last - td.first) * (th.last - th.first) * (tw.last - tw.first);
                            py[o] = static_cast<T>(sum / static_cast<double>(count));
                        }
                    }
        }
    });
}

// Σ x[0, n) in f64, sixteen values a step in four independent 4-lane sums: the one scalar
// chain of additions waited on each addition's latency (EfficientNet's squeeze-and-excitation
// pools took 0.9 ms of an 11 ms run, ONNX Runtime 0.15).
__attribute__((target("avx2"))) double sum_avx2(const float* x, int64_t n) {
    __m256d sums[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 4; ++j) sums[j] = _mm256_add_pd(sums[j], _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4 * j)));
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, _mm256_add_pd(_mm256_add_pd(sums[0], sums[1]), _mm256_add_pd(sums[2], sums[3])));
    double sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    for (; i < n; ++i) sum += x[i];
    return sum;
}

void global_average_pool_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t>& dims = x.shape().dims();
    const int64_t planes = dims[0] * dims[1], size = product(dims, 2, dims.size());
    const float* px = x.data<float>();
    float* py = ctx.output(0).data<float>();
    const bool avx2 = has_avx2();
    parallel_for(planes, grain_for(size), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const float* plane = px + p * size;
            double sum = 0;
            if (avx2) {
                sum = sum_avx2(plane, size);
            } else {
                for (int64_t i = 0; i < size; ++i) sum += plane[i];
            }
            py[p] = static_cast<float>(sum / static_cast<double>(size));
        }
    });
}

// MaxUnpool: zeros, with each X element at the position its index names. Indices count in
// the shape MaxPool's geometry gives back (kernel, strides, pads); an explicit output_shape
// only pads that shape at the end of each axis, as ONNX's reference does.
void max_unpool_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const int64_t* indices = ctx.input(1).data<int64_t>();
    Tensor& y = ctx.output(0);
    const size_t spatial = x.shape().rank() - 2;
    const detail::WindowParams p = detail::read_window_params(ctx.attrs(), spatial, {});
    std::vector<int64_t> inferred{x.shape()[0], x.shape()[1]};
    for (size_t i = 0; i < spatial; ++i)
        inferred.push_back((x.shape()[2 + i] - 1) * p.strides[i] + p.kernel[i] - p.pads[i] - p.pads[spatial + i]);
    const Shape from(inferred);
    const std::vector<int64_t>& to = y.shape().dims();
    const size_t element = dtype_size(x.dtype());
    auto* out = static_cast<unsigned char*>(y.raw_data());
    const auto* in = static_cast<const unsigned char*>(x.raw_data());
    std::memset(out, 0, y.nbytes());
    for (int64_t i = 0, count = x.numel(); i < count; ++i) {
        if (indices[i] < 0 || indices[i] >= from.numel())
            invalid_argument(ctx, "index " + std::to_string(indices[i]) + " is outside " + from.to_string());
        int64_t rest = indices[i], target = 0, stride = 1;
        for (size_t d = inferred.size(); d-- > 0;) {
            const int64_t coordinate = rest % inferred[d];
            rest /= inferred[d];
            if (coordinate >= to[d]) invalid_argument(ctx, "index " + std::to_string(indices[i]) + " falls outside the output " + y.shape().to_string());
            target += coordinate * stride;
            stride *= to[d];
        }
        std::memcpy(out + static_cast<size_t>(target) * element, in + static_cast<size_t>(i) * element, element);
    }
}

}  // namespace

void register_pool_kernels(KernelRegistry& r) {
    for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64}) r.add("MaxUnpool", t, max_unpool_kernel);
    add_floating(r, "MaxPool", pool_kernel<true, float>);
    r.add("MaxPool", DType::u8, pool_kernel<true, uint8_t>);
    r.add("MaxPool", DType::i8, pool_kernel<true, int8_t>);
    r.add("MaxPool", DType::f64, pool_kernel<true, double>);
    r.add("ChannelsLastMaxPool", DType::u8, channels_last_max_pool_kernel<uint8_t>);
    r.add("ChannelsLastMaxPool", DType::i8, channels_last_max_pool_kernel<int8_t>);
    r.add("ChannelsLastMaxPool", DType::f32, channels_last_max_pool_kernel<float>);
    add_floating(r, "AveragePool", pool_kernel<false, float>);
    r.add("AveragePool", DType::f64, pool_kernel<false, double>);
    add_floating(r, "GlobalAveragePool", global_average_pool_kernel);
}

}  // namespace infer::cpu
