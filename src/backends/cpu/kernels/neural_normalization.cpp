// Softmax, LayerNormalization, RMSNormalization and BatchNormalization (inference and training mode).
#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_normalization.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/strided_copy.hpp"
#include "backends/cpu/kernels/vector_exp.hpp"

#include <Eigen/Core>

#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace infer::cpu {

using Array = Eigen::Map<Eigen::ArrayXf>;
using ConstArray = Eigen::Map<const Eigen::ArrayXf>;

namespace {

// The same in vectors of floats: the largest, then e^(x - largest) and its sum, then the scale.
template <class V>
[[gnu::always_inline]] inline void softmax_row_lanes(const float* x, float* y, int64_t length) {
    constexpr int64_t lanes = kLanes<V>;
    int64_t i = 0;
    V largest = splat<V>(-__builtin_inff());
    for (; i + lanes <= length; i += lanes) {
        const V v = load_lanes<V>(x + i);
        largest = v > largest ? v : largest;
    }
    float top = lane_max(largest);
    for (; i < length; ++i) top = std::max(top, x[i]);
    V sums = splat<V>(0.0f);
    for (i = 0; i + lanes <= length; i += lanes) {
        const V e = exp_lanes(load_lanes<V>(x + i) - top);
        store_lanes(y + i, e);
        sums += e;
    }
    float sum = lane_sum(sums);
    for (; i < length; ++i) sum += y[i] = std::exp(x[i] - top);
    const float inverse = 1.0f / sum;
    for (i = 0; i + lanes <= length; i += lanes) store_lanes(y + i, load_lanes<V>(y + i) * inverse);
    for (; i < length; ++i) y[i] *= inverse;
}

__attribute__((target("avx2,fma"))) void softmax_row_avx2(const float* x, float* y, int64_t length) {
    softmax_row_lanes<__m256>(x, y, length);
}
__attribute__((target("avx512f"))) void softmax_row_avx512(const float* x, float* y, int64_t length) {
    softmax_row_lanes<__m512>(x, y, length);
}

}  // namespace

void softmax_row(const float* x, float* y, int64_t length) {
    switch (float_vector_isa()) {
    case VectorIsa::avx512: return softmax_row_avx512(x, y, length);
    case VectorIsa::avx2: return softmax_row_avx2(x, y, length);
    case VectorIsa::scalar: break;
    }
    const ConstArray in(x, length);
    Array out(y, length);
    out = (in - in.maxCoeff()).exp();
    out *= 1.0f / out.sum();
}

void add_bias_row(float* row, const float* bias, int64_t length, int64_t column_step) {
    if (column_step == 1)  // contiguous: a loop the compiler vectorises
        for (int64_t j = 0; j < length; ++j) row[j] += bias[j];
    else
        for (int64_t j = 0; j < length; ++j) row[j] += bias[j * column_step];
}

void biased_softmax_rows(float* scores, int64_t rows, int64_t length, const float* bias, int64_t row_step,
                         int64_t column_step) {
    for (int64_t i = 0; i < rows; ++i) {
        float* row = scores + i * length;
        if (bias) add_bias_row(row, bias + i * row_step, length, column_step);
        softmax_row(row, row, length);
    }
}

