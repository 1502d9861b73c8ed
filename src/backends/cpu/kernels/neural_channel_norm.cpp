// Normalizations and pools over [N, C, ...] tensors: InstanceNormalization (per image and
// channel), LRN (across neighbouring channels), MeanVarianceNormalization (over chosen axes) and
// GlobalMaxPool (per image and channel). Statistics are summed in double.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <cmath>

namespace infer::cpu {

namespace {

void instance_norm_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const auto& d = x.shape().dims();
    const int64_t channels = d[1], planes = d[0] * d[1], size = product(d, 2, d.size());
    const float* px = x.data<float>();
    const float* scale = ctx.input(1).data<float>();
    const float* bias = ctx.input(2).data<float>();
    const double epsilon = ctx.attrs().get_float("epsilon", 1e-5f);
    float* py = ctx.output(0).data<float>();
    parallel_for(planes, grain_for(3 * size), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const float* in = px + p * size;
            double mean = 0, var = 0;
            for (int64_t i = 0; i < size; ++i) mean += in[i];
            mean /= static_cast<double>(size);
            for (int64_t i = 0; i < size; ++i) var += (in[i] - mean) * (in[i] - mean);
            var /= static_cast<double>(size);
            const double k = scale[p % channels] / std::sqrt(var + epsilon);
            const double b = bias[p % channels] - mean * k;
            for (int64_t i = 0; i < size; ++i) py[p * size + i] = static_cast<float>(in[i] * k + b);
        }
    });
}

void lrn_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const auto& d = x.shape().dims();
    if (d.size() < 2) invalid_argument(ctx, "input must be [N, C, ...]");
    const int64_t size = ctx.attrs().get_int("size");
    const double alpha = ctx.attrs().get_float("alpha", 1e-4f), beta = ctx.attrs().get_float("beta", 0.75f),
                 bias = ctx.attrs().get_float("bias", 1.0f);
    const int64_t channels = d[1], inner = product(d, 2, d.size());
    const int64_t below = (size - 1) / 2, above = size - 1 - below;  // floor and ceil of (size-1)/2
    const float* px = x.data<float>();
    float* py = ctx.output(0).data<float>();
    parallel_for(d[0] * channels, grain_for(size * inner), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const int64_t n = p / channels, c = p % channels;
            const int64_t first = std::max<int64_t>(0, c - below), last = std::min(channels - 1, c + above);
            for (int64_t i = 0; i < inner; ++i) {
                double sum = 0;
                for (int64_t k = first; k <= last; ++k) {
                    const double v = px[(n * channels + k) * inner + i];
                    sum += v * v;
                }
                const int64_t at = p * inner + i;
                py[at] = static_cast<float>(px[at] / std::pow(bias + alpha / static_cast<double>(size) * sum, beta));
            }
        }
    });
}

// (x - mean) / (std + 1e-9) over `axes`, as ONNX's function body defines it.
void mean_variance_norm_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Shape& shape = x.shape();
    std::vector<bool> reduced(shape.rank(), false);
    for (int64_t a : ctx.attrs().get_ints("axes", {0, 2, 3}))
        reduced[shape.normalize_axis(a)] = true;
    // Each element's group: its index with the reduced axes dropped.
    const int64_t count = x.numel();
    std::vector<int64_t> group(static_cast<size_t>(count));
    int64_t groups = 1;
    for (size_t a = 0; a < shape.rank(); ++a) if (!reduced[a]) groups *= shape[a];
    std::vector<int64_t> index(shape.rank(), 0);
    for (int64_t i = 0; i < count; ++i) {
        int64_t g = 0;
        for (size_t a = 0; a < shape.rank(); ++a) if (!reduced[a]) g = g * shape[a] + index[a];
        group[static_cast<size_t>(i)] = g;
        for (size_t a = shape.rank(); a-- > 0;) {
            if (++index[a] < shape[a]) break;
            index[a] = 0;
        }
    }
    const float* px = x.data<float>();
    std::vector<double> sum(static_cast<size_t>(groups), 0.0), squares(static_cast<size_t>(groups), 0.0);
    for (int64_t i = 0; i < count; ++i) sum[static_cast<size_t>(group[i])] += px[i];
    const double per_group = static_cast<double>(count / std::max<int64_t>(groups, 1));
    for (double& s : sum) s /= per_group;
    for (int64_t i = 0; i < count; ++i) {
        const double v = px[i] - sum[static_cast<size_t>(group[i])];
        squares[static_cast<size_t>(group[i])] += v * v;
    }
    float* py = ctx.output(0).data<float>();
    for (int64_t i = 0; i < count; ++i) {
        const size_t g = static_cast<size_t>(group[i]);
        py[i] = static_cast<float>((px[i] - sum[g]) / (std::sqrt(squares[g] / per_group) + 1e-9));
    }
}

void global_max_pool_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const auto& d = x.shape().dims();
    const int64_t planes = d[0] * d[1], size = product(d, 2, d.size());
    if (size == 0) invalid_argument(ctx, "empty spatial extent");
    const float* px = x.data<float>();
    float* py = ctx.output(0).data<float>();
    parallel_for(planes, grain_for(size), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) py[p] = *std::max_element(px + p * size, px + (p + 1) * size);
    });
}

}  // namespace

void register_channel_norm_kernels(KernelRegistry& r) {
    add_floating(r, "InstanceNormalization", instance_norm_kernel);
    add_floating(r, "LRN", lrn_kernel);
    add_floating(r, "MeanVarianceNormalization", mean_variance_norm_kernel);
    add_floating(r, "GlobalMaxPool", global_max_pool_kernel);
}

}  // namespace infer::cpu
