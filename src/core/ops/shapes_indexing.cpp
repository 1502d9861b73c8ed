// Shapes of the indexing family: gathers and scatters, resizing, padding, tiling, block moves,
// selections whose extent depends on values (TopK's k, Compress's condition, NonZero's data).
#include "core/ops/shapes_indexing.hpp"

#include <algorithm>
#include <cmath>

namespace infer::detail {

namespace {
size_t axis_in(const InferenceContext& ctx, int64_t axis, size_t rank) {
    const int64_t r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r)
        ctx.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
    return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

int64_t times(int64_t dim, int64_t factor) { return dim == kDynamic ? kDynamic : dim * factor; }

int64_t positive_attribute(const InferenceContext& ctx, const std::string& name) {
    const int64_t v = ctx.attrs().get_int(name);
    if (v <= 0) ctx.fail(name + " must be positive, got " + std::to_string(v));
    return v;
}

// A host input holding one number of any numeric dtype (OneHot's depth may be a float).
double scalar_value(const InferenceContext& ctx, size_t input) {
    const std::vector<double> v = ctx.value(input).to_vector<double>();
    if (v.size() != 1) ctx.fail("input " + std::to_string(input) + " must hold one value");
    return v[0];
}
}  // namespace

DType dtype_of_input2(const InferenceContext& ctx, size_t) { return ctx.dtype(2); }
DType dtype_from_dtype_attribute(const InferenceContext& ctx, size_t) {
    return ctx.attrs().has("dtype") ? dtype_from_onnx(ctx.attrs().get_int("dtype")) : ctx.dtype(0);
}
DType dtype_same_then_bool(const InferenceContext& ctx, size_t output) {
    return output == 0 ? ctx.dtype(0) : DType::boolean;
}

std::vector<Shape> shape_same_twice(const InferenceContext& ctx) {
    return std::vector<Shape>(ctx.node().outputs.size(), ctx.shape(0));
}

std::vector<Shape> shape_gather_elements(const InferenceContext& ctx) {
    const Shape& data = ctx.shape(0);
    const Shape& indices = ctx.shape(1);
    if (data.rank() == 0 || data.rank() != indices.rank())
        ctx.fail("data " + data.to_string() + " and indices " + indices.to_string() +
                 " must have the same rank >= 1");
    axis_in(ctx, ctx.attrs().get_int("axis", 0), data.rank());
    return {indices};
}

std::vector<Shape> shape_gather_nd(const InferenceContext& ctx) {
    const Shape& data = ctx.shape(0);
    const Shape& indices = ctx.shape(1);
    const int64_t batch = ctx.attrs().get_int("batch_dims", 0);
    if (indices.rank() == 0 || data.rank() == 0) ctx.fail("data and indices need rank >= 1");
    const int64_t depth = indices[indices.rank() - 1];
    if (batch < 0 || static_cast<size_t>(batch) >= std::min(data.rank(), indices.rank()))
        ctx.fail("batch_dims " + std::to_string(batch) + " out of range");
    if (depth == kDynamic) throw ShapeUnknown{};
    if (depth < 1 || batch + depth > static_cast<int64_t>(data.rank()))
        ctx.fail("indices' last dimension " + std::to_string(depth) + " does not fit data " +
                 data.to_string() + " after " + std::to_string(batch) + " batch dims");
    std::vector<int64_t> dims(indices.dims().begin(), indices.dims().end() - 1);
    dims.insert(dims.end(), data.dims().begin() + batch + depth, data.dims().end());
    return {Shape(dims)};
}

std::vector<Shape> shape_scatter(const InferenceContext& ctx) {
    const Shape& data = ctx.shape(0);
    if (ctx.shape(1).rank() != data.rank() || ctx.shape(2) != ctx.shape(1))
        ctx.fail("indices and updates must have data's rank and one shape");
    if (ctx.dtype(2) != ctx.dtype(0)) ctx.fail("updates and data differ in dtype");
    axis_in(ctx, ctx.attrs().get_int("axis", 0), data.rank());
    return {data};
}

std::vector<Shape> shape_scatter_nd(const InferenceContext& ctx) {
    if (ctx.dtype(2) != ctx.dtype(0)) ctx.fail("updates and data differ in dtype");
    if (ctx.shape(1).rank() == 0) ctx.fail("indices need rank >= 1");
    return {ctx.shape(0)};
}

size_t tensor_scatter_axis(const Attributes& attributes, size_t rank) {
    const int64_t axis = attributes.get_int("axis", -2);
    const int64_t normalized = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
    if (normalized < 1 || normalized >= static_cast<int64_t>(rank))
        throw InvalidArgument("TensorScatter: axis " + std::to_string(axis) + " must name a non-batch axis of rank " +
                              std::to_string(rank));
    return static_cast<size_t>(normalized);
}

std::vector<Shape> shape_tensor_scatter(const InferenceContext& ctx) {
    const Shape &past = ctx.shape(0), &update = ctx.shape(1);
    if (ctx.dtype(1) != ctx.dtype(0)) ctx.fail("update and past_cache differ in dtype");
    if (past.rank() < 2 || update.rank() != past.rank())
        ctx.fail("past_cache " + past.to_string() + " and update " + update.to_string() + " need the same rank >= 2");
    size_t axis = 0;
    try {
        axis = tensor_scatter_axis(ctx.attrs(), past.rank());
    } catch (const InvalidArgument& e) {
        ctx.fail(e.what());
    }
    const std::string mode = ctx.attrs().get_string("mode", "linear");
    if (mode != "linear" && mode != "circular") ctx.fail("mode must be linear or circular, got " + mode);
    for (size_t d = 0; d < past.rank(); ++d) {
        if (past[d] == kDynamic || update[d] == kDynamic) continue;
        if (d == axis ? update[d] > past[d] : update[d] != past[d])
            ctx.fail("update " + update.to_string() + " does not fit past_cache " + past.to_string() + " along axis " +
                     std::to_string(axis));
    }
    if (ctx.has_input(2)) {
        if (ctx.dtype(2) != DType::i64) ctx.fail("write_indices must be i64");
        const Shape& indices = ctx.shape(2);
        if (indices.rank() != 1 || (indices[0] != kDynamic && past[0] != kDynamic && indices[0] != past[0]))
            ctx.fail("write_indices " + indices.to_string() + " must be [batch] for past_cache " + past.to_string());
    }
    return {past};
}

std::vector<int64_t> resize_output_dims(const std::vector<int64_t>& in,
                                        const std::vector<float>& scales,
                                        const std::vector<int64_t>& sizes) {
    if (!sizes.empty()) return sizes;
    std::vector<int64_t> out(in.size());
    for (size_t i = 0; i < in.size(); ++i)
        out[i] = in[i] == kDynamic ? kDynamic
                                   : static_cast<int64_t>(std::floor(static_cast<double>(in[i]) * scales[i]));
    return out;
}

namespace {
// Scales (floats) or sizes (integers) of Resize/Upsample, checked against the rank.
std::vector<Shape> resized(const InferenceContext& ctx, size_t scales_input, size_t sizes_input) {
    const Shape& in = ctx.shape(0);
    std::vector<float> scales;
    std::vector<int64_t> sizes;
    try {
        if (sizes_input > 0 && ctx.has_input(sizes_input) && ctx.value(sizes_input).numel() > 0)
            sizes = ctx.ints(sizes_input);
        else if (ctx.has_input(scales_input))
            scales = ctx.value(scales_input).to_vector<float>();
    } catch (const ShapeUnknown&) {
        // Scales or sizes computed from other values (an FPN's upsampling to its lateral's
        // size): the rank is X's whatever they hold, which passes that work by rank can use;
        // the extents are known when the plan is made.
        return {Shape(std::vector<int64_t>(in.rank(), kDynamic))};
    }
    if (sizes.empty() && scales.empty()) ctx.fail("needs scales or sizes");
    if (ctx.attrs().has("axes")) throw Unsupported("node '" + ctx.node().name + "' (Resize): the axes attribute");
    const size_t given = sizes.empty() ? scales.size() : sizes.size();
    if (given != in.rank())
        ctx.fail(std::to_string(given) + " scales or sizes for rank " + std::to_string(in.rank()));
    for (float s : scales)
        if (!(s > 0)) ctx.fail("scales must be positive");
    return {Shape(resize_output_dims(in.dims(), scales, sizes))};
}
}  // namespace

std::vector<Shape> shape_resize(const InferenceContext& ctx) {
    if (ctx.attrs().get_string("keep_aspect_ratio_policy", "stretch") != "stretch")
        throw Unsupported("node '" + ctx.node().name + "' (Resize): keep_aspect_ratio_policy");
    return resized(ctx, 2, 3);
}
std::vector<Shape> shape_upsample(const InferenceContext& ctx) { return resized(ctx, 1, 0); }

// GridSample: X [N, C, H, W] and Grid [N, Ho, Wo, 2] give [N, C, Ho, Wo].
std::vector<Shape> shape_grid_sample(const InferenceContext& ctx) {
    check_same_dtypes(ctx, 0);
    const Shape& x = ctx.shape(0);
    const Shape& grid = ctx.shape(1);
    if (x.rank() != 4 || grid.rank() != 4 || (grid[3] != 2 && grid[3] != kDynamic))
        ctx.fail("X must be [N, C, H, W] and Grid [N, Ho, Wo, 2], got " + x.to_string() + " and " + grid.to_string());
    return {Shape({x[0], x[1], grid[1], grid[2]})};
}

DType dtype_f32(const InferenceContext&, size_t) { return DType::f32; }

// TfIdfVectorizer: one row of max(ngram_indexes) + 1 weights per input row.
std::vector<Shape> shape_tfidf(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    if (x.rank() != 1 && x.rank() != 2) ctx.fail("input must be [C] or [N, C], got " + x.to_string());
    if (ctx.dtype(0) != DType::i32 && ctx.dtype(0) != DType::i64) throw Unsupported("node '" + ctx.node().name + "' (TfIdfVectorizer): only integer tokens are supported");
    const std::vector<int64_t> indexes = ctx.attrs().get_ints("ngram_indexes");
    if (indexes.empty()) ctx.fail("ngram_indexes is empty");
    const int64_t width = *std::max_element(indexes.begin(), indexes.end()) + 1;
    return {x.rank() == 1 ? Shape({width}) : Shape({x[0], width})};
}

std::vector<Shape> shape_one_hot(const InferenceContext& ctx) {
    const Shape& indices = ctx.shape(0);
    const Shape& values = ctx.shape(2);
    if (values.rank() != 1 || (values[0] != 2 && values[0] != kDynamic))
        ctx.fail("values must hold two elements (off, on)");
    const double depth_value = scalar_value(ctx, 1);
    const int64_t depth = static_cast<int64_t>(depth_value);
    if (depth < 1) ctx.fail("depth must be positive");
    const size_t axis = axis_in(ctx, ctx.attrs().get_int("axis", -1), indices.rank() + 1);
    std::vector<int64_t> dims = indices.dims();
    dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(axis), depth);
    return {Shape(dims)};
}

