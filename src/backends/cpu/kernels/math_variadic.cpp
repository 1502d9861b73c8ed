// Min, Max, Sum and Mean over any number of inputs that broadcast together: the output starts
// as input 0 broadcast to its shape, and every further input folds into it in place.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/math_elementwise.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"

#include <cmath>
#include <type_traits>

namespace infer::cpu {

namespace {

template <class T, class Op>
Kernel fold_inputs(Op op, bool mean = false) {
    return [op, mean](KernelContext& ctx) {
        Tensor& out = ctx.output(0);
        T* y = out.data<T>();
        for (size_t k = 0; k < ctx.num_inputs(); ++k) {
            require_same_dtype(ctx, 0, k);
            const Tensor& x = ctx.input(k);
            if (k == 0)
                broadcast_apply<T, T>(y, out.shape(), x.data<T>(), x.shape(), y, out.shape(),
                                            [](T, T b) { return b; });
            else
                broadcast_apply<T, T>(y, out.shape(), x.data<T>(), x.shape(), y, out.shape(),
                                            op);
        }
        if (mean) {
            const T count = static_cast<T>(ctx.num_inputs());
            for (int64_t i = 0, elements = out.numel(); i < elements; ++i) y[i] /= count;
        }
    };
}

// NaN wins over numbers, as in NumPy's minimum and maximum.
template <class T>
T min_of(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(b)) return b;
    return b < a ? b : a;
}
template <class T>
T max_of(T a, T b) {
    if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(b)) return b;
    return b > a ? b : a;
}

template <class T>
void add_min_max(KernelRegistry& r, DType type) {
    r.add("Min", type, fold_inputs<T>(min_of<T>));
    r.add("Max", type, fold_inputs<T>(max_of<T>));
}

template <class T>
Kernel sum_kernel() {
    // Integer sums wrap, computed in the unsigned type where wrapping is defined.
    using W = typename std::conditional_t<std::is_integral_v<T>, std::make_unsigned<T>,
                                          std::type_identity<T>>::type;
    return fold_inputs<T>([](T a, T b) { return static_cast<T>(W(a) + W(b)); });
}

}  // namespace

void register_math_variadic_kernels(KernelRegistry& r) {
    add_min_max<float>(r, DType::f32);
    add_min_max<double>(r, DType::f64);
    add_min_max<int8_t>(r, DType::i8);
    add_min_max<uint8_t>(r, DType::u8);
    add_min_max<int32_t>(r, DType::i32);
    add_min_max<int64_t>(r, DType::i64);
    add_min_max<int16_t>(r, DType::i16);
    add_min_max<uint16_t>(r, DType::u16);
    add_min_max<uint32_t>(r, DType::u32);
    add_min_max<uint64_t>(r, DType::u64);
    for (const char* op : {"Min", "Max"})
        add_f32_compute(r, op);

    add_floating(r, "Sum", sum_kernel<float>());
    r.add("Sum", DType::f64, sum_kernel<double>());
    r.add("Sum", DType::i32, sum_kernel<int32_t>());
    r.add("Sum", DType::i64, sum_kernel<int64_t>());
    const auto add = [](auto a, auto b) { return a + b; };
    add_floating(r, "Mean", fold_inputs<float>(add, true));
    r.add("Mean", DType::f64, fold_inputs<double>(add, true));
}

}  // namespace infer::cpu
