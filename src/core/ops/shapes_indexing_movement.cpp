// Shapes of the indexing family's ops that rearrange tensors (reshape, transpose, concat, split,
// slice, gather, ...) and of the shape-making ops Shape, ConstantOfShape and Range.
#include "core/ops/shapes_indexing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace infer::detail {

namespace {
size_t axis_of(const InferenceContext& ctx, int64_t axis, size_t rank) {
    try {
        return Shape(std::vector<int64_t>(rank, 1)).normalize_axis(axis);
    } catch (const InvalidArgument& e) {
        ctx.fail(e.what());
    }
}
// The dims a shape-carrying input describes; when its values are not known yet but its length
// is, as many dynamic dims (so ranks stay known through dynamic reshapes at validation).
std::vector<int64_t> target_dims(const InferenceContext& ctx, size_t input, bool* known) {
    try {
        std::vector<int64_t> dims = ctx.ints(input);
        *known = true;
        return dims;
    } catch (const ShapeUnknown&) {
        const Shape& s = ctx.shape(input);
        if (s.rank() != 1 || s[0] == kDynamic) throw;
        *known = false;
        return std::vector<int64_t>(static_cast<size_t>(s[0]), kDynamic);
    }
}

// a * b, or a ModelError when the product of a hostile model's dimensions overflows.
int64_t checked_multiply(int64_t a, int64_t b) {
    int64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product))
        throw ModelError("a shape has more elements than 64 bits can count");
    return product;
}

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
    int64_t p = 1;
    for (size_t i = begin; i < end; ++i) {
        if (dims[i] == kDynamic) return kDynamic;
        p = checked_multiply(p, dims[i]);
    }
    return p;
}
}  // namespace

std::vector<Shape> shape_reshape(const InferenceContext& ctx) {
    bool known_values = false;
    std::vector<int64_t> target = target_dims(ctx, 1, &known_values);
    // The rank is the target's length whatever the input: known even when the input's is not.
    if (!known_values) return {Shape(target)};
    const Shape& in = ctx.shape(0);
    const bool allow_zero = ctx.attrs().get_int("allowzero", 0) != 0;
    int inferred = -1;
    for (size_t i = 0; i < target.size(); ++i) {
        if (target[i] == 0 && !allow_zero) {
            if (i >= in.rank()) ctx.fail("shape entry 0 at position " + std::to_string(i) +
                                         " has no input dimension to copy");
            target[i] = in[i];
        } else if (target[i] == -1) {
            if (inferred >= 0) ctx.fail("shape has more than one -1");
            inferred = static_cast<int>(i);
        } else if (target[i] < -1) {
            ctx.fail("shape entry " + std::to_string(target[i]) + " is negative");
        }
    }
    const int64_t total = product(in.dims(), 0, in.rank());
    int64_t known = 1;
    bool dynamic = false;
    for (size_t i = 0; i < target.size(); ++i) {
        if (static_cast<int>(i) == inferred) continue;
        if (target[i] == kDynamic) dynamic = true; else known = checked_multiply(known, target[i]);
    }
    if (inferred >= 0) {
        if (total == kDynamic || dynamic) {
            target[inferred] = kDynamic;
        } else {
            if (known == 0 || total % known != 0)
                ctx.fail("cannot reshape " + in.to_string() + " into " +
                         Shape(ctx.ints(1)).to_string());
            target[inferred] = total / known;
        }
    } else if (total != kDynamic && !dynamic && known != total) {
        ctx.fail("cannot reshape " + in.to_string() + " (" + std::to_string(total) +
                 " elements) into " + Shape(target).to_string());
    }
    return {Shape(target)};
}

