// Shapes of the neural-network layers family: losses, transposed and quantized convolutions,
// quantization, window generators and recurrent layers.
#include "core/ops/shapes_neural.hpp"

#include "core/ops/shape_functions.hpp"

#include <string>

namespace infer::detail {

namespace {

[[noreturn]] void unsupported(const InferenceContext& ctx, const std::string& what) {
    throw Unsupported("node '" + ctx.node().name + "' (" + ctx.node().op + "): " + what);
}

int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// Conv-like output [N, out_channels, spatial...] of input x and weights w.
Shape conv_of(const InferenceContext& ctx, size_t ix, size_t iw) {
    const Shape& x = ctx.shape(ix);
    const Shape& w = ctx.shape(iw);
    if (x.rank() < 3 || w.rank() != x.rank())
        ctx.fail("input " + x.to_string() + " and weights " + w.to_string() +
                 " must be [N, C, spatial...] and [M, C/group, kernel...]");
    const int64_t group = ctx.attrs().get_int("group", 1);
    if (group < 1) ctx.fail("group must be positive");
    if (x[1] != kDynamic && w[1] != kDynamic && w[1] * group != x[1])
        ctx.fail("input channels differ from weights' x group");
    const size_t spatial = x.rank() - 2;
    std::vector<int64_t> dims{x[0], w[0]};
    try {
        const WindowParams p = read_window_params(
            ctx.attrs(), spatial, std::vector<int64_t>(w.dims().begin() + 2, w.dims().end()));
        for (const WindowGeometry& g :
             window_geometry(p, std::vector<int64_t>(x.dims().begin() + 2, x.dims().end())))
            dims.push_back(g.out);
    } catch (const ModelError& e) {
        ctx.fail(e.what());
    }
    return Shape(dims);
}

}  // namespace

Shape matmul_of(const InferenceContext& ctx, size_t ia, size_t ib) {
    Shape a = ctx.shape(ia), b = ctx.shape(ib);
    if (a.rank() == 0 || b.rank() == 0) ctx.fail("matrix inputs must have rank >= 1");
    const bool a_vector = a.rank() == 1, b_vector = b.rank() == 1;
    if (a_vector) a = Shape({1, a[0]});
    if (b_vector) b = Shape({b[0], 1});
    const int64_t ka = a[a.rank() - 1], kb = b[b.rank() - 2];
    if (ka != kDynamic && kb != kDynamic && ka != kb)
        ctx.fail("inner dimensions differ: " + ctx.shape(ia).to_string() + " x " +
                 ctx.shape(ib).to_string());
    Shape batch;
    try {
        batch = Shape::broadcast(Shape(std::vector<int64_t>(a.dims().begin(), a.dims().end() - 2)),
                                 Shape(std::vector<int64_t>(b.dims().begin(), b.dims().end() - 2)));
    } catch (const InvalidArgument& e) {
        ctx.fail(e.what());
    }
    std::vector<int64_t> dims = batch.dims();
    if (!a_vector) dims.push_back(a[a.rank() - 2]);
    if (!b_vector) dims.push_back(b[b.rank() - 1]);
    return Shape(dims);
}

DType dtype_of_output_datatype(const InferenceContext& ctx, size_t) {
    return dtype_from_onnx(ctx.attrs().get_int("output_datatype", 1));
}
DType dtype_quantized(const InferenceContext& ctx, size_t) {
    return ctx.has_input(2) ? ctx.dtype(2) : DType::u8;
}
DType dtype_of_scale(const InferenceContext& ctx, size_t) { return ctx.dtype(1); }
DType dtype_dynamic_quantize(const InferenceContext&, size_t output) {
    return output == 1 ? DType::f32 : DType::u8;
}
DType dtype_i32(const InferenceContext&, size_t) { return DType::i32; }
DType dtype_of_input7(const InferenceContext& ctx, size_t) { return ctx.dtype(7); }

std::vector<Shape> shape_nll_loss(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    const Shape& target = ctx.shape(1);
    if (x.rank() < 2) ctx.fail("input must be [N, C, d...], got " + x.to_string());
    if (target.rank() + 1 != x.rank())
        ctx.fail("target " + target.to_string() + " must be input " + x.to_string() +
                 " without its class axis");
    if (ctx.dtype(1) != DType::i64 && ctx.dtype(1) != DType::i32)
        ctx.fail("target must be i32 or i64");
    if (ctx.has_input(2) && ctx.shape(2).rank() != 1) ctx.fail("weight must be [C]");
    const std::string reduction = ctx.attrs().get_string("reduction", "mean");
    if (reduction != "none" && reduction != "sum" && reduction != "mean")
        ctx.fail("unknown reduction '" + reduction + "'");
    std::vector<Shape> out{reduction == "none" ? target : Shape{}};
    if (ctx.node().outputs.size() > 1) out.push_back(x);
    return out;
}

std::vector<TransposedAxis> conv_transpose_geometry(const Attributes& attrs,
                                                    const std::vector<int64_t>& input,
                                                    const std::vector<int64_t>& kernel) {
    const size_t n = input.size();
    const std::vector<int64_t> k = attrs.get_ints("kernel_shape", kernel);
    const std::vector<int64_t> strides = attrs.get_ints("strides", std::vector<int64_t>(n, 1));
    const std::vector<int64_t> dilations = attrs.get_ints("dilations", std::vector<int64_t>(n, 1));
    const std::vector<int64_t> pads = attrs.get_ints("pads", std::vector<int64_t>(2 * n, 0));
    const std::vector<int64_t> extra = attrs.get_ints("output_padding", std::vector<int64_t>(n, 0));
    std::vector<int64_t> shape = attrs.get_ints("output_shape", {});
    if (shape.size() == n + 2) shape.erase(shape.begin(), shape.begin() + 2);  // [N, C, ...] given
    const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
    if (k.size() != n || strides.size() != n || dilations.size() != n || pads.size() != 2 * n ||
        extra.size() != n || (!shape.empty() && shape.size() != n))
        throw ModelError("kernel_shape, strides, dilations, pads, output_padding and output_shape "
                         "must cover " + std::to_string(n) + " spatial axes");
    if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
        auto_pad != "SAME_LOWER")
        throw ModelError("unknown auto_pad '" + auto_pad + "'");
    std::vector<TransposedAxis> axes(n);
    for (size_t i = 0; i < n; ++i) {
        if (k[i] < 1 || strides[i] < 1 || dilations[i] < 1)
            throw ModelError("kernel_shape, strides and dilations must be positive");
        if (kernel[i] != kDynamic && k[i] != kernel[i])
            throw ModelError("kernel_shape differs from the weights");
        TransposedAxis& a = axes[i];
        a = {input[i], k[i], strides[i], dilations[i], 0, kDynamic};
        if (input[i] == kDynamic) {
            if (!shape.empty()) a.out = shape[i];
            continue;
        }
        // The extent every input element's window reaches, before padding is cut away.
        const int64_t full = strides[i] * (input[i] - 1) + extra[i] + (k[i] - 1) * dilations[i] + 1;
        const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
        if (!shape.empty() || same) {
            a.out = shape.empty() ? input[i] * strides[i] : shape[i];
            // Negative totals (a requested output beyond `full`) leave zeros at the end.
            const int64_t total = full - a.out;
            a.pad_begin = auto_pad == "SAME_UPPER" ? floor_half(total) : total - floor_half(total);
        } else {
            const bool valid = auto_pad == "VALID";
            a.pad_begin = valid ? 0 : pads[i];
            a.out = full - (valid ? 0 : pads[i] + pads[n + i]);
        }
        if (a.out < 0) throw ModelError("negative output extent");
    }
    return axes;
}

