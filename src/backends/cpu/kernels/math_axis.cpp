// Ops that work line by line along one axis: LogSoftmax, Hardmax, ArgMax, ArgMin and CumSum.
// A tensor is seen as [outer, length, inner]; a line is the `length` elements of one
// (outer, inner) pair, `inner` apart in memory. Lines are independent and split over threads.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace infer::cpu {

namespace {

struct Lines {
    int64_t outer, length, inner;

    Lines(const Shape& shape, int64_t axis) {
        const size_t a = shape.normalize_axis(axis);
        outer = product(shape.dims(), 0, a);
        length = shape[a];
        inner = product(shape.dims(), a + 1, shape.rank());
    }
    int64_t count() const { return outer * inner; }
    // Offset of the first element of line `l`.
    int64_t base(int64_t l) const { return (l / inner) * length * inner + l % inner; }

    // Calls body(base, stride) for every line, in parallel.
    template <class Body>
    void for_each(Body&& body) const {
        parallel_for(count(), grain_for(length), [&](int64_t begin, int64_t end) {
            for (int64_t l = begin; l < end; ++l) body(l, base(l), inner);
        });
    }
};

template <class T>
void log_softmax_kernel(KernelContext& ctx) {
    const T* x = ctx.input(0).data<T>();
    T* y = ctx.output(0).data<T>();
    const Lines lines(ctx.input(0).shape(), ctx.attrs().get_int("axis", -1));
    lines.for_each([&](int64_t, int64_t base, int64_t stride) {
        double top = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < lines.length; ++j) top = std::max(top, double(x[base + j * stride]));
        double sum = 0;
        for (int64_t j = 0; j < lines.length; ++j) sum += std::exp(x[base + j * stride] - top);
        const double shift = top + std::log(sum);
        for (int64_t j = 0; j < lines.length; ++j)
            y[base + j * stride] = static_cast<T>(x[base + j * stride] - shift);
    });
}

// Index of the line's largest (kMax) or smallest element; ties go to the first unless
// `last` asks for the last.
template <bool kMax, class T>
int64_t extreme_index(const T* x, int64_t length, int64_t stride, bool last) {
    int64_t best = 0;
    for (int64_t j = 1; j < length; ++j) {
        const T v = x[j * stride], b = x[best * stride];
        const bool better = kMax ? v > b : v < b;
        if (better || (last && v == b)) best = j;
    }
    return best;
}

template <class T>
void hardmax_kernel(KernelContext& ctx) {
    const T* x = ctx.input(0).data<T>();
    T* y = ctx.output(0).data<T>();
    const Lines lines(ctx.input(0).shape(), ctx.attrs().get_int("axis", -1));
    lines.for_each([&](int64_t, int64_t base, int64_t stride) {
        if (lines.length == 0) return;
        const int64_t hot = extreme_index<true>(x + base, lines.length, stride, false);
        for (int64_t j = 0; j < lines.length; ++j) y[base + j * stride] = T(j == hot ? 1 : 0);
    });
}

template <bool kMax, class T>
void arg_kernel(KernelContext& ctx) {
    const T* x = ctx.input(0).data<T>();
    auto* y = ctx.output(0).data<int64_t>();
    const Lines lines(ctx.input(0).shape(), ctx.attrs().get_int("axis", 0));
    const bool last = ctx.attrs().get_int("select_last_index", 0) != 0;
    if (lines.length == 0 && lines.count() > 0) invalid_argument(ctx, "the axis is empty");
    lines.for_each([&](int64_t l, int64_t base, int64_t stride) {
        y[l] = extreme_index<kMax>(x + base, lines.length, stride, last);
    });
}

template <class T>
void cumsum_kernel(KernelContext& ctx) {
    const T* x = ctx.input(0).data<T>();
    T* y = ctx.output(0).data<T>();
    const std::vector<int64_t> axis = read_ints(ctx, 1);
    if (axis.size() != 1) invalid_argument(ctx, "axis must hold one value");
    const Lines lines(ctx.input(0).shape(), axis[0]);
    const bool exclusive = ctx.attrs().get_int("exclusive", 0) != 0;
    const bool reverse = ctx.attrs().get_int("reverse", 0) != 0;
    // Floats accumulate in double; integers wrap in their unsigned type.
    using Acc = typename std::conditional_t<std::is_floating_point_v<T>, std::type_identity<double>,
                                            std::make_unsigned<T>>::type;
    lines.for_each([&](int64_t, int64_t base, int64_t stride) {
        Acc sum = 0;
        for (int64_t k = 0; k < lines.length; ++k) {
            const int64_t at = base + (reverse ? lines.length - 1 - k : k) * stride;
            const Acc v = static_cast<Acc>(x[at]);
            if (!exclusive) sum += v;
            y[at] = static_cast<T>(sum);
            if (exclusive) sum += v;
        }
    });
}

template <class T>
void add_arg_reductions(KernelRegistry& r, DType type) {
    r.add("ArgMax", type, arg_kernel<true, T>);
    r.add("ArgMin", type, arg_kernel<false, T>);
}

}  // namespace

void register_math_axis_kernels(KernelRegistry& r) {
    add_floating(r, "LogSoftmax", log_softmax_kernel<float>);
    r.add("LogSoftmax", DType::f64, log_softmax_kernel<double>);
    add_floating(r, "Hardmax", hardmax_kernel<float>);
    r.add("Hardmax", DType::f64, hardmax_kernel<double>);

    add_arg_reductions<float>(r, DType::f32);
    add_arg_reductions<double>(r, DType::f64);
    add_arg_reductions<int8_t>(r, DType::i8);
    add_arg_reductions<uint8_t>(r, DType::u8);
    add_arg_reductions<int32_t>(r, DType::i32);
    add_arg_reductions<int64_t>(r, DType::i64);
    for (const char* op : {"ArgMax", "ArgMin"})
        add_f32_compute(r, op);

    add_floating(r, "CumSum", cumsum_kernel<float>);
    r.add("CumSum", DType::f64, cumsum_kernel<double>);
    r.add("CumSum", DType::i32, cumsum_kernel<int32_t>);
    r.add("CumSum", DType::i64, cumsum_kernel<int64_t>);
}

}  // namespace infer::cpu
