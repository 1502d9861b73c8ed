// RMS normalization as exporters before opset 23 and infer's T5 builder write it out:
//   x · x (or Pow(x, 2)) → ReduceMean over the last axis, keepdims → + epsilon → Sqrt
//   → x / that (or x · Reciprocal(that)) → · weight (a constant row; either operand order)
// becomes one RMSNormalization(x, weight). Seven kernels a norm (a T5 decode step ran 19 norms,
// and in f16 each chain had casts around its f32 mean) become one pass over the row. Every
// intermediate value must be read by the chain alone.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

namespace infer::detail {

namespace {

struct RmsOps {
    OpId mul = op_id("Mul"), pow = op_id("Pow"), reduce_mean = op_id("ReduceMean"), add = op_id("Add"),
         sqrt = op_id("Sqrt"), div = op_id("Div"), reciprocal = op_id("Reciprocal");
};

// Whether ReduceMean node `r` averages the last axis of a value of `rank` only, keeping it.
bool means_last_axis(const Pattern& p, int r, std::optional<size_t> rank) {
    const NodeIR& node = p.node(r);
    if (node.attributes.get_int("keepdims", 1) != 1) return false;
    std::optional<std::vector<int64_t>> axes;
    if (node.attributes.has("axes")) axes = node.attributes.get_ints("axes");
    else if (node.inputs.size() > 1 && node.inputs[1] >= 0) axes = p.ints(node.inputs[1]);
    if (!axes || axes->size() != 1) return false;
    const int64_t axis = (*axes)[0];
    return axis == -1 || (rank && axis == static_cast<int64_t>(*rank) - 1);
}

// The x whose square `squared` is (x · x, or Pow(x, 2)) when `squared` is read by `reader` alone,
// and the node making it; -1 otherwise.
std::pair<int, int> squared_input(const Pattern& p, const RmsOps& ops, int squared, int reader) {
    if (!p.read_only_by(squared, {reader})) return {-1, -1};
    const int m = p.producer(squared, ops.mul);
    if (m >= 0 && p.node(m).inputs[0] == p.node(m).inputs[1]) return {p.node(m).inputs[0], m};
    const int w = p.producer(squared, ops.pow);
    if (w >= 0 && p.is_scalar(p.node(w).inputs[1], 2.0)) return {p.node(w).inputs[0], w};
    return {-1, -1};
}

}  // namespace

void fuse_rms_norm(Rewriter& rewriter, const PassContext& context) {
    if (!context.target_runs("RMSNormalization")) return;
    const RmsOps ops;
    const Pattern p(rewriter);
    for (size_t n = 0; n < p.graph().nodes.size(); ++n) {
        const int r = static_cast<int>(n);
        if (!p.is(r, ops.reduce_mean)) continue;
        const auto [x, square] = squared_input(p, ops, p.node(r).inputs[0], r);
        if (x < 0) continue;
        const DType dtype = p.type(x).dtype;
        if (dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16) continue;
        if (!means_last_axis(p, r, p.rank(x))) continue;
        const int a = p.sole_reader(p.node(r).outputs[0], ops.add);
        if (a < 0) continue;
        const std::optional<double> epsilon = p.scalar(Pattern::other_input(p.node(a), p.node(r).outputs[0]));
        if (!epsilon || *epsilon < 0) continue;
        const int s = p.sole_reader(p.node(a).outputs[0], ops.sqrt);
        if (s < 0) continue;
        // x / rms, or x · (1 / rms).
        std::vector<int> chain{square, r, a, s};
        int normalized = -1;
        const int rms = p.node(s).outputs[0];
        if (const int d = p.sole_reader(rms, ops.div); d >= 0 && p.node(d).inputs[0] == x && p.node(d).inputs[1] == rms) {
            chain.push_back(d);
            normalized = p.node(d).outputs[0];
        } else if (const int inv = p.sole_reader(rms, ops.reciprocal); inv >= 0) {
            const int m = p.sole_reader(p.node(inv).outputs[0], ops.mul);
            if (m < 0 || Pattern::other_input(p.node(m), p.node(inv).outputs[0]) != x) continue;
            chain.insert(chain.end(), {inv, m});
            normalized = p.node(m).outputs[0];
        }
        if (normalized < 0) continue;
        // The x·x node is read by ReduceMean alone; x itself is read by the square and the scaling too.
        const int scaled = p.sole_reader(normalized, ops.mul);
        if (scaled < 0) continue;
        const int weight = Pattern::other_input(p.node(scaled), normalized);
        const Tensor* w = p.constant(weight);
        // A row as long as x's rows (when shape inference knows that length; the residual
        // stream's often goes unknown through attention's computed reshapes).
        const std::optional<int64_t> length = p.last_dim(x);
        if (!w || w->rank() != 1 || (length && w->shape()[0] != *length) || w->dtype() != dtype) continue;
        chain.push_back(scaled);
        Attributes attributes;
        attributes.set("axis", int64_t{-1});
        attributes.set("epsilon", static_cast<float>(*epsilon));
        rewriter.replace(chain, NodeIR{"RMSNormalization", p.node(scaled).name, {x, p.through_identity(weight)},
                                       p.node(scaled).outputs, attributes});
    }
}

}  // namespace infer::detail