namespace {

// A row's mean and inverse standard deviation, summed in f64 (rows with a large mean lose
// nothing); one f64 chain per row in order, as before, is also what made LayerNorm a tenth of
// a MiniLM run: four cycles a value in the dependent adds. Not centered (RMSNormalization):
// the mean taken as 0, so inv_std is 1 / sqrt(mean(x²) + epsilon).
void row_moments(const float* row, int64_t length, float epsilon, bool centered, double& mean, double& inv_std) {
    double sum = 0;
    if (centered)
        for (int64_t i = 0; i < length; ++i) sum += row[i];
    mean = sum / static_cast<double>(length);
    double squares = 0;
    for (int64_t i = 0; i < length; ++i) squares += (row[i] - mean) * (row[i] - mean);
    inv_std = 1.0 / std::sqrt(squares / static_cast<double>(length) + epsilon);
}

// The same sums in sixteen independent f64 lanes (four vectors of four), so the adds overlap.
__attribute__((target("avx2,fma"))) void row_moments_avx2(const float* row, int64_t length, float epsilon,
                                                          bool centered, double& mean, double& inv_std) {
    __m256d acc[4] = {_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    auto total = [&]() {
        alignas(32) double lanes[4];
        _mm256_store_pd(lanes, _mm256_add_pd(_mm256_add_pd(acc[0], acc[1]), _mm256_add_pd(acc[2], acc[3])));
        return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    };
    int64_t i = 0;
    mean = 0;
    if (centered) {
        for (; i + 16 <= length; i += 16)
            for (int j = 0; j < 4; ++j) acc[j] = _mm256_add_pd(acc[j], _mm256_cvtps_pd(_mm_loadu_ps(row + i + 4 * j)));
        double sum = total();
        for (; i < length; ++i) sum += row[i];
        mean = sum / static_cast<double>(length);
    }
    const __m256d m = _mm256_set1_pd(mean);
    for (__m256d& a : acc) a = _mm256_setzero_pd();
    for (i = 0; i + 16 <= length; i += 16)
        for (int j = 0; j < 4; ++j) {
            const __m256d d = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(row + i + 4 * j)), m);
            acc[j] = _mm256_fmadd_pd(d, d, acc[j]);
        }
    double squares = total();
    for (; i < length; ++i) squares += (row[i] - mean) * (row[i] - mean);
    inv_std = 1.0 / std::sqrt(squares / static_cast<double>(length) + epsilon);
}

}  // namespace

namespace {

// One row of LayerNorm, or of RMSNormalization when not `centered` (no mean taken off, no
// bias); its mean and inverse standard deviation go to *mean_out and *inv_std_out if given.
void normalize_row(const float* row, float* out, int64_t length, const float* scale, const float* bias, float epsilon,
                   bool centered, float* mean_out, float* inv_std_out) {
    static const bool avx2 = has_avx2_fma();
    double mean = 0, inv_std = 0;
    if (avx2)
        row_moments_avx2(row, length, epsilon, centered, mean, inv_std);
    else
        row_moments(row, length, epsilon, centered, mean, inv_std);
    const float m = static_cast<float>(mean), s = static_cast<float>(inv_std);
    for (int64_t i = 0; i < length; ++i) out[i] = (row[i] - m) * s * scale[i] + (bias ? bias[i] : 0.0f);
    if (mean_out) *mean_out = m;
    if (inv_std_out) *inv_std_out = s;
}

// The same over rows, spread over the pool.
void normalize_rows(const float* x, float* y, int64_t rows, int64_t length, const float* scale, const float* bias,
                    float epsilon, bool centered, float* mean_out, float* inv_std_out) {
    parallel_for(rows, grain_for(length), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
            normalize_row(x + r * length, y + r * length, length, scale, bias, epsilon, centered,
                          mean_out ? mean_out + r : nullptr, inv_std_out ? inv_std_out + r : nullptr);
    });
}

}  // namespace

void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t length, const float* scale,
                     const float* bias, float epsilon, float* mean_out, float* inv_std_out) {
    normalize_rows(x, y, rows, length, scale, bias, epsilon, true, mean_out, inv_std_out);
}

void layer_norm_row(const float* x, float* y, int64_t length, const float* scale, const float* bias, float epsilon) {
    normalize_row(x, y, length, scale, bias, epsilon, true, nullptr, nullptr);
}

namespace {

// Softmax of rows that are contiguous (the axis is the innermost dimension with extent > 1).
void softmax_rows(const float* x, float* y, int64_t rows, int64_t length) {
    parallel_for(rows, grain_for(length), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) softmax_row(x + r * length, y + r * length, length);
    });
}