std::vector<Shape> shape_tile(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    const std::vector<int64_t> repeats = ctx.ints(1);
    if (repeats.size() != in.rank())
        ctx.fail(std::to_string(repeats.size()) + " repeats for rank " + std::to_string(in.rank()));
    std::vector<int64_t> dims = in.dims();
    for (size_t i = 0; i < dims.size(); ++i) {
        if (repeats[i] < 0) ctx.fail("repeats must not be negative");
        dims[i] = times(dims[i], repeats[i]);
    }
    return {Shape(dims)};
}

PadAmounts resolve_pads(const std::vector<int64_t>& pads, const std::vector<int64_t>& axes,
                        bool axes_given, size_t rank, std::string* error) {
    PadAmounts p{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 0)};
    const size_t count = axes_given ? axes.size() : rank;
    if (pads.size() != 2 * count) {
        *error = std::to_string(pads.size()) + " pads for " + std::to_string(count) + " axes";
        return p;
    }
    for (size_t i = 0; i < count; ++i) {
        int64_t axis = axes_given ? axes[i] : static_cast<int64_t>(i);
        if (axis < 0) axis += static_cast<int64_t>(rank);
        if (axis < 0 || axis >= static_cast<int64_t>(rank)) {
            *error = "axis " + std::to_string(axes[i]) + " out of range";
            return p;
        }
        p.begin[static_cast<size_t>(axis)] = pads[i];
        p.end[static_cast<size_t>(axis)] = pads[i + count];
    }
    return p;
}

