// Shapes of the math family's matrix products, broadcasting elementwise ops and the core
// reductions (ReduceMean, ReduceSum, ReduceMax).
#include "core/ops/shapes_math.hpp"

#include <algorithm>
#include <set>

namespace infer::detail {

std::vector<Shape> shape_broadcast(const InferenceContext& ctx) {
    const bool is_where = ctx.node().op == "Where";
    if (is_where && ctx.dtype(0) != DType::boolean)
        ctx.fail("condition must be bool, got " + std::string(dtype_name(ctx.dtype(0))));
    // Pow's exponent may have another numeric dtype than its base (ONNX's T1, T2).
    const bool is_pow = ctx.node().op == "Pow";
    if (is_pow && (ctx.dtype(1) == DType::boolean || ctx.dtype(0) == DType::boolean))
        ctx.fail("base and exponent must be numeric");
    if (!is_pow) check_same_dtypes(ctx, is_where ? 1 : 0);
    Shape out = ctx.shape(0);
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
        try {
            out = Shape::broadcast(out, ctx.shape(i));
        } catch (const InvalidArgument& e) {
            ctx.fail(e.what());
        }
    }
    std::vector<Shape> shapes(ctx.node().outputs.size(), out);
    return shapes;
}

std::vector<Shape> shape_matmul(const InferenceContext& ctx) {
    check_same_dtypes(ctx, 0);
    Shape a = ctx.shape(0), b = ctx.shape(1);
    if (a.rank() == 0 || b.rank() == 0) ctx.fail("MatMul inputs must have rank >= 1");
    const bool a_vector = a.rank() == 1, b_vector = b.rank() == 1;
    if (a_vector) a = Shape({1, a[0]});
    if (b_vector) b = Shape({b[0], 1});
    const int64_t k_a = a[a.rank() - 1], k_b = b[b.rank() - 2];
    if (k_a != kDynamic && k_b != kDynamic && k_a != k_b)
        ctx.fail("inner dimensions differ: " + ctx.shape(0).to_string() + " x " +
                 ctx.shape(1).to_string());
    Shape batch_a(std::vector<int64_t>(a.dims().begin(), a.dims().end() - 2));
    Shape batch_b(std::vector<int64_t>(b.dims().begin(), b.dims().end() - 2));
    Shape batch;
    try {
        batch = Shape::broadcast(batch_a, batch_b);
    } catch (const InvalidArgument& e) {
        ctx.fail(e.what());
    }
    std::vector<int64_t> dims = batch.dims();
    if (!a_vector) dims.push_back(a[a.rank() - 2]);
    if (!b_vector) dims.push_back(b[b.rank() - 1]);
    return {Shape(dims)};
}

std::vector<Shape> shape_gemm(const InferenceContext& ctx) {
    check_same_dtypes(ctx, 0);
    const Shape& a = ctx.shape(0);
    const Shape& b = ctx.shape(1);
    if (a.rank() != 2 || b.rank() != 2)
        ctx.fail("Gemm needs 2-D A and B, got " + a.to_string() + " and " + b.to_string());
    const bool ta = ctx.attrs().get_int("transA", 0) != 0;
    const bool tb = ctx.attrs().get_int("transB", 0) != 0;
    const int64_t m = ta ? a[1] : a[0], k_a = ta ? a[0] : a[1];
    const int64_t k_b = tb ? b[1] : b[0], n = tb ? b[0] : b[1];
    if (k_a != kDynamic && k_b != kDynamic && k_a != k_b)
        ctx.fail("inner dimensions differ: " + a.to_string() + " x " + b.to_string());
    Shape out({m, n});
    if (ctx.has_input(2)) {
        const Shape& c = ctx.shape(2);
        Shape joined;
        try {
            joined = Shape::broadcast(out, c);
        } catch (const InvalidArgument&) {
            ctx.fail("C " + c.to_string() + " does not broadcast to " + out.to_string());
        }
        if (joined.rank() != 2) ctx.fail("C " + c.to_string() + " has rank above 2");
    }
    return {out};
}

// The axes a reduction reduces, normalized and sorted; empty when it reduces nothing.
static std::vector<size_t> reduction_axes(const InferenceContext& ctx, const Shape& in) {
    std::vector<int64_t> axes;
    if (ctx.has_input(1)) axes = ctx.ints(1);
    std::set<size_t> unique;
    if (axes.empty()) {
        if (ctx.attrs().get_int("noop_with_empty_axes", 0) != 0) return {};
        for (size_t i = 0; i < in.rank(); ++i) unique.insert(i);
    }
    for (int64_t axis : axes) {
        try {
            unique.insert(in.normalize_axis(axis));
        } catch (const InvalidArgument& e) {
            ctx.fail(e.what());
        }
    }
    return {unique.begin(), unique.end()};
}

std::vector<Shape> shape_reduce(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    const bool keepdims = ctx.attrs().get_int("keepdims", 1) != 0;
    const bool noop = ctx.has_input(1) ? ctx.ints(1).empty() &&
                                             ctx.attrs().get_int("noop_with_empty_axes", 0) != 0
                                       : ctx.attrs().get_int("noop_with_empty_axes", 0) != 0;
    if (noop) return {in};
    const std::vector<size_t> axes = reduction_axes(ctx, in);
    std::vector<int64_t> dims;
    for (size_t i = 0; i < in.rank(); ++i) {
        const bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
        if (!reduced)
            dims.push_back(in[i]);
        else if (keepdims)
            dims.push_back(1);
    }
    return {Shape(dims)};
}

}  // namespace infer::detail