std::vector<Shape> shape_flatten(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    int64_t axis = ctx.attrs().get_int("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(in.rank());
    if (axis < 0 || axis > static_cast<int64_t>(in.rank()))
        ctx.fail("axis " + std::to_string(ctx.attrs().get_int("axis", 1)) +
                 " out of range for rank " + std::to_string(in.rank()));
    return {Shape({product(in.dims(), 0, static_cast<size_t>(axis)),
                   product(in.dims(), static_cast<size_t>(axis), in.rank())})};
}

std::vector<Shape> shape_transpose(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    std::vector<int64_t> perm(in.rank());
    std::iota(perm.rbegin(), perm.rend(), 0);
    perm = ctx.attrs().get_ints("perm", perm);
    if (perm.size() != in.rank()) ctx.fail("perm has " + std::to_string(perm.size()) +
                                           " entries for rank " + std::to_string(in.rank()));
    std::vector<bool> seen(in.rank(), false);
    std::vector<int64_t> dims;
    for (int64_t p : perm) {
        const size_t axis = axis_of(ctx, p, in.rank());
        if (seen[axis]) ctx.fail("perm repeats axis " + std::to_string(p));
        seen[axis] = true;
        dims.push_back(in[axis]);
    }
    return {Shape(dims)};
}

std::vector<Shape> shape_concat(const InferenceContext& ctx) {
    check_same_dtypes(ctx, 0);
    const Shape& first = ctx.shape(0);
    const size_t axis = axis_of(ctx, ctx.attrs().get_int("axis"), first.rank());
    std::vector<int64_t> dims = first.dims();
    for (size_t i = 1; i < ctx.num_inputs(); ++i) {
        const Shape& s = ctx.shape(i);
        if (s.rank() != first.rank())
            ctx.fail("input " + std::to_string(i) + " has rank " + std::to_string(s.rank()) +
                     ", input 0 has " + std::to_string(first.rank()));
        for (size_t d = 0; d < s.rank(); ++d) {
            if (d == axis) {
                dims[d] = (dims[d] == kDynamic || s[d] == kDynamic) ? kDynamic : dims[d] + s[d];
            } else if (dims[d] != kDynamic && s[d] != kDynamic && dims[d] != s[d]) {
                ctx.fail("input " + std::to_string(i) + " " + s.to_string() +
                         " differs from input 0 " + first.to_string() + " off the concat axis");
            } else if (dims[d] == kDynamic) {
                dims[d] = s[d];
            }
        }
    }
    return {Shape(dims)};
}

std::vector<Shape> shape_split(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    const size_t axis = axis_of(ctx, ctx.attrs().get_int("axis", 0), in.rank());
    const size_t parts = ctx.node().outputs.size();
    std::vector<int64_t> sizes;
    if (ctx.has_input(1)) {
        sizes = ctx.ints(1);
        if (sizes.size() != parts)
            ctx.fail("split has " + std::to_string(sizes.size()) + " sizes for " +
                     std::to_string(parts) + " outputs");
        int64_t sum = 0;
        for (int64_t s : sizes) {
            if (s < 0) ctx.fail("split size " + std::to_string(s) + " is negative");
            sum += s;
        }
        if (in[axis] != kDynamic && sum != in[axis])
            ctx.fail("split sizes add up to " + std::to_string(sum) + ", axis has " +
                     std::to_string(in[axis]));
    } else {
        if (in[axis] == kDynamic) {
            sizes.assign(parts, kDynamic);
        } else {
            const int64_t chunk = (in[axis] + static_cast<int64_t>(parts) - 1) /
                                  static_cast<int64_t>(parts);
            int64_t left = in[axis];
            for (size_t i = 0; i < parts; ++i) {
                sizes.push_back(std::min(chunk, left));
                left -= sizes.back();
            }
        }
    }
    std::vector<Shape> shapes;
    for (int64_t size : sizes) {
        Shape s = in;
        s[axis] = size;
        shapes.push_back(s);
    }
    return shapes;
}

SliceRange resolve_slice(int64_t dim, int64_t start, int64_t end, int64_t step) {
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (step > 0) {
        start = std::clamp<int64_t>(start, 0, dim);
        end = std::clamp<int64_t>(end, 0, dim);
        const int64_t count = end > start ? (end - start + step - 1) / step : 0;
        return {start, step, count};
    }
    start = std::clamp<int64_t>(start, -1, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    const int64_t count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    return {start, step, count};
}

// Slice bounds computed at run time (PyTorch slices position ids up to the sequence length)
// still leave the rank known, and the axes they do not touch: later shapes, and the passes
// that need ranks, can go on from there.
std::vector<Shape> shape_slice_unknown_bounds(const InferenceContext& ctx) {
    std::vector<int64_t> dims = ctx.shape(0).dims();
    std::vector<int64_t> axes;
    if (ctx.has_input(3)) {
        axes = ctx.ints(3);
    } else {
        const Shape& starts = ctx.shape(1);
        if (starts.rank() != 1 || starts[0] == kDynamic) throw ShapeUnknown{};
        axes.resize(static_cast<size_t>(starts[0]));
        std::iota(axes.begin(), axes.end(), 0);
    }
    for (int64_t axis : axes) dims[axis_of(ctx, axis, dims.size())] = kDynamic;
    return {Shape(dims)};
}

std::vector<Shape> shape_slice(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    std::vector<int64_t> starts, ends;
    try {
        starts = ctx.ints(1);
        ends = ctx.ints(2);
    } catch (const ShapeUnknown&) {
        return shape_slice_unknown_bounds(ctx);
    }
    if (starts.size() != ends.size()) ctx.fail("starts and ends differ in length");
    std::vector<int64_t> axes(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
    if (ctx.has_input(3)) axes = ctx.ints(3);
    std::vector<int64_t> steps(starts.size(), 1);
    if (ctx.has_input(4)) steps = ctx.ints(4);
    if (axes.size() != starts.size() || steps.size() != starts.size())
        ctx.fail("starts, ends, axes and steps differ in length");
    std::vector<int64_t> dims = in.dims();
    std::vector<bool> seen(in.rank(), false);
    for (size_t i = 0; i < starts.size(); ++i) {
        const size_t axis = axis_of(ctx, axes[i], in.rank());
        if (seen[axis]) ctx.fail("axis " + std::to_string(axes[i]) + " repeats");
        seen[axis] = true;
        if (steps[i] == 0) ctx.fail("step 0 on axis " + std::to_string(axes[i]));
        if (dims[axis] == kDynamic) continue;
        dims[axis] = resolve_slice(dims[axis], starts[i], ends[i], steps[i]).count;
    }
    return {Shape(dims)};
}

std::vector<Shape> shape_gather(const InferenceContext& ctx) {
    const Shape& data = ctx.shape(0);
    const Shape& indices = ctx.shape(1);
    if (data.rank() == 0) ctx.fail("Gather data must have rank >= 1");
    const size_t axis = axis_of(ctx, ctx.attrs().get_int("axis", 0), data.rank());
    std::vector<int64_t> dims(data.dims().begin(), data.dims().begin() + axis);
    dims.insert(dims.end(), indices.begin(), indices.end());
    dims.insert(dims.end(), data.dims().begin() + axis + 1, data.dims().end());
    return {Shape(dims)};
}

std::vector<Shape> shape_unsqueeze(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    const std::vector<int64_t> axes = ctx.ints(1);
    const size_t out_rank = in.rank() + axes.size();
    std::vector<bool> inserted(out_rank, false);
    for (int64_t a : axes) {
        const size_t axis = axis_of(ctx, a, out_rank);
        if (inserted[axis]) ctx.fail("axis " + std::to_string(a) + " repeats");
        inserted[axis] = true;
    }
    std::vector<int64_t> dims;
    size_t next = 0;
    for (size_t i = 0; i < out_rank; ++i) dims.push_back(inserted[i] ? 1 : in[next++]);
    return {Shape(dims)};
}

std::vector<Shape> shape_squeeze(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    std::vector<bool> removed(in.rank(), false);
    if (ctx.has_input(1)) {
        for (int64_t a : ctx.ints(1)) {
            const size_t axis = axis_of(ctx, a, in.rank());
            if (in[axis] != 1 && in[axis] != kDynamic)
                ctx.fail("cannot squeeze axis " + std::to_string(a) + " of size " +
                         std::to_string(in[axis]));
            removed[axis] = true;
        }
    } else {
        for (size_t i = 0; i < in.rank(); ++i) {
            if (in[i] == kDynamic) throw ShapeUnknown{};
            removed[i] = in[i] == 1;
        }
    }
    std::vector<int64_t> dims;
    for (size_t i = 0; i < in.rank(); ++i)
        if (!removed[i]) dims.push_back(in[i]);
    return {Shape(dims)};
}

std::vector<Shape> shape_expand(const InferenceContext& ctx) {
    bool known_values = false;
    const Shape target(target_dims(ctx, 1, &known_values));
    try {
        return {Shape::broadcast(ctx.shape(0), target)};
    } catch (const InvalidArgument& e) {
        ctx.fail(e.what());
    }
}

std::vector<Shape> shape_shape(const InferenceContext& ctx) {
    const int64_t rank = static_cast<int64_t>(ctx.shape(0).rank());
    int64_t start = ctx.attrs().get_int("start", 0);
    int64_t end = ctx.attrs().get_int("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, 0, rank);
    return {Shape({std::max<int64_t>(end - start, 0)})};
}

std::vector<Shape> shape_constant_of_shape(const InferenceContext& ctx) {
    bool known_values = false;
    const std::vector<int64_t> dims = target_dims(ctx, 0, &known_values);
    for (int64_t d : dims)
        if (d < 0 && known_values) ctx.fail("shape entry " + std::to_string(d) + " is negative");
    if (ctx.attrs().has("value") && ctx.attrs().get_tensor("value").numel() != 1)
        ctx.fail("value must hold exactly one element");
    return {Shape(dims)};
}

std::vector<Shape> shape_range(const InferenceContext& ctx) {
    for (size_t i = 0; i < 3; ++i)
        if (ctx.shape(i).rank() != 0) ctx.fail("input " + std::to_string(i) + " must be a scalar");
    const Tensor& start = ctx.value(0);
    const Tensor& limit = ctx.value(1);
    const Tensor& delta = ctx.value(2);
    const auto as_double = [](const Tensor& t) { return t.to_vector<double>().at(0); };
    double s, l, d;
    if (start.dtype() == DType::i64 || start.dtype() == DType::i32) {
        s = static_cast<double>(ctx.ints(0)[0]);
        l = static_cast<double>(ctx.ints(1)[0]);
        d = static_cast<double>(ctx.ints(2)[0]);
    } else {
        s = as_double(start);
        l = as_double(limit);
        d = as_double(delta);
    }
    if (d == 0) ctx.fail("delta is 0");
    const int64_t count = std::max<int64_t>(static_cast<int64_t>(std::ceil((l - s) / d)), 0);
    return {Shape({count})};
}

}  // namespace infer::detail
