// Activation functions of the math family, with ONNX's attribute defaults. Each kernel is a
// template over the element type, registered for f32 (f16 and bf16 converting at the
// boundary) and f64.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/math_elementwise.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"

#include <algorithm>
#include <cmath>

namespace infer::cpu {

namespace {

using math::map_kernel;

template <class T>
T attribute(const KernelContext& ctx, const char* name, float fallback) {
    return static_cast<T>(ctx.attrs().get_float(name, fallback));
}

// log(1 + e^x) without overflow for large x or loss of precision for very negative x.
template <class T>
T softplus(T x) {
    return x > T(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

template <class T>
void leaky_relu(KernelContext& ctx) {
    const T alpha = attribute<T>(ctx, "alpha", 0.01f);
    map_kernel<T, T>([alpha](T x) { return x >= T(0) ? x : alpha * x; })(ctx);
}

template <class T>
void elu(KernelContext& ctx) {
    const T alpha = attribute<T>(ctx, "alpha", 1.0f);
    map_kernel<T, T>([alpha](T x) { return x >= T(0) ? x : alpha * std::expm1(x); })(ctx);
}

template <class T>
void selu(KernelContext& ctx) {
    const T alpha = attribute<T>(ctx, "alpha", 1.67326319217681884765625f);
    const T gamma = attribute<T>(ctx, "gamma", 1.05070102214813232421875f);
    map_kernel<T, T>([alpha, gamma](T x) {
        return x > T(0) ? gamma * x : gamma * alpha * std::expm1(x);
    })(ctx);
}

template <class T>
void celu(KernelContext& ctx) {
    const T alpha = attribute<T>(ctx, "alpha", 1.0f);
    map_kernel<T, T>([alpha](T x) { return x > T(0) ? x : alpha * std::expm1(x / alpha); })(ctx);
}

template <class T>
void thresholded_relu(KernelContext& ctx) {
    const T alpha = attribute<T>(ctx, "alpha", 1.0f);
    map_kernel<T, T>([alpha](T x) { return x > alpha ? x : T(0); })(ctx);
}

template <class T>
void hard_sigmoid(KernelContext& ctx) {
    const T alpha = attribute<T>(ctx, "alpha", 0.2f);
    const T beta = attribute<T>(ctx, "beta", 0.5f);
    map_kernel<T, T>([alpha, beta](T x) {
        return std::clamp(alpha * x + beta, T(0), T(1));
    })(ctx);
}

template <class T>
void hard_swish(KernelContext& ctx) {
    // ONNX's alpha·x + beta with alpha 1/6 (as FusedConv's epilogue computes it).
    map_kernel<T, T>([](T x) { return x * std::clamp(x * (T(1) / T(6)) + T(0.5), T(0), T(1)); })(ctx);
}

template <class T>
void softplus_kernel(KernelContext& ctx) {
    map_kernel<T, T>(softplus<T>)(ctx);
}

template <class T>
void softsign(KernelContext& ctx) {
    map_kernel<T, T>([](T x) { return x / (T(1) + std::abs(x)); })(ctx);
}

template <class T>
void shrink(KernelContext& ctx) {
    const T bias = attribute<T>(ctx, "bias", 0.0f);
    const T lambd = attribute<T>(ctx, "lambd", 0.5f);
    map_kernel<T, T>([bias, lambd](T x) {
        if (x < -lambd) return x + bias;
        if (x > lambd) return x - bias;
        return T(0);
    })(ctx);
}

template <class T>
void mish(KernelContext& ctx) {
    map_kernel<T, T>([](T x) { return x * std::tanh(softplus(x)); })(ctx);
}

void add_float(KernelRegistry& r, const std::string& op, const Kernel& f32, const Kernel& f64) {
    add_floating(r, op, f32);
    r.add(op, DType::f64, f64);
}

}  // namespace

void register_math_activation_kernels(KernelRegistry& r) {
    add_float(r, "LeakyRelu", leaky_relu<float>, leaky_relu<double>);
    add_float(r, "Elu", elu<float>, elu<double>);
    add_float(r, "Selu", selu<float>, selu<double>);
    add_float(r, "Celu", celu<float>, celu<double>);
    add_float(r, "ThresholdedRelu", thresholded_relu<float>, thresholded_relu<double>);
    add_float(r, "HardSigmoid", hard_sigmoid<float>, hard_sigmoid<double>);
    add_float(r, "HardSwish", hard_swish<float>, hard_swish<double>);
    add_float(r, "Softplus", softplus_kernel<float>, softplus_kernel<double>);
    add_float(r, "Softsign", softsign<float>, softsign<double>);
    add_float(r, "Shrink", shrink<float>, shrink<double>);
    add_float(r, "Mish", mish<float>, mish<double>);
}

}  // namespace infer::cpu
