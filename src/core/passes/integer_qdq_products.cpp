// Quantized models in the QDQ format (what onnxruntime.quantization.quantize_static writes by
// default): a MatMul reads DequantizeLinear(a_q) and DequantizeLinear(W_q) of a constant int8
// weight, so that a backend without the pattern computes the product in float on dequantized
// values. Since
//   DQ(a_q) · DQ(W_q) = sa · sw[c] · Σ_k (a_q - za)(W_q - zw[c]),
// the pair becomes MatMulIntegerToFloat(a_q, W_q, sa · sw, za, zw), with the bias of an Add
// that follows (a constant row) taken in too: exact integer sums instead of float ones, the
// same numbers up to float rounding, dequantized in the product's epilogue (on the CPU the
// packed int8 kernel, W_q packed once per session). A target without that op but with
// MatMulInteger gets MatMulInteger, a Cast to f32 and a Mul by sa · sw. Applies where the
// scales are constants, A's per tensor and W's per tensor or per column (DequantizeLinear axis
// 1). Where the fused op is there, a product of two activations quantized per tensor
// (attention's, Q·Kᵀ and P·V) becomes one too. Conv(DQ(x_q), DQ(W_q)) with its output grid
// likewise becomes one ConvIntegerToFloat, or one QLinearConv where only a QuantizeLinear reads
// its result, an Add of two DequantizeLinear outputs that a QuantizeLinear reads (a residual
// connection) one QuantizedAdd, and a MaxPool between a DequantizeLinear and a QuantizeLinear of
// one grid a MaxPool of the bytes; a Gemm by a weight becomes a MatMulIntegerToFloat too.
// Elsewhere the QDQ graph runs in float as written.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <utility>
#include <optional>
#include <vector>

