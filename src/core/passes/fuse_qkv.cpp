// An attention's Q, K and V projections of one input (every self-attention: BERT, DistilBERT,
// GPT-2, ViT) as one product by the three weights side by side, [K, 3·N], whose output
// [B, S, 3·N] the Attention node reads in place (attribute qkv_packed): one launch instead of
// three, the input read once, and a product three times as wide, which keeps a GPU's tensor
// cores busier at small batches. Cross-attention (K and V of another input) stays as it is.
// At precision int8 the packed product quantizes to the same integers as the three would: the
// weight per column, the shared input per row (dynamic) or with that input's calibrated range,
// which calibration (keeping the products apart) recorded under each projection's name; the
// input is quantized once instead of three times.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"
#include "core/shared_weights.hpp"

#include <cstring>
#include <vector>

namespace infer::detail {

namespace {

// A projection the fusion can take: MatMul or FusedMatMul without activation, by a 2-D constant
// weight, with a constant bias row or none.
struct Projection {
    int node = -1;
    int input = -1;
    const Tensor* weight = nullptr;
    const Tensor* bias = nullptr;
};

Projection projection_of(const Pattern& p, int value, int attention) {
    Projection result;
    const int made_by_matmul = p.producer(value, op_id("MatMul"));
    const int n = made_by_matmul >= 0 ? made_by_matmul : p.producer(value, op_id("FusedMatMul"));
    if (n < 0 || !p.read_only_by(value, {attention})) return result;
    const NodeIR& node = p.node(n);
    const bool matmul = made_by_matmul >= 0;
    if (!matmul && !node.attributes.get_string("activation", "").empty()) return result;
    const Tensor* weight = p.constant(node.inputs[1]);
    if (!weight || weight->rank() != 2) return result;
    const bool has_bias = !matmul && node.inputs.size() > 2 && node.inputs[2] >= 0;
    const Tensor* bias = has_bias ? p.constant(node.inputs[2]) : nullptr;
    if (has_bias && !bias) return result;
    return {n, node.inputs[0], weight, bias};
}

// The tensors side by side along their last axis (rows of `rows` each), by bytes.
Tensor join_rows(const std::vector<const Tensor*>& parts, int64_t rows) {
    int64_t width = 0;
    for (const Tensor* part : parts) width += part->shape()[part->rank() - 1];
    const DType type = parts[0]->dtype();
    const size_t element = dtype_size(type);
    Shape shape = parts[0]->rank() == 2 ? Shape({rows, width}) : Shape({width});
    Tensor joined = Tensor::empty(type, shape);
    std::vector<Tensor> dense;
    for (const Tensor* part : parts) dense.push_back(part->contiguous());
    auto* out = static_cast<char*>(joined.raw_data());
    for (int64_t r = 0; r < rows; ++r)
        for (const Tensor& part : dense) {
            const size_t bytes = static_cast<size_t>(part.shape()[part.rank() - 1]) * element;
            std::memcpy(out, static_cast<const char*>(part.raw_data()) + r * bytes, bytes);
            out += bytes;
        }
    return joined;
}

// join_rows, shared with every other session of the same graph while one holds it: the joined
// weight is then also narrowed (lower_precision) and uploaded once, where each session made,
// converted and uploaded its own (BERT-base: 85 MB of f32 weights a session).
Tensor side_by_side(const std::vector<const Tensor*>& parts, int64_t rows) {
    std::vector<Tensor> sources;
    for (const Tensor* part : parts) sources.push_back(*part);
    return SharedWeights::find_or_make(sources, "joined-rows", [&] { return join_rows(parts, rows); });
}

}  // namespace

void fuse_qkv(Rewriter& rewriter, const PassContext& context) {
    if (context.separate_products) return;
    const Pattern p(rewriter);
    const OpId attention = op_id("Attention");
    for (size_t i = 0; i < p.graph().nodes.size(); ++i) {
        const int n = static_cast<int>(i);
        if (!p.is(n, attention) || p.node(n).attributes.get_int("qkv_packed", 0) != 0) continue;
        const NodeIR& node = p.node(n);
        if (node.inputs.size() < 3 || node.inputs[1] < 0 || node.inputs[2] < 0) continue;
        const int q = node.inputs[0], k = node.inputs[1], v = node.inputs[2];
        if (q == k || k == v || q == v) continue;
        const Projection pq = projection_of(p, q, n), pk = projection_of(p, k, n), pv = projection_of(p, v, n);
        if (pq.node < 0 || pk.node < 0 || pv.node < 0) continue;
        if (pk.input != pq.input || pv.input != pq.input) continue;  // self-attention only
        const Shape& wq = pq.weight->shape();
        bool alike = true;
        for (const Projection* other : {&pk, &pv})
            alike = alike && other->weight->shape() == wq && other->weight->dtype() == pq.weight->dtype() &&
                    (other->bias != nullptr) == (pq.bias != nullptr) &&
                    (!pq.bias || (other->bias->shape() == pq.bias->shape() && other->bias->dtype() == pq.bias->dtype()));
        if (!alike || (pq.bias && pq.bias->shape() != Shape({wq[1]}))) continue;

        NodeIR packed_attention = node;
        packed_attention.inputs = {q, -1, -1};
        if (node.inputs.size() > 3) packed_attention.inputs.push_back(node.inputs[3]);
        packed_attention.attributes.set("qkv_packed", int64_t{1});
        // A backend that reads Q, K and V only as three tensors keeps them.
        if (!context.target_supports(p.graph(), packed_attention)) continue;

        const std::string name = p.node(pq.node).name + "_qkv";
        std::vector<int> inputs{pq.input, rewriter.add_constant(rewriter.unique_name(name + "_weight"),
                                                                side_by_side({pq.weight, pk.weight, pv.weight}, wq[0]))};
        if (pq.bias)
            inputs.push_back(rewriter.add_constant(rewriter.unique_name(name + "_bias"),
                                                   side_by_side({pq.bias, pk.bias, pv.bias}, 1)));
        const int packed = rewriter.add_value(rewriter.unique_name(name));
        NodeIR product{"FusedMatMul", rewriter.unique_name(name), inputs, {packed}, {}};
        if (context.precision == Precision::int8) set_calibrated_range(product, context, p.node(pq.node).name);
        packed_attention.inputs[0] = packed;
        rewriter.replace({pq.node, pk.node, pv.node, n}, std::vector<NodeIR>{product, packed_attention});
    }
}

}  // namespace infer::detail