std::vector<Shape> shape_conv_transpose(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    const Shape& w = ctx.shape(1);
    if (x.rank() < 3 || w.rank() != x.rank())
        ctx.fail("input " + x.to_string() + " and weights " + w.to_string() +
                 " must be [N, C, spatial...] and [C, M/group, kernel...]");
    const int64_t group = ctx.attrs().get_int("group", 1);
    if (group < 1) ctx.fail("group must be positive");
    if (x[1] != kDynamic && w[0] != kDynamic && x[1] != w[0])
        ctx.fail("input has " + std::to_string(x[1]) + " channels, weights " + w.to_string());
    if (w[0] != kDynamic && w[0] % group != 0) ctx.fail("channels not divisible by group");
    const int64_t out_channels = w[1] == kDynamic ? kDynamic : w[1] * group;
    if (ctx.has_input(2) && ctx.shape(2).rank() != 1) ctx.fail("bias must be [M]");
    std::vector<int64_t> dims{x[0], out_channels};
    try {
        for (const TransposedAxis& a :
             conv_transpose_geometry(ctx.attrs(),
                                     std::vector<int64_t>(x.dims().begin() + 2, x.dims().end()),
                                     std::vector<int64_t>(w.dims().begin() + 2, w.dims().end())))
            dims.push_back(a.out);
    } catch (const ModelError& e) {
        ctx.fail(e.what());
    }
    return {Shape(dims)};
}

std::vector<Shape> shape_conv_integer(const InferenceContext& ctx) { return {conv_of(ctx, 0, 1)}; }

std::vector<Shape> shape_qlinear_conv(const InferenceContext& ctx) { return {conv_of(ctx, 0, 3)}; }

