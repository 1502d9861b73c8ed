// Two-operand elementwise ops of the math family: Mod, the logical ops, GreaterOrEqual and
// LessOrEqual, PRelu, and Clip (whose bounds are scalars).
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/math_elementwise.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace infer::cpu {

namespace {

using math::broadcast_kernel;
using math::map_kernel;

// fmod = 1: the remainder takes the dividend's sign (C's fmod and %); fmod = 0: the divisor's
// (Python's %).
template <class T>
void mod_kernel(KernelContext& ctx) {
    const bool c_style = ctx.attrs().get_int("fmod", 0) != 0;
    const auto to_divisor_sign = [c_style](T r, T b) {
        return !c_style && r != T(0) && ((r < T(0)) != (b < T(0))) ? static_cast<T>(r + b) : r;
    };
    if constexpr (std::is_floating_point_v<T>) {
        broadcast_kernel<T, T>([to_divisor_sign](T a, T b) {
            return to_divisor_sign(std::fmod(a, b), b);
        })(ctx);
    } else {
        const std::string node = node_label(ctx);
        broadcast_kernel<T, T>([&node, to_divisor_sign](T a, T b) -> T {
            if (b == 0) throw InvalidArgument(node + ": integer modulo by zero");
            if constexpr (std::is_signed_v<T>)
                if (b == -1) return 0;  // MIN % -1 overflows (and traps on x86)
            return to_divisor_sign(static_cast<T>(a % b), b);
        })(ctx);
    }
}

template <class T>
void clip_kernel(KernelContext& ctx) {
    T low = std::numeric_limits<T>::lowest(), high = std::numeric_limits<T>::max();
    if constexpr (std::is_floating_point_v<T>) {
        low = -std::numeric_limits<T>::infinity();
        high = std::numeric_limits<T>::infinity();
    }
    if (ctx.has_input(1)) low = *ctx.input(1).data<T>();
    if (ctx.has_input(2)) high = *ctx.input(2).data<T>();
    // max then min: with low > high every element becomes high, as ONNX says; NaN stays NaN.
    map_kernel<T, T>([low, high](T x) { return std::min(std::max(x, low), high); })(ctx);
}

template <class T>
void add_typed(KernelRegistry& r, DType type) {
    r.add("GreaterOrEqual", type, broadcast_kernel<T, bool>([](T a, T b) { return a >= b; }));
    r.add("LessOrEqual", type, broadcast_kernel<T, bool>([](T a, T b) { return a <= b; }));
    r.add("Mod", type, mod_kernel<T>);
    r.add("Clip", type, clip_kernel<T>);
}

template <class T>
Kernel prelu_kernel() {
    return broadcast_kernel<T, T>([](T x, T slope) { return x < T(0) ? slope * x : x; });
}

}  // namespace

void register_math_binary_kernels(KernelRegistry& r) {
    add_typed<float>(r, DType::f32);
    add_typed<double>(r, DType::f64);
    add_typed<int8_t>(r, DType::i8);
    add_typed<uint8_t>(r, DType::u8);
    add_typed<int32_t>(r, DType::i32);
    add_typed<int64_t>(r, DType::i64);
    // The narrower and unsigned integers (for models that store them) get Mod alone.
    r.add("Mod", DType::i16, mod_kernel<int16_t>);
    r.add("Mod", DType::u16, mod_kernel<uint16_t>);
    r.add("Mod", DType::u32, mod_kernel<uint32_t>);
    r.add("Mod", DType::u64, mod_kernel<uint64_t>);
    for (const char* op : {"GreaterOrEqual", "LessOrEqual", "Mod", "Clip"})
        add_f32_compute(r, op);

    add_floating(r, "PRelu", prelu_kernel<float>());
    r.add("PRelu", DType::f64, prelu_kernel<double>());
    r.add("PRelu", DType::i32, prelu_kernel<int32_t>());
    r.add("PRelu", DType::i64, prelu_kernel<int64_t>());

    r.add("And", DType::boolean, broadcast_kernel<bool, bool>([](bool a, bool b) { return a && b; }));
    r.add("Or", DType::boolean, broadcast_kernel<bool, bool>([](bool a, bool b) { return a || b; }));
    r.add("Xor", DType::boolean, broadcast_kernel<bool, bool>([](bool a, bool b) { return a != b; }));
}

}  // namespace infer::cpu
