// The operator format's dequantized product, as onnxruntime.quantization.quantize_dynamic writes
// it for every MatMul:
//   MatMulInteger(A_q, B_q, za, zb) → Cast to f32 → Mul by a scale (sa · sb: one value, or one
//   per column) → Add of a constant bias row (optional)
// becomes one MatMulIntegerToFloat(A_q, B_q, scale, za, zb, bias): the sums scaled and biased in
// the product's epilogue (on the CPU, while the packed int8 kernel's tile is in cache) instead
// of three more passes over the product. The scale may be computed at run time (A's from
// DynamicQuantizeLinear); its shape must be known. Every intermediate value must be read by the
// chain alone.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

namespace infer::detail {

void fuse_integer_dequantize(Rewriter& rewriter, const PassContext& context) {
    const OpId matmul_integer = op_id("MatMulInteger"), cast = op_id("Cast"), mul = op_id("Mul"), add = op_id("Add");
    const Pattern p(rewriter);
    for (size_t i = 0; i < p.graph().nodes.size(); ++i) {
        const int m = static_cast<int>(i);
        if (!p.is(m, matmul_integer)) continue;
        const NodeIR& node = p.node(m);
        // The integer kernels are keyed by A's dtype (u8 or i8).
        if (!context.target.kernels().find("MatMulIntegerToFloat", p.type(node.inputs[0]).dtype)) continue;
        const auto b_dims = p.dims(node.inputs[1]);
        if (!b_dims || b_dims->size() < 2 || b_dims->back() == kDynamic) continue;
        const int64_t columns = b_dims->back();
        const int c = p.sole_reader(node.outputs[0], cast);
        if (c < 0 || p.type(p.node(c).outputs[0]).dtype != DType::f32) continue;
        const int u = p.sole_reader(p.node(c).outputs[0], mul);
        if (u < 0) continue;
        const int scale = Pattern::other_input(p.node(u), p.node(c).outputs[0]);
        const auto scale_dims = p.dims(scale);
        if (p.type(scale).dtype != DType::f32 || !scale_dims || scale_dims->size() > 1) continue;
        if (!scale_dims->empty() && (*scale_dims)[0] != 1 && (*scale_dims)[0] != columns) continue;

        std::vector<int> nodes{m, c, u};
        std::vector<int> inputs{node.inputs[0], node.inputs[1], scale, -1, -1, -1};
        for (size_t z = 2; z < 4 && z < node.inputs.size(); ++z) inputs[z + 1] = node.inputs[z];
        int result = p.node(u).outputs[0];
        if (const int a = p.sole_reader(result, add); a >= 0) {
            const int bias = Pattern::other_input(p.node(a), result);
            const Tensor* row = p.constant(bias);
            if (row && row->dtype() == DType::f32 && row->shape().rank() == 1 && row->shape()[0] == columns) {
                nodes.push_back(a);
                inputs[5] = p.through_identity(bias);
                result = p.node(a).outputs[0];
            }
        }
        while (inputs.back() < 0) inputs.pop_back();  // absent trailing inputs
        rewriter.replace(nodes, {"MatMulIntegerToFloat", node.name, inputs, {result}, {}});
    }
}

}  // namespace infer::detail
