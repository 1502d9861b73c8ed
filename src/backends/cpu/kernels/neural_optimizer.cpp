// The training optimizers of ONNX's preview training domain: Adagrad, Momentum (standard and
// Nesterov) and Adam, one update step for several tensors at once. Inputs: the learning rate
// R and the step count T, then the tensors grouped by role (X..., G..., then the optimizer's
// state); outputs: the new X..., then the new state, as ONNX's reference computes them.
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"

#include <cmath>

namespace infer::cpu {

namespace {

// Calls update(i, x, g, state inputs, outputs) for every element of every group; `state`
// tensors per group is the optimizer's count (1 for Adagrad and Momentum, 2 for Adam).
template <class T, class Update>
void for_each_group(KernelContext& ctx, size_t state, Update update) {
    const size_t groups = (ctx.num_inputs() - 2) / (2 + state);
    if (ctx.num_inputs() != 2 + groups * (2 + state) || ctx.num_outputs() != groups * (1 + state))
        invalid_argument(ctx, "inputs must be R, T and " + std::to_string(2 + state) + " tensors per updated tensor");
    for (size_t k = 0; k < groups; ++k) {
        const T* x = ctx.input(2 + k).data<T>();
        const T* g = ctx.input(2 + groups + k).data<T>();
        std::vector<const T*> in;
        std::vector<T*> out{ctx.output(k).data<T>()};
        for (size_t s = 0; s < state; ++s) {
            in.push_back(ctx.input(2 + (2 + s) * groups + k).data<T>());
            out.push_back(ctx.output((1 + s) * groups + k).data<T>());
        }
        for (int64_t i = 0; i < ctx.input(2 + k).numel(); ++i) update(i, static_cast<double>(x[i]), static_cast<double>(g[i]), in, out);
    }
}

double rate(const KernelContext& ctx) { return ctx.input(0).to_vector<double>().at(0); }
int64_t step(const KernelContext& ctx) { return read_ints(ctx, 1).at(0); }

template <class T>
void adagrad_kernel(KernelContext& ctx) {
    const double decay = ctx.attrs().get_float("decay_factor", 0.0f), epsilon = ctx.attrs().get_float("epsilon", 1e-6f),
                 norm = ctx.attrs().get_float("norm_coefficient", 0.0f);
    const double r = rate(ctx) / (1 + static_cast<double>(step(ctx)) * decay);
    for_each_group<T>(ctx, 1, [&](int64_t i, double x, double g, const std::vector<const T*>& in, const std::vector<T*>& out) {
        const double reg = norm * x + g, h = static_cast<double>(in[0][i]) + reg * reg;
        out[0][i] = static_cast<T>(x - r * reg / (std::sqrt(h) + epsilon));
        out[1][i] = static_cast<T>(h);
    });
}

template <class T>
void momentum_kernel(KernelContext& ctx) {
    const double alpha = ctx.attrs().get_float("alpha"), beta = ctx.attrs().get_float("beta"),
                 norm = ctx.attrs().get_float("norm_coefficient");
    const std::string mode = ctx.attrs().get_string("mode");
    if (mode != "standard" && mode != "nesterov") invalid_argument(ctx, "mode must be standard or nesterov, got '" + mode + "'");
    const double r = rate(ctx), beta_adjusted = step(ctx) > 0 ? beta : 1.0;
    const bool nesterov = mode == "nesterov";
    for_each_group<T>(ctx, 1, [&](int64_t i, double x, double g, const std::vector<const T*>& in, const std::vector<T*>& out) {
        const double reg = norm * x + g, v = alpha * static_cast<double>(in[0][i]) + beta_adjusted * reg;
        out[0][i] = static_cast<T>(nesterov ? x - r * (reg + alpha * v) : x - r * v);
        out[1][i] = static_cast<T>(v);
    });
}

template <class T>
void adam_kernel(KernelContext& ctx) {
    const double alpha = ctx.attrs().get_float("alpha", 0.9f), beta = ctx.attrs().get_float("beta", 0.999f),
                 epsilon = ctx.attrs().get_float("epsilon", 1e-6f), norm = ctx.attrs().get_float("norm_coefficient", 0.0f),
                 norm_post = ctx.attrs().get_float("norm_coefficient_post", 0.0f);
    const int64_t t = step(ctx);
    const double r = t > 0 ? rate(ctx) * std::sqrt(1 - std::pow(beta, static_cast<double>(t))) /
                                 (1 - std::pow(alpha, static_cast<double>(t)))
                           : rate(ctx);
    for_each_group<T>(ctx, 2, [&](int64_t i, double x, double g, const std::vector<const T*>& in, const std::vector<T*>& out) {
        const double reg = norm * x + g;
        const double v = alpha * static_cast<double>(in[0][i]) + (1 - alpha) * reg;
        const double h = beta * static_cast<double>(in[1][i]) + (1 - beta) * reg * reg;
        out[0][i] = static_cast<T>((1 - norm_post) * (x - r * v / (std::sqrt(h) + epsilon)));
        out[1][i] = static_cast<T>(v);
        out[2][i] = static_cast<T>(h);
    });
}

}  // namespace

void register_optimizer_kernels(KernelRegistry& r) {
    r.add("Adagrad", DType::f32, adagrad_kernel<float>);
    r.add("Adagrad", DType::f64, adagrad_kernel<double>);
    r.add("Momentum", DType::f32, momentum_kernel<float>);
    r.add("Momentum", DType::f64, momentum_kernel<double>);
    r.add("Adam", DType::f32, adam_kernel<float>);
    r.add("Adam", DType::f64, adam_kernel<double>);
}

}  // namespace infer::cpu
