// precision = int8: every product by a weight (a MatMul whose B is a 2-D f32 constant, or a
// FusedMatMul with its bias and activation) becomes a QuantizedMatMul with the same inputs.
// The backend quantizes the weight when it compiles the node (so each backend packs it for its
// own kernels) and the activations per row at run time; everything else stays in f32. Products
// of two computed values (attention's Q·Kᵀ) are not weights and stay f32. With a calibration,
// each QuantizedMatMul carries its input's calibrated range (attributes a_low, a_high).
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

namespace infer::detail {

std::vector<int> quantizable_products(const Rewriter& rewriter) {
    const OpId matmul = op_id("MatMul"), fused = op_id("FusedMatMul");
    const Pattern p(rewriter);
    std::vector<int> nodes;
    for (size_t n = 0; n < p.graph().nodes.size(); ++n) {
        const int m = static_cast<int>(n);
        if (!p.is(m, matmul) && !p.is(m, fused)) continue;
        const NodeIR& node = p.node(m);
        const Tensor* weight = p.constant(node.inputs[1]);
        if (!weight || weight->shape().rank() != 2 || weight->dtype() != DType::f32) continue;
        if (p.type(node.inputs[0]).dtype != DType::f32) continue;
        nodes.push_back(m);
    }
    return nodes;
}

void set_calibrated_range(NodeIR& product, const PassContext& context, const std::string& recorded_as) {
    if (!context.calibration) return;
    const auto it = context.calibration->ranges.find(recorded_as);
    if (it == context.calibration->ranges.end() || it->second.dynamic) return;
    product.attributes.set("a_low", it->second.low);
    product.attributes.set("a_high", it->second.high);
}

void quantize_products(Rewriter& rewriter, const PassContext& context) {
    if (context.precision != Precision::int8) return;
    if (!context.target_runs("QuantizedMatMul"))
        throw Unsupported("precision int8 is not available on " + context.target.name() +
                          ": it has no QuantizedMatMul kernel");
    const Pattern p(rewriter);
    for (int m : quantizable_products(rewriter)) {
        const NodeIR& node = p.node(m);
        NodeIR quantized{"QuantizedMatMul", node.name, node.inputs, node.outputs, node.attributes};
        quantized.inputs[1] = p.through_identity(node.inputs[1]);
        // (A QKV-packed product has its range from fuse_qkv already, in the attributes copied.)
        set_calibrated_range(quantized, context, node.name);
        rewriter.replace({m}, quantized);
    }
}

}  // namespace infer::detail
