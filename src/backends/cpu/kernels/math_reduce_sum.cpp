// ReduceSum, ReduceMean and ReduceMax over any set of axes.
//
// The input's dimensions are merged into alternating runs of kept and reduced axes, then read
// once in memory order: each row (the innermost run) either folds into one output (reduced)
// or adds onto a row of outputs (kept). Float sums accumulate in double.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace infer::cpu {

namespace {

struct Run {
    int64_t extent;
    bool reduced;
    int64_t out_stride = 0;  // kept runs only
};

// Kept/reduced runs of the input with size-1 axes dropped; at least one run.
std::vector<Run> merge_runs(const Shape& in, const std::vector<bool>& reduced) {
    std::vector<Run> runs;
    for (size_t d = 0; d < in.rank(); ++d) {
        if (in[d] == 1) continue;
        if (!runs.empty() && runs.back().reduced == reduced[d])
            runs.back().extent *= in[d];
        else
            runs.push_back({in[d], reduced[d]});
    }
    if (runs.empty()) runs.push_back({1, false});
    int64_t stride = 1;
    for (size_t i = runs.size(); i-- > 0;) {
        if (runs[i].reduced) continue;
        runs[i].out_stride = stride;
        stride *= runs[i].extent;
    }
    return runs;
}

template <class T>
struct Sum {
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    static Acc init() { return 0; }
    static Acc fold(Acc acc, T x) { return acc + static_cast<Acc>(x); }
    static Acc merge(Acc a, Acc b) { return a + b; }
};

template <class T>
struct Max {
    using Acc = T;
    static Acc init() {
        if constexpr (std::is_floating_point_v<T>)
            return -std::numeric_limits<T>::infinity();
        else
            return std::numeric_limits<T>::lowest();
    }
    static Acc fold(Acc acc, T x) {
        if constexpr (std::is_floating_point_v<T>)
            if (std::isnan(x)) return x;  // NaN propagates, as in NumPy
        return x > acc ? x : acc;
    }
    static Acc merge(Acc a, Acc b) { return fold(a, b); }
};

// Folds a contiguous row into one value, with independent partial results so the additions
// pipeline (and vectorize).
template <class Op, class T>
typename Op::Acc fold_row(const T* x, int64_t n) {
    using Acc = typename Op::Acc;
    Acc part[4] = {Op::init(), Op::init(), Op::init(), Op::init()};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; ++j) part[j] = Op::fold(part[j], x[i + j]);
    for (; i < n; ++i) part[0] = Op::fold(part[0], x[i]);
    return Op::merge(Op::merge(part[0], part[1]), Op::merge(part[2], part[3]));
}

template <class Op, class T>
void reduce_into(const T* x, const std::vector<Run>& runs, typename Op::Acc* acc,
                 int64_t acc_count) {
    for (int64_t i = 0; i < acc_count; ++i) acc[i] = Op::init();
    const Run& inner = runs.back();
    const size_t outer = runs.size() - 1;
    int64_t rows = 1;
    for (size_t i = 0; i < outer; ++i) rows *= runs[i].extent;
    // Outputs of different indices of a kept first run are disjoint: split the work there.
    const bool split = outer > 0 && !runs[0].reduced;
    const int64_t rows_per_first = split ? rows / runs[0].extent : rows;
    const auto reduce_rows = [&](int64_t first_begin, int64_t first_end) {
        std::vector<int64_t> index(outer, 0);
        int64_t out = 0;
        if (split) {
            index[0] = first_begin;
            out = first_begin * runs[0].out_stride;
        }
        for (int64_t r = first_begin * rows_per_first; r < first_end * rows_per_first; ++r) {
            const T* row = x + r * inner.extent;
            if (inner.reduced) {
                acc[out] = Op::merge(acc[out], fold_row<Op>(row, inner.extent));
            } else {
                typename Op::Acc* dst = acc + out;
                for (int64_t i = 0; i < inner.extent; ++i) dst[i] = Op::fold(dst[i], row[i]);
            }
            for (size_t d = outer; d-- > 0;) {
                out += runs[d].out_stride;
                if (++index[d] < runs[d].extent) break;
                out -= runs[d].extent * runs[d].out_stride;
                index[d] = 0;
            }
        }
    };
    if (split)
        parallel_for(runs[0].extent, grain_for(rows_per_first * inner.extent), reduce_rows);
    else
        reduce_rows(0, 1);
}

template <class T, template <class> class OpT, bool kMean>
void reduce_kernel(KernelContext& ctx) {
    using Op = OpT<T>;
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    const T* x = in.data<T>();
    T* y = out.data<T>();
    std::vector<int64_t> axes;
    if (ctx.has_input(1)) axes = read_ints(ctx, 1);
    if (axes.empty() && ctx.attrs().get_int("noop_with_empty_axes", 0) != 0) {
        std::memcpy(y, x, in.nbytes());
        return;
    }
    std::vector<bool> reduced(in.rank(), axes.empty());
    for (int64_t a : axes) reduced[in.shape().normalize_axis(a)] = true;
    int64_t count = 1;  // inputs folded into each output
    for (size_t d = 0; d < in.rank(); ++d)
        if (reduced[d]) count *= in.shape()[d];
    const int64_t n = out.numel();
    auto* acc = static_cast<typename Op::Acc*>(ctx.workspace(sizeof(typename Op::Acc) * n));
    if (in.numel() == 0)
        for (int64_t i = 0; i < n; ++i) acc[i] = Op::init();
    else
        reduce_into<Op>(x, merge_runs(in.shape(), reduced), acc, n);
    for (int64_t i = 0; i < n; ++i) {
        if constexpr (kMean)
            y[i] = static_cast<T>(acc[i] / static_cast<double>(count));
        else
            y[i] = static_cast<T>(acc[i]);
    }
}

}  // namespace

void register_math_reduce_sum_kernels(KernelRegistry& r) {
    add_floating(r, "ReduceSum", reduce_kernel<float, Sum, false>);
    add_floating(r, "ReduceMean", reduce_kernel<float, Sum, true>);
    add_floating(r, "ReduceMax", reduce_kernel<float, Max, false>);
    r.add("ReduceSum", DType::i32, reduce_kernel<int32_t, Sum, false>);
    r.add("ReduceSum", DType::i64, reduce_kernel<int64_t, Sum, false>);
    r.add("ReduceMax", DType::i32, reduce_kernel<int32_t, Max, false>);
    r.add("ReduceMax", DType::i64, reduce_kernel<int64_t, Max, false>);
    r.add("ReduceSum", DType::f64, reduce_kernel<double, Sum, false>);
    r.add("ReduceMean", DType::f64, reduce_kernel<double, Sum, true>);
    r.add("ReduceMax", DType::f64, reduce_kernel<double, Max, false>);
}

}  // namespace infer::cpu
