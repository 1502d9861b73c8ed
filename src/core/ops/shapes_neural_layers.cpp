// Shapes of the neural family's layers: convolution, pooling and normalization ops over
// [N, C, spatial...] tensors, and LayerNormalization.
#include "core/ops/shapes_neural.hpp"

#include <algorithm>

namespace infer::detail {

WindowParams read_window_params(const Attributes& attrs, size_t spatial,
                                const std::vector<int64_t>& kernel_from_weights) {
    WindowParams p;
    p.kernel = attrs.get_ints("kernel_shape", kernel_from_weights);
    p.strides = attrs.get_ints("strides", std::vector<int64_t>(spatial, 1));
    p.dilations = attrs.get_ints("dilations", std::vector<int64_t>(spatial, 1));
    p.pads = attrs.get_ints("pads", std::vector<int64_t>(2 * spatial, 0));
    p.auto_pad = attrs.get_string("auto_pad", "NOTSET");
    p.ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
    return p;
}

std::vector<WindowGeometry> window_geometry(const WindowParams& p,
                                            const std::vector<int64_t>& input) {
    const size_t n = input.size();
    if (p.kernel.size() != n || p.strides.size() != n || p.dilations.size() != n ||
        p.pads.size() != 2 * n)
        throw ModelError("kernel_shape, strides, dilations and pads must cover " +
                         std::to_string(n) + " spatial axes");
    std::vector<WindowGeometry> out(n);
    for (size_t i = 0; i < n; ++i) {
        if (p.kernel[i] < 1 || p.strides[i] < 1 || p.dilations[i] < 1)
            throw ModelError("kernel_shape, strides and dilations must be positive");
        const int64_t window = (p.kernel[i] - 1) * p.dilations[i] + 1;
        if (input[i] == kDynamic) {
            out[i] = {p.pads[i], p.pads[n + i], kDynamic};
            continue;
        }
        if (p.auto_pad == "SAME_UPPER" || p.auto_pad == "SAME_LOWER") {
            const int64_t o = (input[i] + p.strides[i] - 1) / p.strides[i];
            const int64_t total = std::max<int64_t>((o - 1) * p.strides[i] + window - input[i], 0);
            const int64_t small = total / 2, large = total - small;
            out[i] = p.auto_pad == "SAME_UPPER" ? WindowGeometry{small, large, o}
                                                : WindowGeometry{large, small, o};
            continue;
        }
        int64_t begin = p.pads[i], end = p.pads[n + i];
        if (p.auto_pad == "VALID") begin = end = 0;
        else if (p.auto_pad != "NOTSET") throw ModelError("unknown auto_pad '" + p.auto_pad + "'");
        const int64_t span = input[i] + begin + end - window;
        if (span < 0) throw ModelError("window larger than the padded input");
        int64_t o = (p.ceil_mode ? (span + p.strides[i] - 1) / p.strides[i]
                                 : span / p.strides[i]) + 1;
        // A window that would start in the end padding is dropped (as the ONNX reference does).
        if (p.ceil_mode && (o - 1) * p.strides[i] >= input[i] + begin) --o;
        out[i] = {begin, end, o};
    }
    return out;
}

static std::vector<Shape> windowed_shape(const InferenceContext& ctx, int64_t channels,
                                         const std::vector<int64_t>& kernel_from_weights) {
    const Shape& x = ctx.shape(0);
    if (x.rank() < 3) ctx.fail("input must be [N, C, spatial...], got " + x.to_string());
    const size_t spatial = x.rank() - 2;
    std::vector<int64_t> in(x.dims().begin() + 2, x.dims().end());
    std::vector<WindowGeometry> geometry;
    try {
        geometry = window_geometry(read_window_params(ctx.attrs(), spatial, kernel_from_weights), in);
    } catch (const ModelError& e) {
        ctx.fail(e.what());
    }
    std::vector<int64_t> dims{x[0], channels};
    for (const auto& g : geometry) dims.push_back(g.out);
    return {Shape(dims)};
}

std::vector<Shape> shape_conv(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    const Shape& w = ctx.shape(1);
    if (x.rank() < 3) ctx.fail("input must be [N, C, spatial...], got " + x.to_string());
    if (w.rank() != x.rank())
        ctx.fail("weights " + w.to_string() + " and input " + x.to_string() + " differ in rank");
    const int64_t group = ctx.attrs().get_int("group", 1);
    if (group < 1) ctx.fail("group must be positive");
    if (x[1] != kDynamic && w[1] * group != x[1])
        ctx.fail("input has " + std::to_string(x[1]) + " channels; weights expect " +
                 std::to_string(w[1]) + " x group " + std::to_string(group));
    if (w[0] != kDynamic && w[0] % group != 0) ctx.fail("output channels not divisible by group");
    if (ctx.has_input(2) && !(ctx.shape(2).rank() == 1 &&
                              (ctx.shape(2)[0] == w[0] || ctx.shape(2)[0] == kDynamic || w[0] == kDynamic)))
        ctx.fail("bias " + ctx.shape(2).to_string() + " must be [" + std::to_string(w[0]) + "]");
    return windowed_shape(ctx, w[0], std::vector<int64_t>(w.dims().begin() + 2, w.dims().end()));
}

std::vector<Shape> shape_pool(const InferenceContext& ctx) {
    if (ctx.node().outputs.size() > 1 && ctx.node().op != "MaxPool")
        ctx.fail("only MaxPool has a second output (Indices)");
    if (!ctx.attrs().has("kernel_shape")) ctx.fail("kernel_shape is required");
    if (ctx.shape(0).rank() < 3)
        ctx.fail("input must be [N, C, spatial...], got " + ctx.shape(0).to_string());
    const std::vector<Shape> y = windowed_shape(ctx, ctx.shape(0)[1], {});
    return std::vector<Shape>(ctx.node().outputs.size(), y[0]);  // Y, and Indices of Y's shape
}

// MaxUnpool: output_shape when given, else each spatial extent (in - 1) * stride + kernel
// less the pads, MaxPool's geometry inverted.
std::vector<Shape> shape_max_unpool(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    if (x.rank() < 3) ctx.fail("input must be [N, C, spatial...], got " + x.to_string());
    if (ctx.dtype(1) != DType::i64) ctx.fail("the indices must be i64");
    if (ctx.shape(1) != x) ctx.fail("the indices " + ctx.shape(1).to_string() + " must have X's shape " + x.to_string());
    if (ctx.has_input(2)) {
        const std::vector<int64_t> dims = ctx.ints(2);
        if (dims.size() != x.rank()) ctx.fail("output_shape must have " + std::to_string(x.rank()) + " entries");
        return {Shape(dims)};
    }
    const size_t spatial = x.rank() - 2;
    if (!ctx.attrs().has("kernel_shape")) ctx.fail("kernel_shape is required");
    const WindowParams p = read_window_params(ctx.attrs(), spatial, {});
    if (p.kernel.size() != spatial || p.strides.size() != spatial || p.pads.size() != 2 * spatial)
        ctx.fail("kernel_shape, strides and pads must cover " + std::to_string(spatial) + " spatial axes");
    std::vector<int64_t> dims{x[0], x[1]};
    for (size_t i = 0; i < spatial; ++i)
        dims.push_back(x[2 + i] == kDynamic ? kDynamic
                                            : (x[2 + i] - 1) * p.strides[i] + p.kernel[i] - p.pads[i] - p.pads[spatial + i]);
    return {Shape(dims)};
}

std::vector<Shape> shape_global_pool(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    if (x.rank() < 3) ctx.fail("input must be [N, C, spatial...], got " + x.to_string());
    std::vector<int64_t> dims(x.rank(), 1);
    dims[0] = x[0];
    dims[1] = x[1];
    return {Shape(dims)};
}

std::vector<Shape> shape_roi_align(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    const Shape& rois = ctx.shape(1);
    const Shape& indices = ctx.shape(2);
    if (x.rank() != 4) ctx.fail("input must be [N, C, H, W], got " + x.to_string());
    if (rois.rank() != 2 || (rois[1] != kDynamic && rois[1] != 4)) ctx.fail("rois must be [regions, 4], got " + rois.to_string());
    if (indices.rank() != 1 || (indices[0] != kDynamic && rois[0] != kDynamic && indices[0] != rois[0]))
        ctx.fail("batch_indices must be [regions] with regions = " + std::to_string(rois[0]) + ", got " + indices.to_string());
    if (ctx.dtype(1) != ctx.dtype(0)) ctx.fail("rois must have the input's dtype");
    if (ctx.dtype(2) != DType::i64) ctx.fail("batch_indices must be i64");
    const int64_t height = ctx.attrs().get_int("output_height", 1), width = ctx.attrs().get_int("output_width", 1);
    if (height < 1 || width < 1) ctx.fail("output_height and output_width must be at least 1");
    if (ctx.attrs().get_int("sampling_ratio", 0) < 0) ctx.fail("sampling_ratio must not be negative");
    const std::string mode = ctx.attrs().get_string("mode", "avg");
    if (mode != "avg" && mode != "max") ctx.fail("mode must be avg or max, got '" + mode + "'");
    return {Shape{rois[0], x[1], height, width}};
}

std::vector<Shape> shape_batch_norm(const InferenceContext& ctx) {
    // training_mode (opset 14+): normalized with the batch's own statistics, and outputs 1 and 2
    // the running mean and variance updated with them. Only then may there be more than Y.
    const bool training = ctx.attrs().get_int("training_mode", 0) != 0;
    if (!training && ctx.node().outputs.size() > 1)
        ctx.fail("running mean and variance outputs need training_mode = 1");
    const Shape& x = ctx.shape(0);
    if (x.rank() < 2) ctx.fail("input must be [N, C, ...], got " + x.to_string());
    for (size_t i = 1; i < 5; ++i)
        if (ctx.shape(i).rank() != 1 ||
            (x[1] != kDynamic && ctx.shape(i)[0] != kDynamic && ctx.shape(i)[0] != x[1]))
            ctx.fail("input " + std::to_string(i) + " " + ctx.shape(i).to_string() +
                     " must be [C] with C = " + std::to_string(x[1]));
    std::vector<Shape> shapes{x};
    for (size_t i = 1; i < ctx.node().outputs.size(); ++i) shapes.push_back(Shape{x[1]});
    return shapes;
}

DType dtype_rms_norm(const InferenceContext& ctx, size_t) {
    const std::string name = ctx.attrs().get_string("y_dtype", "");
    if (name.empty()) return ctx.dtype(1);
    try {
        return parse_dtype(name);
    } catch (const InvalidArgument& e) {
        ctx.fail(e.what());
    }
}

namespace {

// The first normalized axis of X (the normalizations' "axis" attribute, default -1), or the
// node's error when it is out of X's range.
size_t normalized_from(const InferenceContext& ctx, const Shape& x) {
    try {
        return x.normalize_axis(ctx.attrs().get_int("axis", -1));
    } catch (const InvalidArgument& e) {
        ctx.fail(e.what());
    }
}

}  // namespace

std::vector<Shape> shape_rms_norm(const InferenceContext& ctx) {
    const auto is_float = [](DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16 || t == DType::f64; };
    if (!is_float(ctx.dtype(0)) || !is_float(ctx.dtype(1)) || !is_float(dtype_rms_norm(ctx, 0)))
        ctx.fail("X, Scale and Y must be floating-point (X " + std::string(dtype_name(ctx.dtype(0))) + ", Scale " +
                 std::string(dtype_name(ctx.dtype(1))) + ")");
    const Shape& x = ctx.shape(0);
    const size_t axis = normalized_from(ctx, x);
    // Scale broadcasts to X[axis:]: each of its trailing dims 1 or X's (dims unknown until run
    // time match any).
    const Shape& scale = ctx.shape(1);
    const size_t normalized = x.rank() - axis;
    bool fits = scale.rank() <= normalized;
    for (size_t i = 1; fits && i <= scale.rank(); ++i) {
        const int64_t s = scale[scale.rank() - i], d = x[x.rank() - i];
        fits = s == 1 || s == d || s == kDynamic || d == kDynamic;
    }
    if (!fits)
        ctx.fail("Scale " + scale.to_string() + " does not broadcast to X's normalized dims " +
                 Shape(std::vector<int64_t>(x.dims().begin() + static_cast<std::ptrdiff_t>(axis), x.dims().end())).to_string());
    return {x};
}

std::vector<Shape> shape_layer_norm(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    const size_t axis = normalized_from(ctx, in);
    std::vector<int64_t> stat_dims(in.dims());
    for (size_t i = axis; i < stat_dims.size(); ++i) stat_dims[i] = 1;
    std::vector<Shape> shapes{in};
    for (size_t i = 1; i < ctx.node().outputs.size(); ++i) shapes.push_back(Shape(stat_dims));
    return shapes;
}

}  // namespace infer::detail