std::vector<Shape> shape_pad(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    const std::string mode = ctx.attrs().get_string("mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge")
        throw Unsupported("node '" + ctx.node().name + "' (Pad): mode '" + mode + "'");
    std::vector<int64_t> axes;
    if (ctx.has_input(3)) axes = ctx.ints(3);
    std::string error;
    const PadAmounts p = resolve_pads(ctx.ints(1), axes, ctx.has_input(3), in.rank(), &error);
    if (!error.empty()) ctx.fail(error);
    std::vector<int64_t> dims = in.dims();
    for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] == kDynamic) continue;
        dims[i] += p.begin[i] + p.end[i];
        if (dims[i] < 0) ctx.fail("pads remove more than axis " + std::to_string(i) + " holds");
        if (mode == "reflect" && (p.begin[i] > 0 || p.end[i] > 0) &&
            (std::max(p.begin[i], p.end[i]) >= in[i]))
            ctx.fail("reflect pads must be smaller than the axis they pad");
        if (mode == "edge" && in[i] == 0 && p.begin[i] + p.end[i] > 0) ctx.fail("edge pad of an empty axis");
    }
    return {Shape(dims)};
}

std::vector<Shape> shape_depth_to_space(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    if (in.rank() != 4) ctx.fail("input must be 4-D (N, C, H, W)");
    const int64_t b = positive_attribute(ctx, "blocksize");
    const std::string mode = ctx.attrs().get_string("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") ctx.fail("mode must be DCR or CRD, got '" + mode + "'");
    if (in[1] != kDynamic && in[1] % (b * b) != 0)
        ctx.fail("channels " + std::to_string(in[1]) + " not divisible by blocksize^2");
    return {Shape({in[0], in[1] == kDynamic ? kDynamic : in[1] / (b * b), times(in[2], b), times(in[3], b)})};
}

