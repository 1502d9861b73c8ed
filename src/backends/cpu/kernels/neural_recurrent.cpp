// RNN, GRU and LSTM, forward, reverse or bidirectional, in either layout. Per direction the
// input projections of every step come from one sgemm; each step then adds H_{t-1} R^T (one
// sgemm over the batch) and applies the cell. Steps past a sequence's length leave its state
// alone and write zeros to Y, as ONNX asks.
#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <variant>

namespace infer::cpu {

namespace {

enum class Cell { rnn, gru, lstm };

struct Activation {
    std::string name;
    float alpha, beta;
    float operator()(float x) const {
        if (name == "Tanh") return std::tanh(x);
        if (name == "Sigmoid") return 1.0f / (1.0f + std::exp(-x));
        if (name == "Relu") return std::max(x, 0.0f);
        if (name == "Affine") return alpha * x + beta;
        if (name == "LeakyRelu") return x >= 0 ? x : alpha * x;
        if (name == "ThresholdedRelu") return x > alpha ? x : 0.0f;
        if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
        if (name == "HardSigmoid") return std::clamp(alpha * x + beta, 0.0f, 1.0f);
        if (name == "Elu") return x >= 0 ? x : alpha * (std::exp(x) - 1);
        if (name == "Softsign") return x / (1 + std::abs(x));
        return std::log1p(std::exp(x));  // Softplus
    }
};

// The cell's activations for every direction, with their alphas and betas consumed in order
// by the functions that take them.
std::vector<Activation> read_activations(const KernelContext& ctx, const std::vector<std::string>& defaults,
                                         int64_t dirs) {
    const Attributes& a = ctx.attrs();
    std::vector<std::string> names;
    if (a.has("activations")) {
        const auto* given = std::get_if<std::vector<std::string>>(&a.all().at("activations"));
        if (!given) invalid_argument(ctx, "activations must be a list of strings");
        names = *given;
        if (names.size() == defaults.size() && dirs == 2) names.insert(names.end(), given->begin(), given->end());
    } else {
        for (int64_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
    }
    if (names.size() != defaults.size() * static_cast<size_t>(dirs))
        invalid_argument(ctx, "expected " + std::to_string(defaults.size() * dirs) + " activations");
    const std::vector<float> alphas = a.has("activation_alpha") ? a.get_floats("activation_alpha") : std::vector<float>{};
    const std::vector<float> betas = a.has("activation_beta") ? a.get_floats("activation_beta") : std::vector<float>{};
    size_t next_alpha = 0, next_beta = 0;
    auto take = [](const std::vector<float>& list, size_t& next, float fallback) {
        return next < list.size() ? list[next++] : fallback;
    };
    std::vector<Activation> out;
    for (const std::string& n : names) {
        Activation f{n, 0, 0};
        if (n == "Affine" || n == "ScaledTanh") {
            f.alpha = take(alphas, next_alpha, 1.0f);
            f.beta = take(betas, next_beta, n == "Affine" ? 0.0f : 1.0f);
        } else if (n == "HardSigmoid") {
            f.alpha = take(alphas, next_alpha, 0.2f);
            f.beta = take(betas, next_beta, 0.5f);
        } else if (n == "LeakyRelu") {
            f.alpha = take(alphas, next_alpha, 0.01f);
        } else if (n == "ThresholdedRelu" || n == "Elu") {
            f.alpha = take(alphas, next_alpha, 1.0f);
        } else if (n != "Tanh" && n != "Sigmoid" && n != "Relu" && n != "Softsign" && n != "Softplus") {
            unsupported(ctx, "activation " + n);
        }
        out.push_back(f);
    }
    return out;
}

struct Geometry {
    int64_t seq, batch, input, hidden, dirs, gates;
    bool batch_first;
    int64_t x_row(int64_t t, int64_t b) const { return batch_first ? b * seq + t : t * batch + b; }
    int64_t y_at(int64_t t, int64_t d, int64_t b) const {
        return (batch_first ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b) * hidden;
    }
    int64_t state_at(int64_t d, int64_t b) const {
        return (batch_first ? b * dirs + d : d * batch + b) * hidden;
    }
};

void gemm_nt(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
    sgemm(false, true, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
}

void recurrent(KernelContext& ctx, Cell cell) {
    const Tensor& x = ctx.input(0);
    const auto& a = ctx.attrs();
    const std::string direction = a.get_string("direction", "forward");
    const bool batch_first = a.get_int("layout", 0) == 1;
    const int64_t gates = cell == Cell::rnn ? 1 : cell == Cell::gru ? 3 : 4;
    Geometry g{batch_first ? x.shape()[1] : x.shape()[0], batch_first ? x.shape()[0] : x.shape()[1],
               x.shape()[2], ctx.input(2).shape()[2], direction == "bidirectional" ? 2 : 1, gates, batch_first};
    if (cell == Cell::lstm && a.get_int("input_forget", 0) != 0) unsupported(ctx, "input_forget");
    const std::vector<std::string> defaults =
        cell == Cell::rnn ? std::vector<std::string>{"Tanh"}
        : cell == Cell::gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                            : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    const std::vector<Activation> act = read_activations(ctx, defaults, g.dirs);
    const std::optional<float> clip = a.has("clip") ? std::optional(a.get_float("clip")) : std::nullopt;
    auto clipped = [&](float v) { return clip ? std::clamp(v, -*clip, *clip) : v; };
    const bool linear_before_reset = a.get_int("linear_before_reset", 0) != 0;

    const int64_t H = g.hidden, GH = gates * H, rows = g.seq * g.batch;
    const float* bias = ctx.has_input(3) ? ctx.input(3).data<float>() : nullptr;
    std::vector<int64_t> lengths(static_cast<size_t>(g.batch), g.seq);
    if (ctx.has_input(4)) lengths = read_ints(ctx, 4);
    const float* initial_h = ctx.has_input(5) ? ctx.input(5).data<float>() : nullptr;
    const float* initial_c = ctx.has_input(6) ? ctx.input(6).data<float>() : nullptr;
    const float* peep = ctx.has_input(7) ? ctx.input(7).data<float>() : nullptr;
    float* y = ctx.output(0).data<float>();
    float* y_h = ctx.num_outputs() > 1 ? ctx.output(1).data<float>() : nullptr;
    float* y_c = ctx.num_outputs() > 2 ? ctx.output(2).data<float>() : nullptr;

    std::vector<float> xw(static_cast<size_t>(rows * GH)), hr(static_cast<size_t>(g.batch * GH));
    std::vector<float> h(static_cast<size_t>(g.batch * H)), c(h.size()), gated(static_cast<size_t>(H));
    std::vector<float> z(static_cast<size_t>(H)), reset(z.size()), z_reset_h(z.size());
    for (int64_t d = 0; d < g.dirs; ++d) {
        const float* w = ctx.input(1).data<float>() + d * GH * g.input;
        const float* r = ctx.input(2).data<float>() + d * GH * H;
        const float* wb = bias ? bias + d * 2 * GH : nullptr;
        const float* rb = bias ? wb + GH : nullptr;
        const Activation* f = &act[static_cast<size_t>(d) * defaults.size()];
        gemm_nt(rows, GH, g.input, x.data<float>(), w, xw.data());
        for (int64_t b = 0; b < g.batch; ++b)
            for (int64_t i = 0; i < H; ++i) {
                h[b * H + i] = initial_h ? initial_h[g.state_at(d, b) + i] : 0.0f;
                c[b * H + i] = initial_c ? initial_c[g.state_at(d, b) + i] : 0.0f;
            }
        const bool reverse = direction == "reverse" || d == 1;
        for (int64_t step = 0; step < g.seq; ++step) {
            const int64_t t = reverse ? g.seq - 1 - step : step;
            gemm_nt(g.batch, GH, H, h.data(), r, hr.data());
            for (int64_t b = 0; b < g.batch; ++b) {
                float* out = y + g.y_at(t, d, b);
                if (t >= lengths[static_cast<size_t>(b)]) {
                    std::fill(out, out + H, 0.0f);
                    continue;
                }
                const float* in = xw.data() + g.x_row(t, b) * GH;
                const float* rec = hr.data() + b * GH;
                float* hb = h.data() + b * H;
                float* cb = c.data() + b * H;
                // Pre-activation of gate k, unit i, without the recurrent term.
                auto pre = [&](int64_t k, int64_t i) {
                    return in[k * H + i] + (wb ? wb[k * H + i] : 0.0f);
                };
                auto rbias = [&](int64_t k, int64_t i) { return rb ? rb[k * H + i] : 0.0f; };
                if (cell == Cell::rnn) {
                    for (int64_t i = 0; i < H; ++i) hb[i] = f[0](clipped(pre(0, i) + rec[i] + rbias(0, i)));
                } else if (cell == Cell::gru) {
                    // gates z, r, h
                    for (int64_t i = 0; i < H; ++i) {
                        z[i] = f[0](clipped(pre(0, i) + rec[i] + rbias(0, i)));
                        reset[i] = f[0](clipped(pre(1, i) + rec[H + i] + rbias(1, i)));
                    }
                    if (!linear_before_reset) {
                        // (r . H_{t-1}) R_h^T: the reset applies before the product.
                        for (int64_t i = 0; i < H; ++i) z_reset_h[i] = reset[i] * hb[i];
                        cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<blasint>(H), static_cast<blasint>(H),
                                    1.0f, r + 2 * H * H, static_cast<blasint>(H), z_reset_h.data(), 1, 0.0f,
                                    gated.data(), 1);
                    }
                    for (int64_t i = 0; i < H; ++i) {
                        const float recurrent_h = linear_before_reset ? reset[i] * (rec[2 * H + i] + rbias(2, i))
                                                                      : gated[i] + rbias(2, i);
                        const float candidate = f[1](clipped(pre(2, i) + recurrent_h));
                        hb[i] = (1 - z[i]) * candidate + z[i] * hb[i];
                    }
                } else {
                    // gates i, o, f, c; peepholes i, o, f
                    for (int64_t i = 0; i < H; ++i) {
                        auto gate = [&](int64_t k) { return pre(k, i) + rec[k * H + i] + rbias(k, i); };
                        const float in_gate = f[0](clipped(gate(0) + (peep ? peep[d * 3 * H + i] * cb[i] : 0)));
                        const float forget = f[0](clipped(gate(2) + (peep ? peep[d * 3 * H + 2 * H + i] * cb[i] : 0)));
                        const float candidate = f[1](clipped(gate(3)));
                        cb[i] = forget * cb[i] + in_gate * candidate;
                        const float out_gate = f[0](clipped(gate(1) + (peep ? peep[d * 3 * H + H + i] * cb[i] : 0)));
                        hb[i] = out_gate * f[2](cb[i]);
                    }
                }
                std::copy(hb, hb + H, out);
            }
        }
        for (int64_t b = 0; b < g.batch; ++b) {
            if (y_h) std::copy(h.begin() + b * H, h.begin() + (b + 1) * H, y_h + g.state_at(d, b));
            if (y_c) std::copy(c.begin() + b * H, c.begin() + (b + 1) * H, y_c + g.state_at(d, b));
        }
    }
}

}  // namespace

void register_recurrent_kernels(KernelRegistry& r) {
    add_floating(r, "RNN", [](KernelContext& ctx) { recurrent(ctx, Cell::rnn); });
    add_floating(r, "GRU", [](KernelContext& ctx) { recurrent(ctx, Cell::gru); });
    add_floating(r, "LSTM", [](KernelContext& ctx) { recurrent(ctx, Cell::lstm); });
}

}  // namespace infer::cpu
