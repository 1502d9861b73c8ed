// MatMul by a 2-D weight, then + bias (a row of N), then Gelu or Relu: one FusedMatMul, which
// adds the bias and applies the activation while the product's rows are still in cache (CUDA:
// in the cuBLASLt epilogue). A MatMul with nothing to absorb stays as it is.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

namespace infer::detail {

void fuse_matmul_epilogue(Rewriter& rewriter, const PassContext& context) {
    if (!context.target_runs("FusedMatMul")) return;
    const OpId matmul = op_id("MatMul"), add = op_id("Add"), gelu = op_id("Gelu"), relu = op_id("Relu");
    const Pattern p(rewriter);
    for (size_t n = 0; n < p.graph().nodes.size(); ++n) {
        const int m = static_cast<int>(n);
        if (!p.is(m, matmul)) continue;
        const Tensor* weight = p.constant(p.node(m).inputs[1]);
        if (!weight || weight->shape().rank() != 2) continue;
        const int64_t columns = weight->shape()[1];
        std::vector<int> nodes{m};
        std::vector<int> inputs{p.node(m).inputs[0], p.through_identity(p.node(m).inputs[1])};
        int result = p.node(m).outputs[0];
        if (const int a = p.sole_reader(result, add); a >= 0) {
            const int bias = Pattern::other_input(p.node(a), result);
            const Tensor* row = p.constant(bias);
            if (row && row->shape().rank() == 1 && row->shape()[0] == columns) {
                nodes.push_back(a);
                inputs.push_back(p.through_identity(bias));
                result = p.node(a).outputs[0];
            }
        }
        Attributes attributes;
        for (const OpId op : {gelu, relu})
            if (const int act = p.sole_reader(result, op); act >= 0) {
                // Gelu is the exact (erf) one or, with approximate = tanh, GPT-2's; any other
                // approximation stays a node of its own (and is refused there).
                std::string name = "Relu";
                if (op == gelu) {
                    const std::string approximate = p.node(act).attributes.get_string("approximate", "none");
                    if (approximate != "none" && approximate != "tanh") break;
                    name = approximate == "tanh" ? "GeluTanh" : "Gelu";
                }
                nodes.push_back(act);
                attributes.set("activation", name);
                result = p.node(act).outputs[0];
                break;
            }
        if (nodes.size() == 1) continue;
        const NodeIR fused{"FusedMatMul", p.node(nodes.back()).name, inputs, {result}, attributes};
        // Not every backend's FusedMatMul takes every activation (CUDA: GeluTanh once checked on
        // a GPU); where it does not, the activation stays a node of its own.
        if (!context.target_supports(p.graph(), fused)) continue;
        rewriter.replace(nodes, fused);
    }
}

}  // namespace infer::detail