// Softmax along an axis with `inner` elements between neighbours: columns are processed a
// tile at a time so every pass reads memory in order.
void softmax_strided(const float* x, float* y, int64_t outer, int64_t length, int64_t inner) {
    constexpr int64_t kTile = 64;
    const int64_t tiles = (inner + kTile - 1) / kTile;
    parallel_for(outer * tiles, grain_for(length * kTile), [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const int64_t o = t / tiles, first = (t % tiles) * kTile;
            const int64_t width = std::min(kTile, inner - first);
            const float* in = x + o * length * inner + first;
            float* out = y + o * length * inner + first;
            float max_buf[kTile], sum_buf[kTile];
            Array max(max_buf, width), sum(sum_buf, width);
            max = ConstArray(in, width);
            for (int64_t a = 1; a < length; ++a) max = max.max(ConstArray(in + a * inner, width));
            sum.setZero();
            for (int64_t a = 0; a < length; ++a) {
                Array row(out + a * inner, width);
                row = (ConstArray(in + a * inner, width) - max).exp();
                sum += row;
            }
            sum = sum.inverse();
            for (int64_t a = 0; a < length; ++a) Array(out + a * inner, width) *= sum;
        }
    });
}

void softmax_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    if (in.numel() == 0) return;
    const std::vector<int64_t>& dims = in.shape().dims();
    const size_t axis = in.shape().normalize_axis(ctx.attrs().get_int("axis", -1));
    const int64_t outer = product(dims, 0, axis), length = dims[axis];
    const int64_t inner = product(dims, axis + 1, dims.size());
    if (inner == 1)
        softmax_rows(in.data<float>(), out.data<float>(), outer, length);
    else
        softmax_strided(in.data<float>(), out.data<float>(), outer, length, inner);
}

// Scale or bias as a dense vector over the normalized dimensions (broadcast when given smaller).
const float* normalized_operand(const Tensor& t, const Shape& normalized, float* scratch) {
    if (t.numel() == normalized.numel()) return t.data<float>();
    broadcast_copy(scratch, normalized, t.data<float>(), t.shape(), sizeof(float));
    return scratch;
}

void layer_norm_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const std::vector<int64_t>& dims = in.shape().dims();
    const size_t axis = in.shape().normalize_axis(ctx.attrs().get_int("axis", -1));
    const float epsilon = ctx.attrs().get_float("epsilon", 1e-5f);
    const int64_t rows = product(dims, 0, axis), length = product(dims, axis, dims.size());
    const Shape normalized(std::vector<int64_t>(dims.begin() + axis, dims.end()));
    auto* scratch = static_cast<float*>(ctx.workspace(2 * sizeof(float) * length));
    const float* scale = normalized_operand(ctx.input(1), normalized, scratch);
    const float* bias =
        ctx.has_input(2) ? normalized_operand(ctx.input(2), normalized, scratch + length) : nullptr;
    const auto stat_output = [&](size_t i) -> float* {
        return i < ctx.num_outputs() && ctx.output(i).defined() ? ctx.output(i).data<float>()
                                                                : nullptr;
    };
    layer_norm_rows(in.data<float>(), ctx.output(0).data<float>(), rows, length, scale, bias, epsilon,
                    stat_output(1), stat_output(2));
}

// X, Scale and Y each f32, f16 or bf16 (after the f16/bf16 lowering: X and Y in the low type,
// Scale kept in f32; see fold_norm_casts.cpp), the sums in f64 and the row in f32.
void rms_norm_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const Tensor& scale_in = ctx.input(1);
    Tensor& out = ctx.output(0);
    if (out.numel() == 0) return;
    const std::vector<int64_t>& dims = in.shape().dims();
    const size_t axis = in.shape().normalize_axis(ctx.attrs().get_int("axis", -1));
    const int64_t rows = product(dims, 0, axis), length = product(dims, axis, dims.size());
    const Shape normalized(std::vector<int64_t>(dims.begin() + axis, dims.end()));
    const bool low_x = in.dtype() != DType::f32, low_scale = scale_in.dtype() != DType::f32, low_y = out.dtype() != DType::f32;
    const auto count = static_cast<size_t>(in.numel());
    float* scratch = static_cast<float*>(ctx.workspace(
        sizeof(float) * ((low_x ? count : 0) + (low_y ? count : 0) + static_cast<size_t>(length + (low_scale ? scale_in.numel() : 0)))));
    float* x = low_x ? scratch : nullptr;
    float* y = low_y ? scratch + (low_x ? count : 0) : out.data<float>();
    float* scale_scratch = scratch + (low_x ? count : 0) + (low_y ? count : 0);
    if (low_x) widen_to_float(in, x);
    const float* scale = scale_scratch;
    if (!low_scale) {
        scale = normalized_operand(scale_in, normalized, scale_scratch);
    } else {
        float* widened = scale_scratch + length;
        widen_to_float(scale_in, widened);
        if (scale_in.numel() == length) scale = widened;
        else broadcast_copy(scale_scratch, normalized, widened, scale_in.shape(), sizeof(float));
    }
    normalize_rows(low_x ? x : in.data<float>(), y, rows, length, scale, nullptr, ctx.attrs().get_float("epsilon", 1e-5f),
                   false, nullptr, nullptr);
    if (low_y) narrow_from_float(y, out);
}

