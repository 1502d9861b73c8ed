// After the f16/bf16 lowering, the residual stream of a transformer stays in f32 while the
// products around it run in the low type, so every AddLayerNormalization sits between Casts:
// its Skip (a product's output) widened to f32 before it, its normalized output narrowed to the
// low type after it for the next products. Four casts a layer, each a pass over the activations
// and, on a GPU, a kernel launch: a decode step of GPT-2 small ran 48 of them. Here the node
// takes the low-type Skip as it is and writes Y in the low type (attribute y_dtype); its kernels
// widen and narrow in registers. Where the target cannot run that mixed form (its supports()
// declines), the casts stay. RMSNormalization (T5's norm) the same way, its X widened before it:
// its Scale stays f32, so the values are the f32 node's, rounded once into Y.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

#include <algorithm>
#include <iterator>

namespace infer::detail {

namespace {

bool is_low(DType t) { return t == DType::f16 || t == DType::bf16; }

// The Cast node that makes `value` from a low-type value, or -1.
int widening_cast(const Pattern& p, int value) {
    const int cast = p.producer(value, op_id("Cast"));
    if (cast < 0 || p.type(value).dtype != DType::f32 || !is_low(p.type(p.node(cast).inputs[0]).dtype)) return -1;
    return cast;
}

// The Cast node that alone reads `value` and narrows it to a low type, or -1.
int narrowing_cast(const Pattern& p, int value) {
    const int cast = p.sole_reader(value, op_id("Cast"));
    if (cast < 0 || !is_low(p.type(p.node(cast).outputs[0]).dtype)) return -1;
    return cast;
}

}  // namespace

void fold_norm_casts(Rewriter& rewriter, const PassContext& context) {
    if (context.precision != Precision::f16 && context.precision != Precision::bf16) return;
    // Each norm and the input it may take in the low type.
    const std::pair<OpId, size_t> norms[] = {{op_id("AddLayerNormalization"), 1}, {op_id("RMSNormalization"), 0}};
    const Pattern p(rewriter);
    for (size_t i = 0; i < p.graph().nodes.size(); ++i) {
        const int n = static_cast<int>(i);
        const auto norm = std::find_if(std::begin(norms), std::end(norms), [&](const auto& entry) { return p.is(n, entry.first); });
        // A node a run found out of f16's range is kept in f32 whole (keep_f32), Y included.
        if (norm == std::end(norms) || p.type(p.node(n).inputs[0]).dtype != DType::f32 ||
            p.node(n).attributes.has("y_dtype") || context.keep_f32.count(p.node(n).name))
            continue;
        const NodeIR& node = p.node(n);
        const size_t low_input = norm->second;
        const int widen = widening_cast(p, node.inputs[low_input]);
        const int narrow = narrowing_cast(p, node.outputs[0]);
        if (widen < 0 && narrow < 0) continue;

        NodeIR folded = node;
        std::vector<int> replaced{n};
        if (widen >= 0) {
            folded.inputs[low_input] = p.node(widen).inputs[0];
            // The Cast goes too when nothing else reads what it made.
            if (p.read_only_by(node.inputs[low_input], {n})) replaced.insert(replaced.begin(), widen);
        }
        if (narrow >= 0) {
            folded.outputs[0] = p.node(narrow).outputs[0];
            folded.attributes.set("y_dtype", std::string(dtype_name(p.type(folded.outputs[0]).dtype)));
            replaced.push_back(narrow);
        }
        if (!context.target_supports(p.graph(), folded)) continue;
        rewriter.replace(replaced, folded);
    }
}

}  // namespace infer::detail
