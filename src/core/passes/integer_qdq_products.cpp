// Quantized models in the QDQ format (what onnxruntime.quantization.quantize_static writes by
// default): a MatMul reads DequantizeLinear(a_q) and DequantizeLinear(W_q) of a constant int8
// weight, so that a backend without the pattern computes the product in float on dequantized
// values. Since
//   DQ(a_q) · DQ(W_q) = sa · sw[c] · Σ_k (a_q - za)(W_q - zw[c]),
// the pair becomes MatMulInteger(a_q, W_q, za, zw) (on the CPU the packed int8 kernel, W_q
// packed once per session), a Cast to f32 and a Mul by the constant sa · sw: exact integer
// sums instead of float ones, the same numbers up to float rounding. Applies where the scales
// are constants, A's per tensor and W's per tensor or per column (DequantizeLinear axis 1), and
// the target runs MatMulInteger; elsewhere the QDQ graph runs in float as written.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

namespace infer::detail {

namespace {

bool is_int8(DType t) { return t == DType::u8 || t == DType::i8; }

struct Dequantized {
    int quantized = -1, zero = -1;  // value ids; zero -1 when absent
    const Tensor* scale = nullptr;
};

// The DequantizeLinear making `value`, with a constant f32 scale (and constant zero point, of
// the quantized dtype, when given); nothing when `value` is made otherwise.
std::optional<Dequantized> dequantized(const Pattern& p, int value, OpId dequantize) {
    const int n = p.producer(value, dequantize);
    if (n < 0) return std::nullopt;
    const NodeIR& node = p.node(n);
    Dequantized d;
    d.quantized = node.inputs[0];
    d.scale = p.constant(node.inputs[1]);
    if (!d.scale || d.scale->dtype() != DType::f32 || !is_int8(p.type(d.quantized).dtype)) return std::nullopt;
    if (node.inputs.size() > 2 && node.inputs[2] >= 0) {
        const Tensor* zero = p.constant(node.inputs[2]);
        if (!zero || zero->dtype() != p.type(d.quantized).dtype || zero->numel() != d.scale->numel()) return std::nullopt;
        d.zero = p.through_identity(node.inputs[2]);
    }
    if (d.scale->numel() > 1) {  // per axis: only the weight's per column form is taken
        const int64_t axis = node.attributes.get_int("axis", 1);
        if (axis != 1 && axis != -1) return std::nullopt;
    }
    return d;
}

}  // namespace

void integer_qdq_products(Rewriter& rewriter, const PassContext& context) {
    const OpId matmul = op_id("MatMul"), dequantize = op_id("DequantizeLinear");
    const Pattern p(rewriter);
    for (size_t i = 0; i < p.graph().nodes.size(); ++i) {
        const int m = static_cast<int>(i);
        if (!p.is(m, matmul)) continue;
        const NodeIR& node = p.node(m);
        const auto a = dequantized(p, node.inputs[0], dequantize);
        const auto w = dequantized(p, node.inputs[1], dequantize);
        if (!a || !w || a->scale->numel() != 1) continue;
        // MatMulInteger's kernels are keyed by A's dtype (u8 or i8).
        if (!context.target.kernels().find("MatMulInteger", p.type(a->quantized).dtype)) continue;
        const Tensor* weight = p.constant(w->quantized);
        if (!weight || weight->shape().rank() != 2) continue;
        const int64_t columns = weight->shape()[1];
        if (w->scale->numel() != 1 && w->scale->numel() != columns) continue;

        // sa · sw, one per column or one for all.
        const float sa = a->scale->to_vector<float>()[0];
        std::vector<float> scale = w->scale->to_vector<float>();
        for (float& s : scale) s *= sa;
        const Shape scale_shape = scale.size() == 1 ? Shape(std::vector<int64_t>{}) : Shape{columns};
        const std::string& name = node.name;
        const int scale_value = rewriter.add_constant(name + "/scale", Tensor::from_vector(scale, scale_shape));
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
