// After the f16/bf16 lowering, the residual stream of a transformer stays in f32 while the
// products around it run in the low type, so every AddLayerNormalization sits between Casts:
// its Skip (a product's output) widened to f32 before it, its normalized output narrowed to the
// low type after it for the next products. Four casts a layer, each a pass over the activations
// and, on a GPU, a kernel launch: a decode step of GPT-2 small ran 48 of them. Here the node
// takes the low-type Skip as it is and writes Y in the low type (attribute y_dtype); its kernels
// widen and narrow in registers. Where the target cannot run that mixed form (its supports()
// declines), the casts stay. RMSNormalization (T5's norm) the same way, its X widened before it:
// its Scale stays f32, so the values are the f32 node's, rounded once into Y. In a post-norm
// encoder (BERT) Y is itself the residual stream, read in f32 by the next layer norm and through
// a Cast by the next products: the node then writes Y in f32 and once more in the low type
// (attribute low_y_dtype), and the product's output may be X rather than Skip (the sum commutes).
// In DistilBERT on an H100 at batch 512 the casts and the f32 layer norms took 7 of 29 ms.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

#include <algorithm>
#include <iterator>

namespace infer::detail {

namespace {

// The Cast node that makes `value` from a low-type value, or -1.
int widening_cast(const Pattern& p, int value) {
    const int cast = p.producer(value, op_id("Cast"));
    if (cast < 0 || p.type(value).dtype != DType::f32 || !is_16bit_float(p.type(p.node(cast).inputs[0]).dtype)) return -1;
    return cast;
}

// The Cast node that alone reads `value` and narrows it to a low type, or -1.
int narrowing_cast(const Pattern& p, int value) {
    const int cast = p.sole_reader(value, op_id("Cast"));
    if (cast < 0 || !is_16bit_float(p.type(p.node(cast).outputs[0]).dtype)) return -1;
    return cast;
}

// A Cast among the readers of `value` that narrows it to a low type, or -1.
int narrowing_reader(const Pattern& p, int value) {
    for (const int reader : p.readers(value))
        if (p.is(reader, op_id("Cast")) && is_16bit_float(p.type(p.node(reader).outputs[0]).dtype)) return reader;
    return -1;
}

}  // namespace

void fold_norm_casts(Rewriter& rewriter, const PassContext& context) {
    if (context.activation_dtype() == DType::f32) return;
    // Each norm and the input it may take in the low type.
    const std::pair<OpId, size_t> norms[] = {{op_id("AddLayerNormalization"), 1}, {op_id("RMSNormalization"), 0}};
    const Pattern p(rewriter);
    for (size_t i = 0; i < p.graph().nodes.size(); ++i) {
        const int n = static_cast<int>(i);
        const auto norm = std::find_if(std::begin(norms), std::end(norms), [&](const auto& entry) { return p.is(n, entry.first); });
        // A node a run found out of f16's range is kept in f32 whole (keep_f32), Y included.
        if (norm == std::end(norms) || p.type(p.node(n).inputs[0]).dtype != DType::f32 ||
            p.node(n).attributes.has("y_dtype") || p.node(n).attributes.has("low_y_dtype") ||
            context.keep_f32.count(p.node(n).name))
            continue;
        const NodeIR& node = p.node(n);
        const bool add_norm = p.is(n, op_id("AddLayerNormalization"));
        const size_t low_input = norm->second;
        NodeIR folded = node;
        int widened = node.inputs[low_input];
        int widen = widening_cast(p, widened);
        // X + Skip commutes (both kernels broadcast either): where the product is X and the
        // residual stream Skip (BERT's export adds them in that order), the two swap.
        if (widen < 0 && add_norm && p.type(node.inputs[1]).dtype == DType::f32) {
            widen = widening_cast(p, node.inputs[0]);
            if (widen >= 0) {
                widened = node.inputs[0];
                std::swap(folded.inputs[0], folded.inputs[1]);
            }
        }
        const int narrow = narrowing_cast(p, node.outputs[0]);
        // Y read in f32 too (it is the residual stream of a post-norm encoder) and narrowed for
        // the products: the node writes both, the narrowed one in place of the sum it does not keep.
        const int shared_narrow =
            narrow < 0 && add_norm && node.outputs.size() == 1 ? narrowing_reader(p, node.outputs[0]) : -1;
        if (widen < 0 && narrow < 0 && shared_narrow < 0) continue;

        std::vector<int> replaced{n};
        if (widen >= 0) {
            folded.inputs[low_input] = p.node(widen).inputs[0];
            // The Cast goes too when nothing else reads what it made.
            if (p.read_only_by(widened, {n})) replaced.insert(replaced.begin(), widen);
        }
        if (narrow >= 0) {
            folded.outputs[0] = p.node(narrow).outputs[0];
            folded.attributes.set("y_dtype", std::string(dtype_name(p.type(folded.outputs[0]).dtype)));
            replaced.push_back(narrow);
        }
        if (shared_narrow >= 0) {
            folded.outputs.push_back(p.node(shared_narrow).outputs[0]);
            folded.attributes.set("low_y_dtype", std::string(dtype_name(p.type(folded.outputs[1]).dtype)));
            replaced.push_back(shared_narrow);
        }
        if (!context.target_supports(p.graph(), folded)) continue;
        rewriter.replace(replaced, folded);
    }
}

}  // namespace infer::detail
