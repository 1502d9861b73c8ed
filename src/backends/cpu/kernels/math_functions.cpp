// Elementwise unary ops. Float math goes through Eigen's vectorized array functions.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

#include <cmath>
#include <type_traits>

namespace infer::cpu {

namespace {

using Array = Eigen::Map<Eigen::ArrayXf>;
using ConstArray = Eigen::Map<const Eigen::ArrayXf>;

constexpr int64_t kElementsPerTask = 16384;

// `apply(x, y)` writes y from x for one chunk of the tensor.
template <class Apply>
Kernel float_unary(Apply apply) {
    return [apply](KernelContext& ctx) {
        const float* in = ctx.input(0).data<float>();
        float* out = ctx.output(0).data<float>();
        parallel_for(ctx.output(0).numel(), kElementsPerTask, [&](int64_t begin, int64_t end) {
            const ConstArray x(in + begin, end - begin);
            Array y(out + begin, end - begin);
            apply(x, y);
        });
    };
}

template <class T, class Op>
Kernel plain_unary(Op op) {
    return [op](KernelContext& ctx) {
        const T* in = ctx.input(0).data<T>();
        T* out = ctx.output(0).data<T>();
        parallel_for(ctx.output(0).numel(), kElementsPerTask, [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) out[i] = op(in[i]);
        });
    };
}

void gelu_kernel(KernelContext& ctx) {
    const std::string approximate = ctx.attrs().get_string("approximate", "none");
    if (approximate == "none") {
        float_unary([](const ConstArray& x, Array& y) {
            y = 0.5f * x * (1.0f + (x * float(M_SQRT1_2)).erf());
        })(ctx);
    } else if (approximate == "tanh") {
        const float k = std::sqrt(2.0f / float(M_PI));
        float_unary([k](const ConstArray& x, Array& y) {
            y = 0.5f * x * (1.0f + (k * (x + 0.044715f * x.cube())).tanh());
        })(ctx);
    } else {
        unsupported(ctx, "approximate = '" + approximate + "'");
    }
}

template <class T>
void add_signed_integer(KernelRegistry& r, DType type) {
    using U = std::make_unsigned_t<T>;
    // Negating the minimum wraps to itself (as two's complement hardware does).
    const auto neg = [](T x) { return static_cast<T>(U(0) - static_cast<U>(x)); };
    r.add("Neg", type, plain_unary<T>(neg));
    r.add("Abs", type, plain_unary<T>([neg](T x) { return x < 0 ? neg(x) : x; }));
    r.add("Relu", type, plain_unary<T>([](T x) { return x > 0 ? x : T(0); }));
}

}  // namespace

void register_math_function_kernels(KernelRegistry& r) {
    add_floating(r, "Sqrt", float_unary([](const ConstArray& x, Array& y) { y = x.sqrt(); }));
    add_floating(r, "Reciprocal",
                 float_unary([](const ConstArray& x, Array& y) { y = x.inverse(); }));
    add_floating(r, "Exp", float_unary([](const ConstArray& x, Array& y) { y = x.exp(); }));
    add_floating(r, "Log", float_unary([](const ConstArray& x, Array& y) { y = x.log(); }));
    add_floating(r, "Tanh", float_unary([](const ConstArray& x, Array& y) { y = x.tanh(); }));
    add_floating(r, "Erf", float_unary([](const ConstArray& x, Array& y) { y = x.erf(); }));
    add_floating(r, "Sigmoid",
                 float_unary([](const ConstArray& x, Array& y) { y = x.logistic(); }));
    add_floating(r, "Relu", float_unary([](const ConstArray& x, Array& y) { y = x.max(0.0f); }));
    add_floating(r, "Neg", float_unary([](const ConstArray& x, Array& y) { y = -x; }));
    add_floating(r, "Abs", float_unary([](const ConstArray& x, Array& y) { y = x.abs(); }));
    add_floating(r, "Gelu", gelu_kernel);
    // f64 appears in exported graphs mostly as shape arithmetic; the sign ops cover it.
    r.add("Neg", DType::f64, plain_unary<double>([](double x) { return -x; }));
    r.add("Abs", DType::f64, plain_unary<double>([](double x) { return std::abs(x); }));
    r.add("Relu", DType::f64, plain_unary<double>([](double x) { return x > 0 ? x : 0.0; }));
    add_signed_integer<int32_t>(r, DType::i32);
    add_signed_integer<int64_t>(r, DType::i64);
    r.add("Not", DType::boolean, plain_unary<bool>([](bool x) { return !x; }));
}

}  // namespace infer::cpu
