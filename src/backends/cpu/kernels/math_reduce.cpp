// ReduceMin, ReduceProd, ReduceSumSquare, ReduceLogSumExp, ReduceLogSum, ReduceL1 and ReduceL2.
//
// Every output element folds the same block of input offsets (the reduced axes) from its own
// base offset (the kept axes); both offset lists are computed once per call into the
// workspace, so one loop serves any set of axes. Float folds accumulate in double; integer
// folds wrap in 64 bits.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace infer::cpu {

namespace {

// Offsets of every index over the axes where reduced[d] == which, in row-major order.
void fill_offsets(const Shape& in, const std::vector<bool>& reduced, bool which, int64_t* out) {
    std::vector<int64_t> dims, strides;
    int64_t stride = 1;
    for (size_t d = in.rank(); d-- > 0;) {
        if (reduced[d] == which) {
            dims.insert(dims.begin(), in[d]);
            strides.insert(strides.begin(), stride);
        }
        stride *= in[d];
    }
    const int64_t total = product(dims, 0, dims.size());
    std::vector<int64_t> index(dims.size(), 0);
    int64_t offset = 0;
    for (int64_t i = 0; i < total; ++i) {
        out[i] = offset;
        for (size_t d = dims.size(); d-- > 0;) {
            offset += strides[d];
            if (++index[d] < dims[d]) break;
            offset -= dims[d] * strides[d];
            index[d] = 0;
        }
    }
}

template <class T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;

template <class T>
T from_acc(Acc<T> a) {
    if constexpr (std::is_floating_point_v<T>)
        return static_cast<T>(a);
    else
        return static_cast<T>(static_cast<int64_t>(a));
}

template <class T>
Acc<T> magnitude(T v) {
    if constexpr (std::is_floating_point_v<T>)
        return std::abs(static_cast<double>(v));
    else
        return v < 0 ? Acc<T>(0) - static_cast<Acc<T>>(v) : static_cast<Acc<T>>(v);
}

struct MinFold {
    template <class T>
    static T apply(const T* x, const int64_t* offsets, int64_t count) {
        T best = std::numeric_limits<T>::max();
        if constexpr (std::is_floating_point_v<T>) best = std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < count; ++j) {
            const T v = x[offsets[j]];
            if constexpr (std::is_floating_point_v<T>)
                if (std::isnan(v)) return v;
            if (v < best) best = v;
        }
        return best;
    }
};

struct ProdFold {
    template <class T>
    static T apply(const T* x, const int64_t* offsets, int64_t count) {
        Acc<T> p = 1;
        for (int64_t j = 0; j < count; ++j) p *= static_cast<Acc<T>>(x[offsets[j]]);
        return from_acc<T>(p);
    }
};

struct SumSquareFold {
    template <class T>
    static Acc<T> sum(const T* x, const int64_t* offsets, int64_t count) {
        Acc<T> s = 0;
        for (int64_t j = 0; j < count; ++j) {
            const auto v = static_cast<Acc<T>>(x[offsets[j]]);
            s += v * v;
        }
        return s;
    }
    template <class T>
    static T apply(const T* x, const int64_t* offsets, int64_t count) {
        return from_acc<T>(sum(x, offsets, count));
    }
};

struct L1Fold {
    template <class T>
    static T apply(const T* x, const int64_t* offsets, int64_t count) {
        Acc<T> s = 0;
        for (int64_t j = 0; j < count; ++j) s += magnitude(x[offsets[j]]);
        return from_acc<T>(s);
    }
};

struct L2Fold {
    template <class T>
    static T apply(const T* x, const int64_t* offsets, int64_t count) {
        return static_cast<T>(std::sqrt(SumSquareFold::sum(x, offsets, count)));
    }
};

struct LogSumFold {
    template <class T>
    static T apply(const T* x, const int64_t* offsets, int64_t count) {
        double s = 0;
        for (int64_t j = 0; j < count; ++j) s += x[offsets[j]];
        return static_cast<T>(std::log(s));
    }
};

// max + log(sum(exp(x - max))): no overflow for large inputs.
struct LogSumExpFold {
    template <class T>
    static T apply(const T* x, const int64_t* offsets, int64_t count) {
        double top = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < count; ++j) {
            const double v = x[offsets[j]];
            if (std::isnan(v)) return static_cast<T>(v);
            if (v > top) top = v;
        }
        if (!std::isfinite(top)) return static_cast<T>(top);  // empty, all -inf, or an inf
        double s = 0;
        for (int64_t j = 0; j < count; ++j) s += std::exp(x[offsets[j]] - top);
        return static_cast<T>(top + std::log(s));
    }
};

template <class T, class Fold>
void reduce_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    const T* x = in.data<T>();
    T* y = out.data<T>();
    std::vector<int64_t> axes;
    if (ctx.has_input(1)) axes = read_ints(ctx, 1);
    if (axes.empty() && ctx.attrs().get_int("noop_with_empty_axes", 0) != 0) {
        // The op table lets only ReduceMin and ReduceProd through: over one element, identities.
        if (!std::is_same_v<Fold, MinFold> && !std::is_same_v<Fold, ProdFold>)
            unsupported(ctx, "noop_with_empty_axes with empty axes");
        std::memcpy(y, x, in.nbytes());
        return;
    }
    std::vector<bool> reduced(in.rank(), axes.empty());
    for (int64_t a : axes) reduced[in.shape().normalize_axis(a)] = true;
    int64_t count = 1;
    for (size_t d = 0; d < in.rank(); ++d)
        if (reduced[d]) count *= in.shape()[d];
    const int64_t outputs = out.numel();
    auto* bases = static_cast<int64_t*>(ctx.workspace(sizeof(int64_t) * (outputs + count)));
    int64_t* offsets = bases + outputs;
    fill_offsets(in.shape(), reduced, false, bases);
    fill_offsets(in.shape(), reduced, true, offsets);
    parallel_for(outputs, grain_for(count), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) y[i] = Fold::apply(x + bases[i], offsets, count);
    });
}

template <class Fold>
void add_float_reduction(KernelRegistry& r, const std::string& op) {
    add_floating(r, op, reduce_kernel<float, Fold>);
    r.add(op, DType::f64, reduce_kernel<double, Fold>);
}

template <class Fold>
void add_any_reduction(KernelRegistry& r, const std::string& op) {
    add_float_reduction<Fold>(r, op);
    r.add(op, DType::i32, reduce_kernel<int32_t, Fold>);
    r.add(op, DType::i64, reduce_kernel<int64_t, Fold>);
}

}  // namespace

void register_math_reduce_kernels(KernelRegistry& r) {
    add_any_reduction<MinFold>(r, "ReduceMin");
    add_any_reduction<ProdFold>(r, "ReduceProd");
    add_any_reduction<SumSquareFold>(r, "ReduceSumSquare");
    add_any_reduction<L1Fold>(r, "ReduceL1");
    add_float_reduction<L2Fold>(r, "ReduceL2");
    add_float_reduction<LogSumFold>(r, "ReduceLogSum");
    add_float_reduction<LogSumExpFold>(r, "ReduceLogSumExp");
}

}  // namespace infer::cpu
