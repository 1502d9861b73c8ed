// Conv, then + Z (a residual branch of the output's shape), then Relu, a Clip with constant
// bounds (MobileNet's ReLU6) or HardSwish (MobileNetV3's; where the target takes it): one
// FusedConv, which adds Z and applies the activation while each tile of the product is in cache,
// where a ResNet otherwise reads and writes every block's output twice more (an Add and a Relu
// per block). Either step alone fuses too; a Conv with nothing to absorb stays as it is.
// Backends without FusedConv keep the chain.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

#include <optional>
#include <utility>

namespace infer::detail {

namespace {

// Whether `z` is known to have the shape of `y`: the same dims, a dynamic one only where both
// have it (the batch, which a residual shares with its block's output).
bool same_shape(const Pattern& p, int y, int z) {
    if (!p.type(y).shape || !p.type(z).shape) return false;
    const Shape& a = *p.type(y).shape;
    const Shape& b = *p.type(z).shape;
    if (a.rank() != b.rank() || a.rank() == 0) return false;
    for (size_t i = 0; i < a.rank(); ++i)
        if (a[i] != b[i] || (a[i] == kDynamic && i != 0)) return false;
    return true;
}

// A Clip's bounds when each is known: a constant scalar input (opset 11 on), an attribute
// (before), or left out (no bound). Nothing when a bound is computed.
std::optional<std::pair<std::optional<double>, std::optional<double>>> clip_bounds(const Pattern& p, const NodeIR& clip) {
    std::pair<std::optional<double>, std::optional<double>> bounds;
    for (size_t i = 1; i <= 2; ++i) {
        std::optional<double>& bound = i == 1 ? bounds.first : bounds.second;
        const char* attribute = i == 1 ? "min" : "max";
        if (i < clip.inputs.size() && clip.inputs[i] >= 0) {
            bound = p.scalar(clip.inputs[i]);
            if (!bound) return std::nullopt;
        } else if (clip.attributes.has(attribute)) {
            bound = clip.attributes.get_float(attribute, 0.0f);
        }
    }
    return bounds;
}

}  // namespace

void fuse_conv_epilogue(Rewriter& rewriter, const PassContext& context) {
    if (!context.target_runs("FusedConv")) return;
    const OpId conv = op_id("Conv"), add = op_id("Add"), relu = op_id("Relu"), clip = op_id("Clip"),
               hard_swish = op_id("HardSwish");
    const Pattern p(rewriter);
    for (size_t n = 0; n < p.graph().nodes.size(); ++n) {
        const int c = static_cast<int>(n);
        if (!p.is(c, conv)) continue;
        std::vector<int> nodes{c};
        std::vector<int> inputs = p.node(c).inputs;
        inputs.resize(3, -1);  // X, W, B (absent: -1)
        int result = p.node(c).outputs[0];
        if (const int a = p.sole_reader(result, add); a >= 0) {
            const int z = Pattern::other_input(p.node(a), result);
            if (z != result && same_shape(p, result, z)) {
                nodes.push_back(a);
                inputs.push_back(z);
                result = p.node(a).outputs[0];
            }
        }
        Attributes attributes = p.node(c).attributes;
        if (const int r = p.sole_reader(result, relu); r >= 0) {
            nodes.push_back(r);
            attributes.set("activation", std::string("Relu"));
            result = p.node(r).outputs[0];
        } else if (const int k = p.sole_reader(result, clip); k >= 0) {
            if (const auto bounds = clip_bounds(p, p.node(k))) {
                nodes.push_back(k);
                attributes.set("activation", std::string("Clip"));
                if (bounds->first) attributes.set("clip_min", static_cast<float>(*bounds->first));
                if (bounds->second) attributes.set("clip_max", static_cast<float>(*bounds->second));
                result = p.node(k).outputs[0];
            }
        } else if (const int s = p.sole_reader(result, hard_swish); s >= 0) {
            Attributes with = attributes;
            with.set("activation", std::string("HardSwish"));
            // Only where the target's epilogue takes it (CUDA's clamps only).
            const NodeIR probe{"FusedConv", p.node(s).name, inputs, {p.node(s).outputs[0]}, with};
            if (context.target_supports(p.graph(), probe)) {
                nodes.push_back(s);
                attributes = std::move(with);
                result = p.node(s).outputs[0];
            }
        }
        if (nodes.size() == 1) continue;
        while (inputs.back() < 0) inputs.pop_back();  // no absent input at the end
        rewriter.replace(nodes, NodeIR{"FusedConv", p.node(nodes.back()).name, inputs, {result}, attributes});
    }
}

}  // namespace infer::detail
