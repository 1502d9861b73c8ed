// Residual Add + LayerNormalization over the last axis: one AddLayerNormalization, which reads
// both operands once and writes the normalized rows (and the sum, when something else reads it:
// the residual stream of pre-LN transformers) in one pass.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

namespace infer::detail {

namespace {

// Whether `value` is a constant row of `length` (or any row, when the length is not known).
bool is_row(const Pattern& p, int value, std::optional<int64_t> length) {
    const Tensor* t = p.constant(value);
    return t && t->shape().rank() == 1 && (!length || t->shape()[0] == *length);
}

}  // namespace

void fuse_add_layer_norm(Rewriter& rewriter, const PassContext& context) {
    if (!context.target_runs("AddLayerNormalization")) return;
    const OpId layer_norm = op_id("LayerNormalization"), add = op_id("Add");
    const Pattern p(rewriter);
    for (size_t n = 0; n < p.graph().nodes.size(); ++n) {
        const int ln = static_cast<int>(n);
        if (!p.is(ln, layer_norm) || p.node(ln).outputs.size() != 1) continue;
        const NodeIR& norm = p.node(ln);
        const int sum = norm.inputs[0];
        const int a = p.producer(sum, add);
        if (a < 0) continue;
        // Only the last axis: said so, or the only one.
        const int64_t axis = norm.attributes.get_int("axis", -1);
        const auto sum_dims = p.dims(sum);
        if (axis != -1 && !(sum_dims && axis == static_cast<int64_t>(sum_dims->size()) - 1)) continue;
        std::optional<int64_t> length;
        if (sum_dims && !sum_dims->empty() && sum_dims->back() != kDynamic) length = sum_dims->back();
        const bool has_bias = norm.inputs.size() > 2 && norm.inputs[2] >= 0;
        if (!is_row(p, norm.inputs[1], length) || (has_bias && !is_row(p, norm.inputs[2], length))) continue;
        std::vector<int> inputs{p.node(a).inputs[0], p.node(a).inputs[1], p.through_identity(norm.inputs[1])};
        if (has_bias) inputs.push_back(p.through_identity(norm.inputs[2]));
        std::vector<int> outputs{norm.outputs[0]};
        if (!p.read_only_by(sum, {ln})) outputs.push_back(sum);
        Attributes attributes;
        attributes.set("epsilon", norm.attributes.get_float("epsilon", 1e-5f));
        rewriter.replace({a, ln}, {"AddLayerNormalization", norm.name, inputs, outputs, attributes});
    }
}

}  // namespace infer::detail