std::vector<Shape> shape_space_to_depth(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    if (in.rank() != 4) ctx.fail("input must be 4-D (N, C, H, W)");
    const int64_t b = positive_attribute(ctx, "blocksize");
    for (size_t i : {2, 3})
        if (in[i] != kDynamic && in[i] % b != 0)
            ctx.fail("spatial dims " + in.to_string() + " not divisible by blocksize");
    const auto divided = [&](int64_t d) { return d == kDynamic ? kDynamic : d / b; };
    return {Shape({in[0], times(in[1], b * b), divided(in[2]), divided(in[3])})};
}

std::vector<Shape> shape_top_k(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    if (in.rank() == 0) ctx.fail("input must have rank >= 1");
    const size_t axis = axis_in(ctx, ctx.attrs().get_int("axis", -1), in.rank());
    const std::vector<int64_t> k = ctx.ints(1);
    if (k.size() != 1 || k[0] < 0) ctx.fail("k must be one non-negative value");
    if (in[axis] != kDynamic && k[0] > in[axis])
        ctx.fail("k " + std::to_string(k[0]) + " exceeds axis extent " + std::to_string(in[axis]));
    Shape out = in;
    out[axis] = k[0];
    return {out, out};
}

std::vector<Shape> shape_compress(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    const std::vector<double> condition = ctx.value(1).to_vector<double>();
    int64_t kept = 0;
    for (double c : condition) kept += c != 0;
    if (!ctx.attrs().has("axis")) {
        int64_t elements = 1;
        for (int64_t d : in.dims()) elements = d == kDynamic || elements == kDynamic ? kDynamic : elements * d;
        if (elements != kDynamic && static_cast<int64_t>(condition.size()) > elements)
            ctx.fail("condition is longer than the input");
        return {Shape({kept})};
    }
    const size_t axis = axis_in(ctx, ctx.attrs().get_int("axis"), in.rank());
    if (in[axis] != kDynamic && static_cast<int64_t>(condition.size()) > in[axis])
        ctx.fail("condition is longer than axis " + std::to_string(axis));
    Shape out = in;
    out[axis] = kept;
    return {out};
}

std::vector<Shape> shape_nonzero(const InferenceContext& ctx) {
    const Tensor& data = ctx.value(0);
    int64_t count = 0;
    for (double v : data.to_vector<double>()) count += v != 0;
    return {Shape({static_cast<int64_t>(data.rank()), count})};
}

std::vector<Shape> shape_reverse_sequence(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    if (in.rank() < 2) ctx.fail("input must have rank >= 2");
    const size_t batch = axis_in(ctx, ctx.attrs().get_int("batch_axis", 1), in.rank());
    const size_t time = axis_in(ctx, ctx.attrs().get_int("time_axis", 0), in.rank());
    if (batch == time || batch > 1 || time > 1) ctx.fail("batch_axis and time_axis must be 0 and 1");
    return {in};
}

}  // namespace infer::detail
