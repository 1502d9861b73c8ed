// Elementwise maps of the math family: trigonometric and hyperbolic functions, rounding, Sign,
// IsInf and IsNaN. Each float op is one generic lambda instantiated for f32 (f16 and bf16
// converting at the boundary) and f64.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/math_elementwise.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"

#include <cmath>

namespace infer::cpu {

namespace {

using math::map_kernel;

template <class Op>
void add_float_map(KernelRegistry& r, const std::string& op_name, Op op) {
    add_floating(r, op_name, map_kernel<float, float>(op));
    r.add(op_name, DType::f64, map_kernel<double, double>(op));
}

template <class T>
T sign_of(T x) {
    if (x > T(0)) return T(1);
    if (x < T(0)) return T(-1);
    return x;  // zero, and NaN stays NaN
}

template <class T>
void is_inf_kernel(KernelContext& ctx) {
    const bool positive = ctx.attrs().get_int("detect_positive", 1) != 0;
    const bool negative = ctx.attrs().get_int("detect_negative", 1) != 0;
    map_kernel<T, bool>([positive, negative](T x) {
        return std::isinf(x) && ((x > 0 && positive) || (x < 0 && negative));
    })(ctx);
}

}  // namespace

void register_math_unary_kernels(KernelRegistry& r) {
    add_float_map(r, "Sin", [](auto x) { return std::sin(x); });
    add_float_map(r, "Cos", [](auto x) { return std::cos(x); });
    add_float_map(r, "Tan", [](auto x) { return std::tan(x); });
    add_float_map(r, "Asin", [](auto x) { return std::asin(x); });
    add_float_map(r, "Acos", [](auto x) { return std::acos(x); });
    add_float_map(r, "Atan", [](auto x) { return std::atan(x); });
    add_float_map(r, "Sinh", [](auto x) { return std::sinh(x); });
    add_float_map(r, "Cosh", [](auto x) { return std::cosh(x); });
    add_float_map(r, "Asinh", [](auto x) { return std::asinh(x); });
    add_float_map(r, "Acosh", [](auto x) { return std::acosh(x); });
    add_float_map(r, "Atanh", [](auto x) { return std::atanh(x); });
    add_float_map(r, "Floor", [](auto x) { return std::floor(x); });
    add_float_map(r, "Ceil", [](auto x) { return std::ceil(x); });
    // nearbyint rounds in the default mode, to nearest with halves to even, as ONNX asks.
    add_float_map(r, "Round", [](auto x) { return std::nearbyint(x); });
    add_float_map(r, "Sign", [](auto x) { return sign_of(x); });
    r.add("Sign", DType::i8, map_kernel<int8_t, int8_t>(sign_of<int8_t>));
    r.add("Sign", DType::i32, map_kernel<int32_t, int32_t>(sign_of<int32_t>));
    r.add("Sign", DType::i64, map_kernel<int64_t, int64_t>(sign_of<int64_t>));

    add_floating(r, "IsInf", is_inf_kernel<float>);
    r.add("IsInf", DType::f64, is_inf_kernel<double>);
    add_floating(r, "IsNaN", map_kernel<float, bool>([](float x) { return std::isnan(x); }));
    r.add("IsNaN", DType::f64, map_kernel<double, bool>([](double x) { return std::isnan(x); }));
}

}  // namespace infer::cpu