std::vector<Shape> shape_quantize(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    const Shape& scale = ctx.shape(1);
    if (scale.rank() > 1) ctx.fail("scale must be a scalar or 1-D, got " + scale.to_string());
    // ONNX asks for equal shapes; onnxruntime's quantize_static writes a [1] scale with a []
    // zero point for per-tensor biases. One element in both is the same per-tensor meaning.
    if (ctx.has_input(2) && ctx.shape(2) != scale && !(scale.numel() == 1 && ctx.shape(2).numel() == 1))
        ctx.fail("zero point " + ctx.shape(2).to_string() + " and scale " + scale.to_string() + " differ in shape");
    if (scale.rank() == 1 && scale[0] != 1) {
        if (x.rank() == 0) ctx.fail("per-axis scale needs an input of rank >= 1");
        int64_t axis = ctx.attrs().get_int("axis", 1);
        if (axis < 0) axis += static_cast<int64_t>(x.rank());
        if (axis < 0 || axis >= static_cast<int64_t>(x.rank())) ctx.fail("axis out of range");
        const int64_t extent = x[static_cast<size_t>(axis)];
        if (extent != kDynamic && scale[0] != kDynamic && extent != scale[0])
            ctx.fail("scale " + scale.to_string() + " must match axis " + std::to_string(axis));
    }
    return {x};
}

std::vector<Shape> shape_dynamic_quantize(const InferenceContext& ctx) {
    return {ctx.shape(0), Shape{}, Shape{}};
}

std::vector<Shape> shape_matmul_integer(const InferenceContext& ctx) {
    // A's zero point per tensor; B's per tensor or per column (a row of B's last axis).
    if (ctx.has_input(2) && ctx.shape(2).numel() != 1) unsupported(ctx, "per-row zero points of A are not supported");
    if (ctx.has_input(3) && ctx.shape(3).numel() != 1) {
        const Shape &b = ctx.shape(1), &zero = ctx.shape(3);
        if (zero.rank() != 1 || b.rank() < 1 || zero[0] != b[b.rank() - 1])
            unsupported(ctx, "B's zero point must be one value or one per column, got " + zero.to_string() + " for B " +
                                 b.to_string());
    }
    return {matmul_of(ctx, 0, 1)};
}

std::vector<Shape> shape_qlinear_matmul(const InferenceContext& ctx) {
    for (size_t i : {1, 2, 4, 5, 6, 7})
        if (ctx.shape(i).numel() != 1)
            unsupported(ctx, "per-axis scales and zero points are not supported");
    return {matmul_of(ctx, 0, 3)};
}

std::vector<Shape> shape_window(const InferenceContext& ctx) {
    if (ctx.shape(0).numel() != 1) ctx.fail("size must be a scalar");
    const int64_t size = ctx.ints(0).at(0);
    if (size < 0) ctx.fail("size must not be negative");
    return {Shape{size}};
}

std::vector<Shape> shape_dft(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    if (x.rank() < 3) ctx.fail("input must be [batch, signal..., 1 or 2], got " + x.to_string());
    const int64_t channels = x[x.rank() - 1];
    if (channels != kDynamic && channels != 1 && channels != 2)
        ctx.fail("the last dimension must be 1 (real) or 2 (complex), got " + x.to_string());
    const int64_t axis_attr = ctx.attrs().get_int("axis", 1);
    const auto rank = static_cast<int64_t>(x.rank());
    const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
    if (axis < 1 || axis > rank - 2) ctx.fail("axis " + std::to_string(axis_attr) + " must be a signal axis of " + x.to_string());
    const bool inverse = ctx.attrs().get_int("inverse", 0) != 0, onesided = ctx.attrs().get_int("onesided", 0) != 0;
    int64_t length = x[static_cast<size_t>(axis)];
    if (ctx.has_input(1)) {
        if (ctx.shape(1).numel() != 1) ctx.fail("dft_length must be a scalar");
        length = ctx.ints(1).at(0);
        if (length < 1) ctx.fail("dft_length must be positive, got " + std::to_string(length));
    } else if (inverse && onesided && length != kDynamic) {
        length = 2 * (length - 1);  // the real signal a one-sided spectrum of this many bins comes from
    }
    std::vector<int64_t> dims = x.dims();
    dims[static_cast<size_t>(axis)] = length == kDynamic ? kDynamic : (!inverse && onesided ? length / 2 + 1 : length);
    dims.back() = inverse && onesided ? 1 : 2;
    return {Shape(dims)};
}