namespace infer::detail {

namespace {

bool is_int8(DType t) { return t == DType::u8 || t == DType::i8; }

struct Dequantized {
    int quantized = -1, zero = -1;  // value ids; zero -1 when absent
    int scale_value = -1;
    const Tensor* scale = nullptr;
};

// The DequantizeLinear making `value`, with a constant f32 scale (and constant zero point, of
// the quantized dtype, when given), per tensor or along `axis` (a MatMul weight's columns, 1;
// a Conv weight's output channels, 0); nothing when `value` is made otherwise.
std::optional<Dequantized> dequantized(const Pattern& p, int value, OpId dequantize, int64_t axis = 1) {
    const int n = p.producer(value, dequantize);
    if (n < 0) return std::nullopt;
    const NodeIR& node = p.node(n);
    Dequantized d;
    d.quantized = node.inputs[0];
    d.scale_value = p.through_identity(node.inputs[1]);
    d.scale = p.constant(node.inputs[1]);
    if (!d.scale || d.scale->dtype() != DType::f32 || !is_int8(p.type(d.quantized).dtype)) return std::nullopt;
    if (node.inputs.size() > 2 && node.inputs[2] >= 0) {
        const Tensor* zero = p.constant(node.inputs[2]);
        if (!zero || zero->dtype() != p.type(d.quantized).dtype || zero->numel() != d.scale->numel()) return std::nullopt;
        d.zero = p.through_identity(node.inputs[2]);
    }
    if (d.scale->numel() > 1) {  // per axis: only the weight's per column (channel) form is taken
        const int64_t along = node.attributes.get_int("axis", 1);
        const auto rank = p.type(d.quantized).shape ? static_cast<int64_t>(p.type(d.quantized).shape->rank()) : int64_t{-1};
        if (along != axis && !(rank > 0 && along == axis - rank)) return std::nullopt;
    }
    return d;
}

// The product's output written to 8 bits and read back, as QDQ files write a quantized
// product's output: QuantizeLinear(result, s, z) read only by DequantizeLinear(·, s, z) with
// the same constant one-value scale and zero point. Its DequantizeLinear's output is then what
// later nodes read.
struct OutputGrid {
    int quantize = -1, dequantize = -1;  // node indices
    int scale = -1, zero = -1;           // value ids
    int result = -1;
};

std::optional<OutputGrid> output_grid(const Pattern& p, int result) {
    const int q = p.sole_reader(result, op_id("QuantizeLinear"));
    if (q < 0 || p.node(q).inputs.size() < 3 || p.node(q).inputs[2] < 0) return std::nullopt;
    const int dq = p.sole_reader(p.node(q).outputs[0], op_id("DequantizeLinear"));
    if (dq < 0 || p.node(dq).inputs.size() < 3 || p.node(dq).inputs[2] < 0) return std::nullopt;
    const Tensor* scale = p.constant(p.node(q).inputs[1]);
    const Tensor* zero = p.constant(p.node(q).inputs[2]);
    const Tensor* scale_back = p.constant(p.node(dq).inputs[1]);
    const Tensor* zero_back = p.constant(p.node(dq).inputs[2]);
    if (!scale || !zero || !scale_back || !zero_back || scale->numel() != 1 || zero->numel() != 1 ||
        scale->dtype() != DType::f32 || !is_int8(zero->dtype()) || scale_back->dtype() != DType::f32 ||
        zero_back->dtype() != zero->dtype() || scale_back->numel() != 1 || zero_back->numel() != 1)
        return std::nullopt;
    if (scale->to_vector<float>()[0] != scale_back->to_vector<float>()[0] ||
        zero->to_vector<double>()[0] != zero_back->to_vector<double>()[0])
        return std::nullopt;
    // A product or convolution reading the grid's result would itself become an integer op
    // reading the QuantizeLinear's 8-bit output: that QuantizeLinear must stay.
    for (int reader : p.readers(p.node(dq).outputs[0]))
        if (p.node(reader).op == "MatMul" || p.node(reader).op == "Conv") return std::nullopt;
    return OutputGrid{q, dq, p.through_identity(p.node(q).inputs[1]), p.through_identity(p.node(q).inputs[2]),
                      p.node(dq).outputs[0]};
}

// sa · sw as a new constant: one value, or one per column (channel) where W has `count` scales.
int combined_scale(Rewriter& rewriter, const std::string& name, const Dequantized& a, const Dequantized& w, int64_t count) {
    const float sa = a.scale->to_vector<float>()[0];
    std::vector<float> scale = w.scale->to_vector<float>();
    for (float& v : scale) v *= sa;
    const Shape shape = scale.size() == 1 ? Shape(std::vector<int64_t>{}) : Shape{count};
    return rewriter.add_constant(name + "/scale", Tensor::from_vector(scale, shape));
}

// Takes the output grid after `result`, if there is one, into a rewrite: its two nodes join
// `nodes`, its scale and zero point `inputs` (Y's, inputs 6 and 7); returns what later nodes read.
int absorb_output_grid(const Pattern& p, int result, std::vector<int>& nodes, std::vector<int>& inputs) {
    const auto grid = output_grid(p, result);
    if (!grid) return result;
    nodes.push_back(grid->quantize);
    nodes.push_back(grid->dequantize);
    inputs.push_back(grid->scale);
    inputs.push_back(grid->zero);
    return grid->result;
}

// The bias of a QDQ convolution in the form QLinearConv takes: DequantizeLinear of an i32
// constant with zero point 0 and scale sx·sw[c] per channel (what quantize_static writes).
// Its i32 value id; -1 when the convolution has no bias; nothing when it has another one.
std::optional<int> integer_bias(const Pattern& p, const NodeIR& conv, const Dequantized& x, const Dequantized& w,
                                int64_t channels) {
    if (conv.inputs.size() < 3 || conv.inputs[2] < 0) return -1;
    const int n = p.producer(p.through_identity(conv.inputs[2]), op_id("DequantizeLinear"));
    if (n < 0) return std::nullopt;
    const NodeIR& node = p.node(n);
    const Tensor* bias = p.constant(node.inputs[0]);
    const Tensor* scale = p.constant(node.inputs[1]);
    if (!bias || bias->dtype() != DType::i32 || bias->numel() != channels || !scale || scale->dtype() != DType::f32 ||
        (scale->numel() != 1 && scale->numel() != channels))
        return std::nullopt;
    if (node.inputs.size() > 2 && node.inputs[2] >= 0) {
        const Tensor* zero = p.constant(node.inputs[2]);
        if (!zero) return std::nullopt;
        for (double z : zero->to_vector<double>())
            if (z != 0) return std::nullopt;
    }
    const float sx = x.scale->to_vector<float>()[0];
    const std::vector<float> sw = w.scale->to_vector<float>(), sb = scale->to_vector<float>();
    for (int64_t c = 0; c < channels; ++c) {
        const float expected = sx * sw[sw.size() == 1 ? 0 : static_cast<size_t>(c)];
        const float given = sb[sb.size() == 1 ? 0 : static_cast<size_t>(c)];
        if (std::abs(given - expected) > 1e-6f * std::abs(expected)) return std::nullopt;
    }
    return p.through_identity(node.inputs[0]);
}

// The QuantizeLinear that alone reads `value`, with one constant f32 scale and one constant
// u8/i8 zero point, saturating: its node index, else -1.
int scalar_quantize_reader(const Pattern& p, int value) {
    const int q = p.sole_reader(value, op_id("QuantizeLinear"));
    if (q < 0) return -1;
    const NodeIR& quantize = p.node(q);
    if (quantize.inputs.size() < 3 || quantize.inputs[2] < 0) return -1;
    const Tensor* scale = p.constant(quantize.inputs[1]);
    const Tensor* zero = p.constant(quantize.inputs[2]);
    if (!scale || !zero || scale->numel() != 1 || zero->numel() != 1 || scale->dtype() != DType::f32 ||
        !is_int8(zero->dtype()) || quantize.attributes.get_int("saturate", 1) != 1)
        return -1;
    return q;
}

// A zero point the integer op needs as an input: the DequantizeLinear's, or a new 0 of `type`.
int zero_point(Rewriter& rewriter, const std::string& name, int zero, DType type) {
    if (zero >= 0) return zero;
    return rewriter.add_constant(name, type == DType::u8 ? Tensor::from_vector(std::vector<uint8_t>{0}, Shape(std::vector<int64_t>{}))
                                                        : Tensor::from_vector(std::vector<int8_t>{0}, Shape(std::vector<int64_t>{})));
}

// Conv(DQ(x_q), DQ(W_q), DQ(bias_i32)?) whose result only a QuantizeLinear reads, as QDQ files
// write every convolution that feeds another: one QLinearConv making that QuantizeLinear's
// 8-bit output (ONNX Runtime runs these files the same way). The i32 sums are requantized in the
// product's epilogue, so no f32 image is written and read back, and no QuantizeLinear runs;
// results equal the float reading's up to its rounding (a value that float arithmetic puts
// right at a rounding boundary may land one step away).
bool requantized_qdq_conv(Rewriter& rewriter, const PassContext& context, const Pattern& p, int n, const Dequantized& x,
                          const Dequantized& w, int64_t channels) {
    const NodeIR& node = p.node(n);
    const DType x_type = p.type(x.quantized).dtype, w_type = p.type(w.quantized).dtype;
    if (!context.target.kernels().find("QLinearConv", x_type)) return false;
    const int q = scalar_quantize_reader(p, node.outputs[0]);
    if (q < 0) return false;
    const NodeIR& quantize = p.node(q);
    const std::optional<int> bias = integer_bias(p, node, x, w, channels);
    if (!bias) return false;
    std::vector<int> inputs{x.quantized,
                            x.scale_value,
                            zero_point(rewriter, node.name + "/x_zero", x.zero, x_type),
                            p.through_identity(w.quantized),
                            w.scale_value,
                            zero_point(rewriter, node.name + "/w_zero", w.zero, w_type),
                            p.through_identity(quantize.inputs[1]),
                            p.through_identity(quantize.inputs[2])};
    if (*bias >= 0) inputs.push_back(*bias);
    return rewriter.replace({n, q}, {"QLinearConv", node.name, inputs, {quantize.outputs[0]}, node.attributes});
}

// Conv(DQ(x_q), DQ(W_q constant), bias?) and the grid and bias after it: one
// ConvIntegerToFloat (x per tensor, W per tensor or per output channel); the bias stays
// whatever made it (a constant, or quantize_static's DequantizeLinear of an i32 constant,
// folded when the session plans).
bool integer_qdq_conv(Rewriter& rewriter, const PassContext& context, const Pattern& p, int n) {
    const OpId dequantize = op_id("DequantizeLinear");
    const NodeIR& node = p.node(n);
    const auto x = dequantized(p, node.inputs[0], dequantize);
    const auto w = dequantized(p, node.inputs[1], dequantize, 0);
    if (!x || !w || x->scale->numel() != 1) return false;
    const Tensor* weight = p.constant(w->quantized);
    if (!weight || weight->shape().rank() < 3) return false;
    const int64_t channels = weight->shape()[0];
    if (w->scale->numel() != 1 && w->scale->numel() != channels) return false;
    if (requantized_qdq_conv(rewriter, context, p, n, *x, *w, channels)) return true;
    const bool has_bias = node.inputs.size() > 2 && node.inputs[2] >= 0;
    if (has_bias && p.type(node.inputs[2]).dtype != DType::f32) return false;
    if (!context.target.kernels().find("ConvIntegerToFloat", p.type(x->quantized).dtype)) return false;
    const int scale_value = combined_scale(rewriter, node.name, *x, *w, channels);
    std::vector<int> nodes{n};
    std::vector<int> inputs{x->quantized, p.through_identity(w->quantized), scale_value, x->zero, w->zero,
                            has_bias ? node.inputs[2] : -1};
    const int result = absorb_output_grid(p, node.outputs[0], nodes, inputs);
    while (inputs.back() < 0) inputs.pop_back();
    return rewriter.replace(nodes, {"ConvIntegerToFloat", node.name, inputs, {result}, node.attributes});
}

// Add(DQ(a_q), DQ(b_q)) that only a QuantizeLinear reads, everything per tensor (a QDQ CNN's
// residual Add): one QuantizedAdd, bytes in and out.
bool integer_qdq_add(Rewriter& rewriter, const PassContext& context, const Pattern& p, int n) {
    const OpId dequantize = op_id("DequantizeLinear");
    const NodeIR& node = p.node(n);
    if (node.inputs.size() != 2) return false;
    const auto a = dequantized(p, node.inputs[0], dequantize);
    const auto b = dequantized(p, node.inputs[1], dequantize);
    if (!a || !b || a->scale->numel() != 1 || b->scale->numel() != 1) return false;
    const DType type = p.type(a->quantized).dtype;
    if (p.type(b->quantized).dtype != type) return false;
    if (!context.target.kernels().find("QuantizedAdd", type)) return false;
    const int q = scalar_quantize_reader(p, node.outputs[0]);
    if (q < 0) return false;
    const NodeIR& quantize = p.node(q);
    const std::vector<int> inputs{a->quantized, a->scale_value, zero_point(rewriter, node.name + "/a_zero", a->zero, type),
                                  b->quantized, b->scale_value, zero_point(rewriter, node.name + "/b_zero", b->zero, type),
                                  p.through_identity(quantize.inputs[1]), p.through_identity(quantize.inputs[2])};
    return rewriter.replace({n, q}, {"QuantizedAdd", node.name, inputs, {quantize.outputs[0]}, {}});
}

// MaxPool(DQ(x_q, s, z)) read only by QuantizeLinear(·, s, z), the same scale (positive) and
// zero point: dequantizing is increasing, so the largest value is the dequantized largest byte,
// which the QuantizeLinear gives back exactly. The pool runs on the bytes instead (a QDQ CNN's
// stem pool: no f32 image written, pooled and quantized again).
bool integer_qdq_max_pool(Rewriter& rewriter, const PassContext& context, const Pattern& p, int n) {
    const NodeIR& node = p.node(n);
    if (node.outputs.size() != 1) return false;  // not with its Indices output
    const auto x = dequantized(p, node.inputs[0], op_id("DequantizeLinear"));
    if (!x || x->scale->numel() != 1 || !(x->scale->to_vector<float>()[0] > 0)) return false;
    const int q = scalar_quantize_reader(p, node.outputs[0]);
    if (q < 0) return false;
    const NodeIR& quantize = p.node(q);
    const DType type = p.type(x->quantized).dtype;
    const Tensor* y_zero = p.constant(quantize.inputs[2]);
    const Tensor* x_zero = x->zero >= 0 ? p.constant(x->zero) : nullptr;
    if (y_zero->dtype() != type || p.constant(quantize.inputs[1])->to_vector<float>()[0] != x->scale->to_vector<float>()[0] ||
        y_zero->to_vector<double>()[0] != (x_zero ? x_zero->to_vector<double>()[0] : 0.0))
        return false;
    if (!context.target.kernels().find("MaxPool", type)) return false;
    return rewriter.replace({n, q}, {"MaxPool", node.name, {x->quantized}, {quantize.outputs[0]}, node.attributes});
}

// Gemm(DQ(a_q), DQ(W_q constant), C?) with alpha = beta = 1 and A untransposed (a classifier's
// in a QDQ file): the MatMul form, MatMulIntegerToFloat, with W transposed here once where
// transB = 1 (W [N, K] to [K, N], its scales and zero points per output still) and C, a row of
// N, as its bias. Without C the output grid after it is taken in too (MatMulIntegerToFloat adds
// its bias after that grid, Gemm's C is inside it).
bool integer_qdq_gemm(Rewriter& rewriter, const PassContext& context, const Pattern& p, int n) {
    const NodeIR& node = p.node(n);
    const Attributes& attrs = node.attributes;
    if (attrs.get_float("alpha", 1.0f) != 1.0f || attrs.get_float("beta", 1.0f) != 1.0f || attrs.get_int("transA", 0) != 0)
        return false;
    const bool transposed = attrs.get_int("transB", 0) != 0;
    const OpId dequantize = op_id("DequantizeLinear");
    const auto a = dequantized(p, node.inputs[0], dequantize);
    const auto w = dequantized(p, node.inputs[1], dequantize, transposed ? 0 : 1);
    if (!a || !w || a->scale->numel() != 1) return false;
    const Tensor* weight = p.constant(w->quantized);
    if (!weight || weight->shape().rank() != 2) return false;
    const DType a_type = p.type(a->quantized).dtype;
    if (!context.target.kernels().find("MatMulIntegerToFloat", a_type)) return false;
    const int64_t columns = weight->shape()[transposed ? 0 : 1], depth = weight->shape()[transposed ? 1 : 0];
    if (w->scale->numel() != 1 && w->scale->numel() != columns) return false;
    const bool has_bias = node.inputs.size() > 2 && node.inputs[2] >= 0;
    if (has_bias) {
        const TensorType& bias = p.type(node.inputs[2]);
        if (bias.dtype != DType::f32 || !bias.shape || bias.shape->rank() != 1 || (*bias.shape)[0] != columns) return false;
    }
    int b = p.through_identity(w->quantized);
    if (transposed) {  // [N, K] to [K, N]
        const auto transpose = [&](auto element) {
            using T = decltype(element);
            const T* from = weight->data<T>();
            std::vector<T> to(static_cast<size_t>(weight->numel()));
            for (int64_t row = 0; row < columns; ++row)
                for (int64_t k = 0; k < depth; ++k) to[static_cast<size_t>(k * columns + row)] = from[row * depth + k];
            return Tensor::from_vector(to, Shape{depth, columns});
        };
        b = rewriter.add_constant(node.name + "/weight_transposed",
                                  weight->dtype() == DType::i8 ? transpose(int8_t{}) : transpose(uint8_t{}));
    }
    std::vector<int> nodes{n};
    std::vector<int> inputs{a->quantized, b, combined_scale(rewriter, node.name, *a, *w, columns), a->zero, w->zero,
                            has_bias ? node.inputs[2] : -1};
    const int result = has_bias ? node.outputs[0] : absorb_output_grid(p, node.outputs[0], nodes, inputs);
    while (inputs.back() < 0) inputs.pop_back();
    return rewriter.replace(nodes, {"MatMulIntegerToFloat", node.name, inputs, {result}, {}});
}

}  // namespace

void integer_qdq_products(Rewriter& rewriter, const PassContext& context) {
    const OpId matmul = op_id("MatMul"), dequantize = op_id("DequantizeLinear");
    using Rewrite = bool (*)(Rewriter&, const PassContext&, const Pattern&, int);
    const std::pair<OpId, Rewrite> rewrites[] = {{op_id("Conv"), integer_qdq_conv},
                                                 {op_id("Add"), integer_qdq_add},
                                                 {op_id("MaxPool"), integer_qdq_max_pool},
                                                 {op_id("Gemm"), integer_qdq_gemm}};
    const Pattern p(rewriter);
    for (size_t i = 0; i < p.graph().nodes.size(); ++i) {
        const int m = static_cast<int>(i);
        const auto rewrite = std::find_if(std::begin(rewrites), std::end(rewrites), [&](const auto& r) { return p.is(m, r.first); });
        if (rewrite != std::end(rewrites)) {
            rewrite->second(rewriter, context, p, m);
            continue;
        }
        if (!p.is(m, matmul)) continue;
        const NodeIR& node = p.node(m);
        const auto a = dequantized(p, node.inputs[0], dequantize);
        const auto w = dequantized(p, node.inputs[1], dequantize);
        if (!a || !w || a->scale->numel() != 1) continue;
        // The integer kernels are keyed by A's dtype (u8 or i8).
        const DType a_type = p.type(a->quantized).dtype;
        const bool fused = context.target.kernels().find("MatMulIntegerToFloat", a_type) != nullptr;
        if (!fused && !context.target.kernels().find("MatMulInteger", a_type)) continue;
        // B a constant 2-D weight (scale per tensor or per column), or, where the fused op is
        // there, an activation quantized per tensor (attention's products of two activations).
        const Tensor* weight = p.constant(w->quantized);
        int64_t columns = kDynamic;
        if (weight) {
            if (weight->shape().rank() != 2) continue;
            columns = weight->shape()[1];
            if (w->scale->numel() != 1 && w->scale->numel() != columns) continue;
        } else {
            const auto& shape = p.type(w->quantized).shape;
            if (!fused || w->scale->numel() != 1 || !shape || shape->rank() < 2) continue;
            columns = (*shape)[shape->rank() - 1];
        }

        // sa · sw, one per column or one for all.
        const std::string& name = node.name;
        const int scale_value = combined_scale(rewriter, name, *a, *w, columns);
        if (fused) {
            std::vector<int> nodes{m};
            std::vector<int> inputs{a->quantized, p.through_identity(w->quantized), scale_value, a->zero, w->zero, -1};
            int result = absorb_output_grid(p, node.outputs[0], nodes, inputs);
            if (const int add = p.sole_reader(result, op_id("Add")); add >= 0) {
                const int bias = Pattern::other_input(p.node(add), result);
                const Tensor* row = p.constant(bias);
                if (row && row->dtype() == DType::f32 && row->shape().rank() == 1 && columns != kDynamic &&
                    row->shape()[0] == columns) {
                    nodes.push_back(add);
                    inputs[5] = p.through_identity(bias);
                    result = p.node(add).outputs[0];
                }
            }
            while (inputs.back() < 0) inputs.pop_back();  // absent trailing inputs
            rewriter.replace(nodes, {"MatMulIntegerToFloat", name, inputs, {result}, {}});
            continue;
        }
        const int sums = rewriter.add_value(name + "/sums"), sums_f32 = rewriter.add_value(name + "/sums_f32");
        Attributes to_f32;
        to_f32.set("to", static_cast<int64_t>(1));  // ONNX's FLOAT
        std::vector<NodeIR> replacements;
        replacements.push_back({"MatMulInteger", name, {a->quantized, p.through_identity(w->quantized), a->zero, w->zero},
                                {sums}, {}});
        replacements.push_back({"Cast", rewriter.unique_name(name + "/to_f32"), {sums}, {sums_f32}, to_f32});
        replacements.push_back({"Mul", rewriter.unique_name(name + "/dequantize"), {sums_f32, scale_value},
                                {node.outputs[0]}, {}});
        rewriter.replace({m}, std::move(replacements));
    }
}

}  // namespace infer::detail
