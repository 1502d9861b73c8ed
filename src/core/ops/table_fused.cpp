// The op table's fused family: ops in infer's own domain that fusion passes make from chains of
// ONNX ops (src/core/passes/). They are never imported from a model file (traits.internal), and
// every one has a CPU kernel, so any backend can run a fused graph. Shape functions live here.
#include "core/ops/op_schema.hpp"
#include "core/ops/shape_functions.hpp"
#include "core/ops/shapes_math.hpp"
#include "core/ops/shapes_neural.hpp"

namespace infer::detail {

namespace {

// FusedMatMul(A[..., K], B[K, N], bias[N]?), activation "" | "Relu" | "Gelu" (erf) | "GeluTanh":
// activation(A·B + bias). B is a weight (2-D); the bias, when present, is a row of N.
std::vector<Shape> shape_fused_matmul(const InferenceContext& ctx) {
    check_same_dtypes(ctx, 0);
    const Shape& b = ctx.shape(1);
    if (b.rank() != 2) ctx.fail("B must be 2-D, got " + b.to_string());
    if (ctx.has_input(2) && (ctx.shape(2).rank() != 1 || (ctx.shape(2)[0] != b[1] && b[1] != kDynamic)))
        ctx.fail("the bias must be a row of " + std::to_string(b[1]) + ", got " + ctx.shape(2).to_string());
    const std::string activation = ctx.attrs().get_string("activation", "");
    if (activation != "" && activation != "Relu" && activation != "Gelu" && activation != "GeluTanh")
        ctx.fail("activation must be empty, Relu, Gelu or GeluTanh, got '" + activation + "'");
    return shape_matmul(ctx);
}

// FusedConv(X, W, B?, Z?), Conv's attributes, activation "" | "Relu" | "Clip" (with clip_min and
// clip_max, floats, either left out for no bound) | "HardSwish": activation(Conv(X, W, B) + Z), Z
// of Y's shape (a residual branch). What a CNN's Conv → Add → Relu (or → Clip: ReLU6, or →
// HardSwish: MobileNetV3) chains compute, in the convolution's epilogue.
void check_conv_activation(const InferenceContext& ctx) {
    const std::string activation = ctx.attrs().get_string("activation", "");
    if (activation != "" && activation != "Relu" && activation != "Clip" && activation != "HardSwish")
        ctx.fail("activation must be empty, Relu, Clip or HardSwish, got '" + activation + "'");
    if (activation == "Clip" && ctx.attrs().has("clip_min") && ctx.attrs().has("clip_max") &&
        !(ctx.attrs().get_float("clip_min", 0.0f) <= ctx.attrs().get_float("clip_max", 0.0f)))
        ctx.fail("clip_min must not exceed clip_max");
}

// Z (input 3), when present, must have Y's shape.
Shape check_residual(const InferenceContext& ctx, const Shape& y) {
    if (!ctx.has_input(3)) return y;
    const Shape& z = ctx.shape(3);
    bool same = z.rank() == y.rank();
    for (size_t i = 0; same && i < z.rank(); ++i)  // a dimension unknown until run time matches any
        same = z[i] == y[i] || z[i] == kDynamic || y[i] == kDynamic;
    if (!same) ctx.fail("Z must have the output's shape " + y.to_string() + ", got " + z.to_string());
    return y;
}

std::vector<Shape> shape_fused_conv(const InferenceContext& ctx) {
    check_same_dtypes(ctx, 0);
    check_conv_activation(ctx);
    return {check_residual(ctx, shape_conv(ctx)[0])};
}

// MatMulIntegerToFloat(A[..., M, K] u8/i8, B[..., K, N] u8/i8 (batch dims broadcast as
// MatMul's), scale [] or [N] f32, A's zero point?,
// B's zero point? ([] or [N]), bias[N] f32?, Y's scale? ([] f32), Y's zero point? ([] u8/i8)):
// P = scale ⊙ Σ_k (A - za)(B - zb) in f32; with Y's scale, P goes through QuantizeLinear and
// DequantizeLinear with it (rounded to Y's 8-bit grid, as a QDQ file writes the product's
// output); then + bias. What a QDQ product by an int8 weight computes
// (passes/integer_qdq_products.cpp), all of it in the product's epilogue.
std::vector<Shape> shape_matmul_integer_to_float(const InferenceContext& ctx) {
    const auto integer8 = [](DType t) { return t == DType::u8 || t == DType::i8; };
    if (!integer8(ctx.dtype(0)) || !integer8(ctx.dtype(1))) ctx.fail("A and B must be u8 or i8");
    const Shape& b = ctx.shape(1);
    if (b.rank() < 2) ctx.fail("B must have rank >= 2, got " + b.to_string());
    const int64_t n = b[b.rank() - 1];
    const auto row_or_one = [&](size_t i, const char* what) {
        if (!ctx.has_input(i)) return;
        const Shape& s = ctx.shape(i);
        if (s.numel() != 1 && (s.rank() != 1 || (s[0] != n && n != kDynamic)))
            ctx.fail(std::string(what) + " must be one value or a row of " + std::to_string(n) + ", got " + s.to_string());
    };
    row_or_one(2, "the scale");
    if (ctx.dtype(2) != DType::f32) ctx.fail("the scale must be f32");
    if (ctx.has_input(3) && (ctx.shape(3).numel() != 1 || ctx.dtype(3) != ctx.dtype(0)))
        ctx.fail("A's zero point must be one value of A's dtype");
    row_or_one(4, "B's zero point");
    if (ctx.has_input(4) && ctx.dtype(4) != ctx.dtype(1)) ctx.fail("B's zero point must have B's dtype");
    if (ctx.has_input(5) && (ctx.shape(5).rank() != 1 || (ctx.shape(5)[0] != n && n != kDynamic)))
        ctx.fail("the bias must be a row of " + std::to_string(n) + ", got " + ctx.shape(5).to_string());
    if (ctx.has_input(6) != ctx.has_input(7)) ctx.fail("Y's scale and zero point come together");
    if (ctx.has_input(6) && (ctx.shape(6).numel() != 1 || ctx.dtype(6) != DType::f32 || ctx.shape(7).numel() != 1 ||
                             !integer8(ctx.dtype(7))))
        ctx.fail("Y's scale must be one f32 value and its zero point one u8 or i8 value");
    return {matmul_of(ctx, 0, 1)};
}

DType dtype_f32(const InferenceContext&, size_t) { return DType::f32; }

// ConvIntegerToFloat(X [N, C, spatial...] u8/i8, W [M, C/group, kernel...] u8/i8, scale [] or [M]
// f32, X's zero point?, W's zero point? ([] or [M]), bias [M] f32?, Y's scale?, Y's zero point?),
// with Conv's attributes: scale[m] · Σ (X - zx)(W - zw[m]) + bias[m] per output channel m, then
// through Y's 8-bit grid when given (the bias is the convolution's own, inside the grid, unlike
// MatMulIntegerToFloat's, which is the Add after it), in f32. What a QDQ convolution computes
// (passes/integer_qdq_products.cpp), dequantized in the product's epilogue.
// Its operands' dtypes and shapes (ChannelsLastConvIntegerToFloat's too).
void check_conv_integer_to_float(const InferenceContext& ctx) {
    const auto integer8 = [](DType t) { return t == DType::u8 || t == DType::i8; };
    if (!integer8(ctx.dtype(0)) || !integer8(ctx.dtype(1))) ctx.fail("X and W must be u8 or i8");
    const Shape& w = ctx.shape(1);
    if (w.rank() < 3) ctx.fail("W must be [M, C/group, kernel...], got " + w.to_string());
    const int64_t m = w[0];
    const auto channel_row_or_one = [&](size_t i, const char* what, bool one_allowed) {
        if (!ctx.has_input(i)) return;
        const Shape& s = ctx.shape(i);
        if ((one_allowed && s.numel() == 1) || (s.rank() == 1 && (s[0] == m || m == kDynamic))) return;
        ctx.fail(std::string(what) + " must be " + (one_allowed ? "one value or " : "") + "a row of " + std::to_string(m) +
                 " output channels, got " + s.to_string());
    };
    if (ctx.dtype(2) != DType::f32) ctx.fail("the scale must be f32");
    channel_row_or_one(2, "the scale", true);
    if (ctx.has_input(3) && (ctx.shape(3).numel() != 1 || ctx.dtype(3) != ctx.dtype(0)))
        ctx.fail("X's zero point must be one value of X's dtype");
    channel_row_or_one(4, "W's zero point", true);
    if (ctx.has_input(4) && ctx.dtype(4) != ctx.dtype(1)) ctx.fail("W's zero point must have W's dtype");
    channel_row_or_one(5, "the bias", false);
    if (ctx.has_input(5) && ctx.dtype(5) != DType::f32) ctx.fail("the bias must be f32");
    if (ctx.has_input(6) != ctx.has_input(7)) ctx.fail("Y's scale and zero point come together");
    if (ctx.has_input(6) && (ctx.shape(6).numel() != 1 || ctx.dtype(6) != DType::f32 || ctx.shape(7).numel() != 1 ||
                             !integer8(ctx.dtype(7))))
        ctx.fail("Y's scale must be one f32 value and its zero point one u8 or i8 value");
}

std::vector<Shape> shape_conv_integer_to_float(const InferenceContext& ctx) {
    check_conv_integer_to_float(ctx);
    return shape_conv_integer(ctx);
}

// QuantizedAdd(A u8/i8, A's scale, A's zero point, B (A's dtype), B's scale, B's zero point,
// Y's scale, Y's zero point u8/i8), every scale and zero point one value, A and B broadcast as
// Add's operands: Y = QuantizeLinear(DequantizeLinear(A) + DequantizeLinear(B)) with Y's, in f32, as the
// three ops compute it. What a QDQ file's residual Add between 8-bit activations computes
// (passes/integer_qdq_products.cpp), reading and writing bytes instead of floats.
std::vector<Shape> shape_quantized_add(const InferenceContext& ctx) {
    const auto integer8 = [](DType t) { return t == DType::u8 || t == DType::i8; };
    if (!integer8(ctx.dtype(0)) || ctx.dtype(3) != ctx.dtype(0)) ctx.fail("A and B must both be u8 or both i8");
    for (size_t i : {size_t{1}, size_t{4}, size_t{6}})
        if (ctx.dtype(i) != DType::f32 || ctx.shape(i).numel() != 1) ctx.fail("the scales must be one f32 value each");
    if (ctx.dtype(2) != ctx.dtype(0) || ctx.dtype(5) != ctx.dtype(0) || ctx.shape(2).numel() != 1 || ctx.shape(5).numel() != 1)
        ctx.fail("A's and B's zero points must be one value of their dtype");
    if (!integer8(ctx.dtype(7)) || ctx.shape(7).numel() != 1) ctx.fail("Y's zero point must be one u8 or i8 value");
    try {
        return {Shape::broadcast(ctx.shape(0), ctx.shape(3))};
    } catch (const InvalidArgument& e) {
        ctx.fail(e.what());
    }
}

// The channel-last forms of a convolution and a pool: X [N, spatial..., C], Y [N, spatial...,
// channels] (the window geometry is the one of X's channel-first reading). Between convolutions
// a CPU keeps each pixel's channels together (passes/channels_last.cpp): a product reads a
// pixel's channels as one row, so no layout change is needed per layer.
Shape channels_last_window(const InferenceContext& ctx, int64_t channels, const std::vector<int64_t>& kernel_from_weights) {
    const Shape& x = ctx.shape(0);
    if (x.rank() < 3) ctx.fail("input must be [N, spatial..., C], got " + x.to_string());
    std::vector<int64_t> dims{x[0]};
    try {
        const WindowParams p = read_window_params(ctx.attrs(), x.rank() - 2, kernel_from_weights);
        for (const WindowGeometry& g : window_geometry(p, std::vector<int64_t>(x.dims().begin() + 1, x.dims().end() - 1)))
            dims.push_back(g.out);
    } catch (const ModelError& e) {
        ctx.fail(e.what());
    }
    dims.push_back(channels);
    return Shape(dims);
}

// A channel-last convolution's output: X [N, spatial..., C] by W [M, C/group, kernel...].
Shape channels_last_conv_window(const InferenceContext& ctx, const Shape& x, const Shape& w) {
    if (x.rank() < 3) ctx.fail("input must be [N, spatial..., C], got " + x.to_string());
    if (w.rank() != x.rank()) ctx.fail("weights " + w.to_string() + " and input " + x.to_string() + " differ in rank");
    const int64_t group = ctx.attrs().get_int("group", 1), channels = x.rank() ? x[x.rank() - 1] : 0;
    if (group < 1) ctx.fail("group must be positive");
    if (channels != kDynamic && w[1] != kDynamic && w[1] * group != channels)
        ctx.fail("input has " + std::to_string(channels) + " channels; weights expect " + std::to_string(w[1]) + " x group " +
                 std::to_string(group));
    if (w.rank() > 0 && w[0] != kDynamic && w[0] % group != 0)
        ctx.fail(std::to_string(w[0]) + " output channels do not split into " + std::to_string(group) + " groups");
    return {channels_last_window(ctx, w[0], std::vector<int64_t>(w.dims().begin() + 2, w.dims().end()))};
}

// ChannelsLastQLinearConv: QLinearConv's inputs and attributes, X and Y channel-last (W as
// ONNX has it, [M, C/group, kernel...]).
std::vector<Shape> shape_channels_last_qlinear_conv(const InferenceContext& ctx) {
    return {channels_last_conv_window(ctx, ctx.shape(0), ctx.shape(3))};
}

// ChannelsLastConvIntegerToFloat: ConvIntegerToFloat's inputs and attributes, X and Y
// channel-last (W as ONNX has it): precision int8's convolutions inside an f32 CNN's
// channel-last stretch (passes/channels_last.cpp).
std::vector<Shape> shape_channels_last_conv_integer_to_float(const InferenceContext& ctx) {
    check_conv_integer_to_float(ctx);
    return {channels_last_conv_window(ctx, ctx.shape(0), ctx.shape(1))};
}

// ChannelsLastConv: FusedConv's inputs and attributes, X, Z and Y channel-last (W as ONNX has
// it). An f32 CNN's convolutions between its edges (passes/channels_last.cpp).
std::vector<Shape> shape_channels_last_conv(const InferenceContext& ctx) {
    check_same_dtypes(ctx, 0);
    check_conv_activation(ctx);
    return {check_residual(ctx, channels_last_conv_window(ctx, ctx.shape(0), ctx.shape(1)))};
}

// ChannelsLastMaxPool: MaxPool's attributes (no Indices), X and Y channel-last.
std::vector<Shape> shape_channels_last_max_pool(const InferenceContext& ctx) {
    if (!ctx.attrs().has("kernel_shape")) ctx.fail("kernel_shape is required");
    const Shape& x = ctx.shape(0);
    return {channels_last_window(ctx, x.rank() ? x[x.rank() - 1] : 0, {})};
}

// AddLayerNormalization(X, Skip, Scale, Bias?) → Y = LayerNorm(X + Skip) over the last axis,
// and optionally Sum = X + Skip (the residual stream, when it is read further on). After the
// f16/bf16 lowering (passes/fold_norm_casts.cpp) an f32 node may take Skip in the low type and
// write Y in it (attribute y_dtype): the casts around the residual stream, folded in. Where Y
// itself is the residual stream (post-norm encoders such as BERT), Y stays f32 and the second
// output is Y again in the low type for the products that read it (attribute low_y_dtype),
// in place of the sum.
// The dtype an attribute names, which only an f32 X may narrow to f16 or bf16; `fallback` when
// the attribute is absent.
DType add_layer_norm_narrowed(const InferenceContext& ctx, const char* attribute, DType fallback) {
    const std::string name = ctx.attrs().get_string(attribute, "");
    if (name.empty()) return fallback;
    DType y = DType::f32;
    try {
        y = parse_dtype(name);
    } catch (const InvalidArgument& e) {
        ctx.fail(e.what());
    }
    if (y != ctx.dtype(0) && !(ctx.dtype(0) == DType::f32 && is_16bit_float(y)))
        ctx.fail(std::string(attribute) + " " + name + " beside X of " + std::string(dtype_name(ctx.dtype(0))) +
                 " (only f32 X may write f16 or bf16)");
    return y;
}

DType add_layer_norm_y_dtype(const InferenceContext& ctx) { return add_layer_norm_narrowed(ctx, "y_dtype", ctx.dtype(0)); }

DType dtype_add_layer_norm(const InferenceContext& ctx, size_t output) {
    if (output == 0) return add_layer_norm_y_dtype(ctx);
    return add_layer_norm_narrowed(ctx, "low_y_dtype", ctx.dtype(0));
}

std::vector<Shape> shape_add_layer_norm(const InferenceContext& ctx) {
    const DType x = ctx.dtype(0);
    if (ctx.dtype(1) != x && !(x == DType::f32 && is_16bit_float(ctx.dtype(1))))
        ctx.fail("Skip is " + std::string(dtype_name(ctx.dtype(1))) + " but X is " + std::string(dtype_name(x)) +
                 " (only an f32 X may take an f16 or bf16 Skip)");
    for (size_t i = 2; i < 4; ++i)
        if (ctx.has_input(i) && ctx.dtype(i) != x)
            ctx.fail("input " + std::to_string(i) + " is " + std::string(dtype_name(ctx.dtype(i))) + " but X is " +
                     std::string(dtype_name(x)));
    add_layer_norm_y_dtype(ctx);
    if (ctx.attrs().has("low_y_dtype")) {
        if (ctx.dtype(0) != DType::f32 || !is_16bit_float(add_layer_norm_narrowed(ctx, "low_y_dtype", DType::f32)))
            ctx.fail("low_y_dtype must name f16 or bf16, beside an f32 X");
        if (ctx.attrs().has("y_dtype")) ctx.fail("low_y_dtype beside y_dtype (Y is narrowed once)");
    }
    Shape sum;
    try {
        sum = Shape::broadcast(ctx.shape(0), ctx.shape(1));
    } catch (const InvalidArgument& e) {
        ctx.fail(e.what());
    }
    if (sum.rank() == 0) ctx.fail("X must have rank >= 1");
    const int64_t length = sum[sum.rank() - 1];
    for (size_t i = 2; i < 4; ++i)
        if (ctx.has_input(i) && (ctx.shape(i).rank() != 1 || (length != kDynamic && ctx.shape(i)[0] != length)))
            ctx.fail("scale and bias must be rows of the last axis, got " + ctx.shape(i).to_string());
    return std::vector<Shape>(ctx.node().outputs.size(), sum);
}

// Attention(Q[B, Sq, H·D], K[B, Sk, H·D], V[B, Sk, H·Dv], bias?) with num_heads H and scale:
// per head, softmax(Q·Kᵀ·scale + bias)·V, heads merged back into [B, Sq, H·Dv]. The additive
// bias (a mask, a relative position bias) broadcasts to [B, H, Sq, Sk].
// With qkv_packed = 1 (passes/fuse_qkv.cpp), input 0 is one product's output [B, S, 3·H·D]
// holding Q, K and V side by side along its last axis, and inputs 1 and 2 are absent: kernels
// read the three in place, a row of each every 3·H·D values.
std::vector<Shape> shape_attention(const InferenceContext& ctx) {
    check_same_dtypes(ctx, 0);
    const int64_t heads = ctx.attrs().get_int("num_heads", 0);
    if (heads <= 0) ctx.fail("num_heads must be positive");
    const int64_t packed = ctx.attrs().get_int("qkv_packed", 0);
    if (packed != 0 && packed != 1) ctx.fail("qkv_packed must be 0 or 1, got " + std::to_string(packed));
    // A mask's shape often stays unknown until run time (it is computed); the output's is not.
    bool bias_too_deep = false;
    try {
        bias_too_deep = ctx.has_input(3) && ctx.shape(3).rank() > 4;
    } catch (const ShapeUnknown&) {
    }
    if (bias_too_deep) ctx.fail("the bias must have rank <= 4");
    if (packed) {
        if (ctx.has_input(1) || ctx.has_input(2)) ctx.fail("with qkv_packed, K and V are part of input 0 and must be absent");
        const Shape& qkv = ctx.shape(0);
        if (qkv.rank() != 3) ctx.fail("the packed Q, K and V must be 3-D, got " + qkv.to_string());
        if (qkv[2] != kDynamic && qkv[2] % (3 * heads) != 0)
            ctx.fail("the last axis of " + qkv.to_string() + " does not split into Q, K and V of " + std::to_string(heads) +
                     " heads each");
        return {Shape({qkv[0], qkv[1], qkv[2] == kDynamic ? kDynamic : qkv[2] / 3})};
    }
    if (!ctx.has_input(1) || !ctx.has_input(2)) ctx.fail("K and V are required (unless qkv_packed)");
    const Shape &q = ctx.shape(0), &k = ctx.shape(1), &v = ctx.shape(2);
    if (q.rank() != 3 || k.rank() != 3 || v.rank() != 3)
        ctx.fail("Q, K and V must be 3-D, got " + q.to_string() + ", " + k.to_string() + ", " + v.to_string());
    for (const Shape* s : {&q, &k, &v})
        if ((*s)[2] != kDynamic && (*s)[2] % heads != 0)
            ctx.fail("the last axis of " + s->to_string() + " does not split into " + std::to_string(heads) + " heads");
    return {Shape({q[0], q[1], v[2]})};
}

constexpr OpTraits kFusedLow{.precision = PrecisionClass::low, .internal = true};
constexpr OpTraits kFusedF32{.precision = PrecisionClass::keeps_f32, .internal = true};
constexpr OpTraits kFusedPointwise{.in_place = 0b1, .internal = true};

}  // namespace

std::vector<OpSchema> fused_op_schemas() {
    const auto same = dtype_same_as_kernel_input;
    return {
        // name, inputs min/max, outputs min/max, kernel dtype input, dtype rule, shapes,
        // host inputs
        {"FusedMatMul", 2, 3, 1, 1, 0, same, shape_fused_matmul, 0, kFusedLow},
        {"FusedConv", 2, 4, 1, 1, 0, same, shape_fused_conv, 0, kFusedLow},
        // FusedMatMul's int8 form (precision = int8): the same inputs, the weight quantized by
        // the backend when it compiles the node, A quantized per row at run time. Low: where a
        // backend's int8 products take f16 activations, an int8 session lowers to f16 around
        // them (PassContext::activation_dtype); elsewhere nothing is lowered.
        {"QuantizedMatMul", 2, 3, 1, 1, 0, same, shape_fused_matmul, 0, kFusedLow},
        // Integer sums dequantized to f32 (A's dtype picks the kernel).
        {"MatMulIntegerToFloat", 3, 8, 1, 1, 0, dtype_f32, shape_matmul_integer_to_float, 0, kFusedF32},
        {"ConvIntegerToFloat", 3, 8, 1, 1, 0, dtype_f32, shape_conv_integer_to_float, 0, kFusedF32},
        // Bytes in, bytes out: no precision of its own to lower.
        {"QuantizedAdd", 8, 8, 1, 1, 0, dtype_of_input7, shape_quantized_add, 0, kFusedF32},
        {"ChannelsLastQLinearConv", 8, 9, 1, 1, 0, dtype_of_input7, shape_channels_last_qlinear_conv, 0, kFusedF32},
        {"ChannelsLastConvIntegerToFloat", 3, 8, 1, 1, 0, dtype_f32, shape_channels_last_conv_integer_to_float, 0, kFusedF32},
        {"ChannelsLastMaxPool", 1, 1, 1, 1, 0, same, shape_channels_last_max_pool, 0, kFusedF32},
        {"ChannelsLastConv", 2, 4, 1, 1, 0, same, shape_channels_last_conv, 0, kFusedF32},
        // keeps_f32 as LayerNormalization does: the residual stream stays in f32.
        {"AddLayerNormalization", 3, 4, 1, 2, 0, dtype_add_layer_norm, shape_add_layer_norm, 0, kFusedF32},
        // Low like the products it is made of; the softmax is computed in f32 inside.
        {"Attention", 1, 4, 1, 1, 0, same, shape_attention, 0, kFusedLow},  // K, V absent when packed
        // Silu(X) = X · Sigmoid(X) (EfficientNet's, YOLO's activation), in one pass; in place.
        {"Silu", 1, 1, 1, 1, 0, same, shape_unary, 0, kFusedPointwise},
    };
}

}  // namespace infer::detail
