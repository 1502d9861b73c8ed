// Ops that pick elements by value: TopK (k largest or smallest along an axis, ties to the lower
// index), NonZero (coordinates of the non-zero elements), OneHot, NonMaxSuppression and Unique.
#include "backends/cpu/kernels/indexing_kernels.hpp"
#include "core/ops/shapes_indexing.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace infer::cpu {

namespace {

void top_k_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& values = ctx.output(0);
    Tensor& indices = ctx.output(1);
    const size_t axis = in.shape().normalize_axis(ctx.attrs().get_int("axis", -1));
    const bool largest = ctx.attrs().get_int("largest", 1) != 0;
    const std::vector<int64_t>& d = in.shape().dims();
    const int64_t outer = product(d, 0, axis), extent = d[axis], inner = product(d, axis + 1, d.size());
    const int64_t k = values.shape()[axis];
    visit_type(in.dtype(), [&](auto type) {
        using T = decltype(type);
        const T* src = static_cast<const T*>(in.raw_data());
        T* top = static_cast<T*>(values.raw_data());
        int64_t* where = indices.data<int64_t>();
        parallel_for(outer * inner, grain_for(extent * 8), [&](int64_t begin, int64_t end) {
            std::vector<double> line(static_cast<size_t>(extent));
            std::vector<int64_t> order(static_cast<size_t>(extent));
            for (int64_t p = begin; p < end; ++p) {
                const int64_t o = p / inner, i = p % inner;
                const T* first = src + o * extent * inner + i;
                for (int64_t e = 0; e < extent; ++e) line[static_cast<size_t>(e)] = to_double(first[e * inner]);
                std::iota(order.begin(), order.end(), 0);
                // A stable sort keeps equal values in index order, as ONNX asks.
                std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
                    const double x = line[static_cast<size_t>(a)], y = line[static_cast<size_t>(b)];
                    return largest ? x > y : x < y;
                });
                for (int64_t e = 0; e < k; ++e) {
                    const int64_t at = o * k * inner + e * inner + i;
                    top[at] = first[order[static_cast<size_t>(e)] * inner];
                    where[at] = order[static_cast<size_t>(e)];
                }
            }
        });
    });
}

void nonzero_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const std::vector<double> v = in.to_vector<double>();
    Tensor& out = ctx.output(0);
    const int64_t count = out.shape()[1];
    int64_t* dst = out.data<int64_t>();
    const Shape& s = in.shape();
    std::vector<int64_t> position(s.rank(), 0);
    int64_t found = 0;
    for (size_t flat = 0; flat < v.size(); ++flat) {
        if (v[flat] != 0) {
            if (found >= count) invalid_argument(ctx, "input changed since planning");
            for (size_t d = 0; d < s.rank(); ++d) dst[static_cast<int64_t>(d) * count + found] = position[d];
            ++found;
        }
        for (size_t d = s.rank(); d-- > 0;) {
            if (++position[d] < s[d]) break;
            position[d] = 0;
        }
    }
    if (found != count) invalid_argument(ctx, "input changed since planning");
}

void one_hot_kernel(KernelContext& ctx) {
    const Tensor& indices = ctx.input(0);
    const Tensor& pair = ctx.input(2);
    Tensor& out = ctx.output(0);
    if (pair.numel() != 2) invalid_argument(ctx, "values must hold (off, on)");
    const size_t axis = out.shape().normalize_axis(ctx.attrs().get_int("axis", -1));
    const std::vector<int64_t>& d = out.shape().dims();
    const int64_t outer = product(d, 0, axis), depth = d[axis], inner = product(d, axis + 1, d.size());
    const std::vector<double> where = indices.to_vector<double>();
    visit_word(ctx, out.dtype(), [&](auto word) {
        using W = decltype(word);
        const W* off_on = static_cast<const W*>(pair.raw_data());
        W* dst = static_cast<W*>(out.raw_data());
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) {
                int64_t hot = static_cast<int64_t>(where[static_cast<size_t>(o * inner + i)]);
                if (hot < 0) hot += depth;  // out of range after this: no element is hot
                for (int64_t e = 0; e < depth; ++e)
                    dst[(o * depth + e) * inner + i] = off_on[e == hot ? 1 : 0];
            }
    });
}

// The same selection the shape function counted (core/ops/shapes_indexing_nms.cpp).
void non_max_suppression_kernel(KernelContext& ctx) {
    const auto optional = [&ctx](size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; };
    const auto selected = detail::non_max_suppression(ctx.input(0), ctx.input(1), optional(2), optional(3), optional(4),
                                                      ctx.attrs().get_int("center_point_box", 0) != 0, ctx.node_name());
    Tensor& out = ctx.output(0);
    if (out.shape()[0] != static_cast<int64_t>(selected.size()))
        invalid_argument(ctx, "the selection changed since the plan was made");
    int64_t* o = out.data<int64_t>();
    for (const auto& s : selected) o = std::copy(s.begin(), s.end(), o);
}

// Gathers the selection the shape function counted (core/ops/shapes_indexing_unique.cpp).
void unique_kernel(KernelContext& ctx) {
    // A value known at plan time reaches a folded node as the caller gave it, maybe strided.
    const Tensor x = ctx.input(0).contiguous();
    const std::optional<int64_t> axis = ctx.attrs().has("axis") ? std::optional(ctx.attrs().get_int("axis")) : std::nullopt;
    const detail::UniqueSelection u = detail::unique_selection(x, axis, ctx.attrs().get_int("sorted", 1) != 0, ctx.node_name());
    Tensor& y = ctx.output(0);
    const auto unique = static_cast<int64_t>(u.first.size());
    if (y.numel() != u.outer * unique * u.inner) invalid_argument(ctx, "the selection changed since the plan was made");
    const size_t element = dtype_size(x.dtype()), run = static_cast<size_t>(u.inner) * element;
    const auto* in = static_cast<const unsigned char*>(x.raw_data());
    auto* out = static_cast<unsigned char*>(y.raw_data());
    for (int64_t o = 0; o < u.outer; ++o)
        for (int64_t k = 0; k < unique; ++k)
            std::memcpy(out + static_cast<size_t>(o * unique + k) * run, in + static_cast<size_t>(o * u.count + u.first[static_cast<size_t>(k)]) * run, run);
    const std::vector<int64_t>* lists[] = {&u.first, &u.inverse, &u.counts};
    for (size_t i = 1; i < ctx.num_outputs(); ++i) std::copy(lists[i - 1]->begin(), lists[i - 1]->end(), ctx.output(i).data<int64_t>());
}

}  // namespace

void register_indexing_select(KernelRegistry& r) {
    for (DType t : kAllDTypes) r.add("Unique", t, unique_kernel);
    for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64}) r.add("NonMaxSuppression", t, non_max_suppression_kernel);
    for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8, DType::u8, DType::i32,
                    DType::i64})
        r.add("TopK", t, top_k_kernel);
    for (DType t : kAllDTypes) {
        r.add("NonZero", t, nonzero_kernel);
        r.add("OneHot", t, one_hot_kernel);
    }
}

}  // namespace infer::cpu