// Training mode normalizes with the batch's own statistics (population variance over every
// axis but the channel's), and returns the running statistics updated with them:
// running = input * momentum + batch * (1 - momentum).
void batch_norm_training(KernelContext& ctx, std::vector<double>& mean, std::vector<double>& var) {
    const Tensor& in = ctx.input(0);
    const std::vector<int64_t>& dims = in.shape().dims();
    const int64_t batches = dims[0], channels = dims[1];
    const int64_t inner = product(dims, 2, dims.size());
    const float* x = in.data<float>();
    const double count = static_cast<double>(batches * inner);
    parallel_for(channels, 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
            double sum = 0, squares = 0;
            for (int64_t b = 0; b < batches; ++b)
                for (int64_t i = 0; i < inner; ++i) sum += x[(b * channels + c) * inner + i];
            const double m = sum / count;
            for (int64_t b = 0; b < batches; ++b)
                for (int64_t i = 0; i < inner; ++i) {
                    const double d = x[(b * channels + c) * inner + i] - m;
                    squares += d * d;
                }
            mean[static_cast<size_t>(c)] = m;
            var[static_cast<size_t>(c)] = squares / count;
        }
    });
    const double momentum = ctx.attrs().get_float("momentum", 0.9f);
    for (size_t k = 1; k < 3 && k < ctx.num_outputs(); ++k) {
        if (!ctx.output(k).defined()) continue;
        const float* running = ctx.input(k + 2).data<float>();
        const std::vector<double>& batch = k == 1 ? mean : var;
        float* out = ctx.output(k).data<float>();
        for (int64_t c = 0; c < channels; ++c)
            out[c] = static_cast<float>(running[c] * momentum + batch[static_cast<size_t>(c)] * (1 - momentum));
    }
}

void batch_norm_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const std::vector<int64_t>& dims = in.shape().dims();
    const int64_t batches = dims[0], channels = dims[1];
    const int64_t inner = product(dims, 2, dims.size());
    const double epsilon = ctx.attrs().get_float("epsilon", 1e-5f);
    std::vector<double> mean(static_cast<size_t>(channels)), var(static_cast<size_t>(channels));
    if (ctx.attrs().get_int("training_mode", 0) != 0) {
        batch_norm_training(ctx, mean, var);
    } else {
        for (int64_t c = 0; c < channels; ++c) {
            mean[static_cast<size_t>(c)] = ctx.input(3).data<float>()[c];
            var[static_cast<size_t>(c)] = ctx.input(4).data<float>()[c];
        }
    }
    const float* scale = ctx.input(1).data<float>();
    const float* bias = ctx.input(2).data<float>();
    const float* x = in.data<float>();
    float* y = ctx.output(0).data<float>();
    parallel_for(batches * channels, grain_for(inner), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const size_t c = static_cast<size_t>(p % channels);
            const double a = scale[c] / std::sqrt(var[c] + epsilon);
            const float mul = static_cast<float>(a), add = static_cast<float>(bias[c] - mean[c] * a);
            Array(y + p * inner, inner) = ConstArray(x + p * inner, inner) * mul + add;
        }
    });
}

}  // namespace

void register_normalization_kernels(KernelRegistry& r) {
    add_floating(r, "Softmax", softmax_kernel);
    add_floating(r, "LayerNormalization", layer_norm_kernel);
    for (DType t : {DType::f32, DType::f16, DType::bf16}) r.add("RMSNormalization", t, rms_norm_kernel);
    add_floating(r, "BatchNormalization", batch_norm_kernel);
}

}  // namespace infer::cpu
