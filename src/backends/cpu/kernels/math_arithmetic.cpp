// Broadcasting binary ops (arithmetic, comparisons) and Where.
#include "backends/cpu/kernels/broadcast.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"
#include "core/element_convert.hpp"

#include <cmath>
#include <limits>
#include <type_traits>

namespace infer::cpu {

namespace {

template <class T, class R, class Op>
Kernel binary_kernel(Op op) {
    return [op](KernelContext& ctx) {
        require_same_dtype(ctx, 0, 1);
        const Tensor& a = ctx.input(0);
        const Tensor& b = ctx.input(1);
        Tensor& out = ctx.output(0);
        broadcast_apply<T, R>(a.data<T>(), a.shape(), b.data<T>(), b.shape(), out.data<R>(),
                               out.shape(), op);
    };
}

template <class T>
Kernel divide_kernel() {
    if constexpr (std::is_floating_point_v<T>) {
        return binary_kernel<T, T>([](T x, T y) { return x / y; });
    } else {
        return [](KernelContext& ctx) {
            const std::string node = node_label(ctx);
            binary_kernel<T, T>([&node](T x, T y) -> T {
                if (y == 0) throw InvalidArgument(node + ": integer division by zero");
                // MIN / -1 overflows (and traps on x86); wrap like the other integer ops.
                if constexpr (std::is_signed_v<T>)
                    if (y == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(x));
                return x / y;
            })(ctx);
        };
    }
}

// Pow's exponent may have any numeric dtype, whatever the base's (ONNX's T1 and T2). An f32
// base computes in f32 with the exponent converted to f32; other bases compute in double and
// convert back, so integer bases truncate toward zero as ONNX's reference (numpy) does.
const float* exponent_as_f32(KernelContext& ctx, const Tensor& exponent) {
    if (exponent.dtype() == DType::f32) return exponent.data<float>();
    auto* widened = static_cast<float*>(ctx.workspace(static_cast<size_t>(exponent.numel()) * sizeof(float)));
    detail::convert_elements(exponent.raw_data(), exponent.dtype(), widened, DType::f32,
                             static_cast<size_t>(exponent.numel()));
    return widened;
}

void pow_kernel(KernelContext& ctx) {
    const Tensor& base = ctx.input(0);
    const Tensor& exponent = ctx.input(1);
    Tensor& out = ctx.output(0);
    if (base.dtype() == DType::f32) {
        broadcast_apply<float, float>(base.data<float>(), base.shape(), exponent_as_f32(ctx, exponent), exponent.shape(), out.data<float>(),
                                       out.shape(), [](float x, float y) { return y == 2.0f ? x * x : std::pow(x, y); });
        return;
    }
    // One workspace holds the double result, then the converted exponent and base behind it.
    const size_t result_bytes = static_cast<size_t>(out.numel()) * sizeof(double);
    const size_t exponent_bytes = static_cast<size_t>(exponent.numel()) * sizeof(double);
    const size_t base_bytes = static_cast<size_t>(base.numel()) * sizeof(double);
    auto* scratch = static_cast<unsigned char*>(ctx.workspace(result_bytes + exponent_bytes + base_bytes));
    auto* e = reinterpret_cast<double*>(scratch + result_bytes);
    auto* b = reinterpret_cast<double*>(scratch + result_bytes + exponent_bytes);
    detail::convert_elements(exponent.raw_data(), exponent.dtype(), e, DType::f64, static_cast<size_t>(exponent.numel()));
    detail::convert_elements(base.raw_data(), base.dtype(), b, DType::f64, static_cast<size_t>(base.numel()));
    auto* result = reinterpret_cast<double*>(scratch);
    broadcast_apply<double, double>(b, base.shape(), e, exponent.shape(), result, out.shape(),
                                    [](double x, double y) { return std::pow(x, y); });
    detail::convert_elements(result, DType::f64, out.raw_data(), out.dtype(), static_cast<size_t>(out.numel()));
}

// Where moves elements without looking at them, so it is written once per element size.
template <class Word>
void where_words(const uint8_t* cond, const Shape& c_shape, const Word* x, const Shape& x_shape,
                 const Word* y, const Shape& y_shape, Word* out, const Shape& out_shape) {
    const auto rows = StridedRows<3>::broadcast(out_shape, {&c_shape, &x_shape, &y_shape});
    const auto strides = rows.inner_strides();
    const int64_t sc = strides[0], sx = strides[1], sy = strides[2];
    rows.parallel_pieces([&](int64_t o, const StridedRows<3>::Offsets& in, int64_t n) {
        const uint8_t* c = cond + in[0];
        const Word* xs = x + in[1];
        const Word* ys = y + in[2];
        Word* z = out + o;
        for (int64_t i = 0; i < n; ++i) z[i] = c[i * sc] ? xs[i * sx] : ys[i * sy];
    });
}

void where_kernel(KernelContext& ctx) {
    const Tensor& c = ctx.input(0);
    const Tensor& x = ctx.input(1);
    const Tensor& y = ctx.input(2);
    Tensor& out = ctx.output(0);
    if (c.dtype() != DType::boolean)
        invalid_argument(ctx, "condition must be bool, got " + std::string(dtype_name(c.dtype())));
    require_same_dtype(ctx, 1, 2);
    const auto* cond = static_cast<const uint8_t*>(c.raw_data());
    const void* xs = x.raw_data();
    const void* ys = y.raw_data();
    void* z = out.raw_data();
    switch (dtype_size(x.dtype())) {
        case 1:
            return where_words(cond, c.shape(), static_cast<const uint8_t*>(xs), x.shape(),
                               static_cast<const uint8_t*>(ys), y.shape(), static_cast<uint8_t*>(z),
                               out.shape());
        case 2:
            return where_words(cond, c.shape(), static_cast<const uint16_t*>(xs), x.shape(),
                               static_cast<const uint16_t*>(ys), y.shape(),
                               static_cast<uint16_t*>(z), out.shape());
        case 4:
            return where_words(cond, c.shape(), static_cast<const uint32_t*>(xs), x.shape(),
                               static_cast<const uint32_t*>(ys), y.shape(),
                               static_cast<uint32_t*>(z), out.shape());
        case 8:
            return where_words(cond, c.shape(), static_cast<const uint64_t*>(xs), x.shape(),
                               static_cast<const uint64_t*>(ys), y.shape(),
                               static_cast<uint64_t*>(z), out.shape());
    }
    unsupported(ctx, "elements of " + std::to_string(dtype_size(x.dtype())) + " bytes");
}

template <class T>
void add_arithmetic(KernelRegistry& r, DType type) {
    // Integer overflow wraps: computed in the unsigned type, where wrapping is defined.
    using W = typename std::conditional_t<std::is_integral_v<T>, std::make_unsigned<T>,
                                          std::type_identity<T>>::type;
    r.add("Add", type, binary_kernel<T, T>([](T x, T y) { return static_cast<T>(W(x) + W(y)); }));
    r.add("Sub", type, binary_kernel<T, T>([](T x, T y) { return static_cast<T>(W(x) - W(y)); }));
    r.add("Mul", type, binary_kernel<T, T>([](T x, T y) { return static_cast<T>(W(x) * W(y)); }));
    r.add("Div", type, divide_kernel<T>());
}

// BitShift on unsigned integers; a shift past the width gives 0 (the operands are promoted to
// int, where such shifts are defined, and the result is narrowed).
template <class T>
void bit_shift_kernel(KernelContext& ctx) {
    const std::string direction = ctx.attrs().get_string("direction");
    if (direction == "LEFT")
        return binary_kernel<T, T>([](T x, T y) { return y >= 64 ? T(0) : static_cast<T>(uint64_t(x) << y); })(ctx);
    if (direction == "RIGHT")
        return binary_kernel<T, T>([](T x, T y) { return y >= 64 ? T(0) : static_cast<T>(uint64_t(x) >> y); })(ctx);
    invalid_argument(ctx, "direction must be LEFT or RIGHT, got '" + direction + "'");
}

template <class T>
void add_comparisons(KernelRegistry& r, DType type) {
    r.add("Equal", type, binary_kernel<T, bool>([](T x, T y) { return x == y; }));
    r.add("Less", type, binary_kernel<T, bool>([](T x, T y) { return x < y; }));
    r.add("Greater", type, binary_kernel<T, bool>([](T x, T y) { return x > y; }));
}

}  // namespace

void register_math_arithmetic_kernels(KernelRegistry& r) {
    add_arithmetic<float>(r, DType::f32);
    add_arithmetic<double>(r, DType::f64);
    add_arithmetic<int32_t>(r, DType::i32);
    add_arithmetic<int64_t>(r, DType::i64);
    add_arithmetic<uint8_t>(r, DType::u8);
    r.add("BitShift", DType::u8, bit_shift_kernel<uint8_t>);
    r.add("BitShift", DType::u16, bit_shift_kernel<uint16_t>);
    r.add("BitShift", DType::u32, bit_shift_kernel<uint32_t>);
    r.add("BitShift", DType::u64, bit_shift_kernel<uint64_t>);
    add_comparisons<float>(r, DType::f32);
    add_comparisons<double>(r, DType::f64);
    add_comparisons<int32_t>(r, DType::i32);
    add_comparisons<int64_t>(r, DType::i64);
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Equal", "Less", "Greater"})
        add_f32_compute(r, op);
    add_floating(r, "Pow", pow_kernel);
    for (DType t : {DType::f64, DType::i32, DType::i64}) r.add("Pow", t, pow_kernel);
    r.add("Equal", DType::boolean,
          binary_kernel<bool, bool>([](bool x, bool y) { return x == y; }));
    for (DType t : kAllDTypes) r.add("Where", t, where_kernel);
}

}  // namespace infer::cpu
