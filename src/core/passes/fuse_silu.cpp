// x · Sigmoid(x), either operand order, becomes one Silu node (EfficientNet's and YOLO's
// activation: two passes over the activation, and a Sigmoid result written and read back,
// become one pass), where the target has a Silu kernel. The Sigmoid's result must have no other
// reader and be no graph output.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

namespace infer::detail {

void fuse_silu(Rewriter& rewriter, const PassContext& context) {
    if (!context.target_runs("Silu")) return;
    const OpId sigmoid = op_id("Sigmoid"), mul = op_id("Mul");
    const Pattern p(rewriter);
    for (size_t n = 0; n < p.graph().nodes.size(); ++n) {
        const int s = static_cast<int>(n);
        if (!p.is(s, sigmoid)) continue;
        const NodeIR& node = p.node(s);
        const int x = node.inputs[0];
        const DType dtype = p.type(x).dtype;
        if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16) continue;
        const int m = p.sole_reader(node.outputs[0], mul);
        if (m < 0 || Pattern::other_input(p.node(m), node.outputs[0]) != x) continue;
        // The product's shape is x's only when the two are x and Sigmoid(x) (no broadcast).
        rewriter.replace({s, m}, NodeIR{"Silu", p.node(m).name, {x}, p.node(m).outputs, {}});
    }
}

}  // namespace infer::detail