std::vector<Shape> shape_stft(const InferenceContext& ctx) {
    const Shape& signal = ctx.shape(0);
    if (signal.rank() != 3 || (signal[2] != kDynamic && signal[2] != 1 && signal[2] != 2))
        ctx.fail("signal must be [batch, length, 1 or 2], got " + signal.to_string());
    if (ctx.shape(1).numel() != 1) ctx.fail("frame_step must be a scalar");
    const int64_t step = ctx.ints(1).at(0);
    if (step < 1) ctx.fail("frame_step must be positive, got " + std::to_string(step));
    int64_t frame = kDynamic;
    if (ctx.has_input(2)) {
        if (ctx.shape(2).rank() != 1) ctx.fail("window must be 1-D, got " + ctx.shape(2).to_string());
        frame = ctx.shape(2)[0];
    }
    if (ctx.has_input(3)) {
        const int64_t given = ctx.ints(3).at(0);
        if (frame != kDynamic && given != frame)
            ctx.fail("frame_length " + std::to_string(given) + " differs from the window's " + std::to_string(frame));
        frame = given;
    }
    if (!ctx.has_input(2) && !ctx.has_input(3)) ctx.fail("needs a window or a frame_length");
    if (frame != kDynamic && frame < 1) ctx.fail("frame_length must be positive");
    int64_t frames = kDynamic;
    if (signal[1] != kDynamic && frame != kDynamic) {
        if (signal[1] < frame) ctx.fail("the signal (" + std::to_string(signal[1]) + ") is shorter than a frame (" + std::to_string(frame) + ")");
        frames = (signal[1] - frame) / step + 1;
    }
    const bool onesided = ctx.attrs().get_int("onesided", 1) != 0;
    const int64_t bins = frame == kDynamic ? kDynamic : (onesided ? frame / 2 + 1 : frame);
    return {Shape{signal[0], frames, bins, 2}};
}

std::vector<Shape> shape_mel_weight_matrix(const InferenceContext& ctx) {
    for (size_t i = 0; i < 5; ++i)
        if (ctx.shape(i).numel() != 1) ctx.fail("input " + std::to_string(i) + " must be a scalar");
    const int64_t mel_bins = ctx.ints(0).at(0), dft_length = ctx.ints(1).at(0);
    if (mel_bins < 1 || dft_length < 1) ctx.fail("num_mel_bins and dft_length must be positive");
    return {Shape{dft_length / 2 + 1, mel_bins}};
}

std::vector<Shape> shape_recurrent(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    const Shape& r = ctx.shape(2);
    if (x.rank() != 3) ctx.fail("X must have rank 3, got " + x.to_string());
    if (r.rank() != 3) ctx.fail("R must have rank 3, got " + r.to_string());
    const std::string direction = ctx.attrs().get_string("direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
        ctx.fail("unknown direction '" + direction + "'");
    const int64_t dirs = direction == "bidirectional" ? 2 : 1;
    const int64_t hidden = ctx.attrs().get_int("hidden_size", r[2]);
    const int64_t layout = ctx.attrs().get_int("layout", 0);
    if (layout != 0 && layout != 1) ctx.fail("layout must be 0 or 1");
    const int64_t seq = layout == 0 ? x[0] : x[1], batch = layout == 0 ? x[1] : x[0];
    std::vector<Shape> out;
    out.push_back(layout == 0 ? Shape{seq, dirs, batch, hidden} : Shape{batch, seq, dirs, hidden});
    const Shape state = layout == 0 ? Shape{dirs, batch, hidden} : Shape{batch, dirs, hidden};
    while (out.size() < ctx.node().outputs.size()) out.push_back(state);
    return out;
}

std::vector<Shape> shape_instance_norm(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    if (x.rank() < 3) ctx.fail("input must be [N, C, spatial...], got " + x.to_string());
    for (size_t i : {1, 2})
        if (ctx.shape(i).rank() != 1 ||
            (x[1] != kDynamic && ctx.shape(i)[0] != kDynamic && ctx.shape(i)[0] != x[1]))
            ctx.fail("input " + std::to_string(i) + " must be [C]");
    return {x};
}

namespace {
// The number of tensors an optimizer node updates: (inputs - 2) / tensors per update.
size_t updated_tensors(const InferenceContext& ctx) {
    const size_t per = ctx.node().op == "Adam" ? 4 : 3;
    const size_t inputs = ctx.node().inputs.size();
    if (inputs < 2 + per || (inputs - 2) % per != 0 || ctx.node().outputs.size() != (inputs - 2) / per * (per - 1))
        ctx.fail("takes R, T and " + std::to_string(per) + " tensors per updated tensor, giving " +
                 std::to_string(per - 1) + " outputs per updated tensor");
    return (inputs - 2) / per;
}
}  // namespace

DType dtype_of_optimizer(const InferenceContext& ctx, size_t output) {
    return ctx.dtype(2 + output % updated_tensors(ctx));
}

std::vector<Shape> shape_optimizer(const InferenceContext& ctx) {
    const size_t groups = updated_tensors(ctx);
    std::vector<Shape> shapes;
    for (size_t j = 0; j < ctx.node().outputs.size(); ++j) shapes.push_back(ctx.shape(2 + j % groups));
    return shapes;
}

}  // namespace infer::detail
