// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss over [N, C, d...] with class targets
// [N, d...]. SoftmaxCrossEntropyLoss is a log-softmax over the class axis followed by the same
// weighted, ignorable, reduced gather of -log p.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace infer::cpu {

namespace {

struct LossShape {
    int64_t images, classes, positions;  // N, C and the product of d...
};

// The class of sample i, read from an i64 or i32 target.
int64_t target_at(const Tensor& target, int64_t i) {
    return target.dtype() == DType::i64 ? target.data<int64_t>()[i]
                                        : static_cast<int64_t>(target.data<int32_t>()[i]);
}

// -log_prob[target] * weight[target] per sample, then the reduction into `out`.
void gather_loss(const KernelContext& ctx, const float* log_prob, const LossShape& s,
                 const Tensor& target, float* out) {
    const float* weight = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
    const std::string reduction = ctx.attrs().get_string("reduction", "mean");
    const std::optional<int64_t> ignore =
        ctx.attrs().has("ignore_index") ? std::optional(ctx.attrs().get_int("ignore_index"))
                                        : std::nullopt;
    double total = 0, weights = 0;
    const int64_t samples = s.images * s.positions;
    for (int64_t i = 0; i < samples; ++i) {
        const int64_t t = target_at(target, i);
        double loss = 0, w = 0;
        if (!(ignore && t == *ignore)) {
            if (t < 0 || t >= s.classes)
                invalid_argument(ctx, "target " + std::to_string(t) + " is outside [0, " +
                                          std::to_string(s.classes) + ")");
            w = weight ? weight[t] : 1.0;
            const int64_t n = i / s.positions, d = i % s.positions;
            loss = -static_cast<double>(log_prob[(n * s.classes + t) * s.positions + d]) * w;
        }
        if (reduction == "none") out[i] = static_cast<float>(loss);
        total += loss;
        weights += w;
    }
    if (reduction == "sum") *out = static_cast<float>(total);
    if (reduction == "mean") *out = static_cast<float>(total / weights);
}

LossShape loss_shape(const Tensor& x) {
    const auto& d = x.shape().dims();
    return {d[0], d[1], product(d, 2, d.size())};
}

void nll_loss_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    gather_loss(ctx, x.data<float>(), loss_shape(x), ctx.input(1), ctx.output(0).data<float>());
}

// log_softmax over the class axis, per (image, position) column of stride `positions`.
void log_softmax_classes(const float* x, const LossShape& s, float* y) {
    parallel_for(s.images * s.positions, grain_for(4 * s.classes), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const int64_t base = i / s.positions * s.classes * s.positions + i % s.positions;
            float top = x[base];
            for (int64_t c = 1; c < s.classes; ++c) top = std::max(top, x[base + c * s.positions]);
            double sum = 0;
            for (int64_t c = 0; c < s.classes; ++c) sum += std::exp(x[base + c * s.positions] - top);
            const float log_sum = static_cast<float>(std::log(sum)) + top;
            for (int64_t c = 0; c < s.classes; ++c)
                y[base + c * s.positions] = x[base + c * s.positions] - log_sum;
        }
    });
}

void softmax_cross_entropy_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const LossShape s = loss_shape(x);
    float* log_prob = ctx.num_outputs() > 1
                          ? ctx.output(1).data<float>()
                          : static_cast<float*>(ctx.workspace(sizeof(float) * x.numel()));
    log_softmax_classes(x.data<float>(), s, log_prob);
    gather_loss(ctx, log_prob, s, ctx.input(1), ctx.output(0).data<float>());
}

}  // namespace

void register_loss_kernels(KernelRegistry& r) {
    add_floating(r, "NegativeLogLikelihoodLoss", nll_loss_kernel);
    add_floating(r, "SoftmaxCrossEntropyLoss", softmax_cross_entropy_kernel);
}

}  // namespace infer::cpu
