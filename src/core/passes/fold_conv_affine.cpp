// Conv by a constant weight, then a Mul and/or an Add by constants that vary along the output
// channels only: one Conv with the scale folded into W and the shift into its bias. Frameworks
// export a frozen batch norm this way (torchvision's FrozenBatchNorm2d in detection backbones:
// x · scale + shift after every convolution), where an exported BatchNormalization would have
// been folded into the convolution already. Left as they are, every such layer reads and
// writes its whole output twice more, and the Mul and Add between a Conv and its Relu keep
// the convolution from fusing with its epilogue or turning channel-last (a ResNet-50 FPN
// backbone on 2 Zen 3 cores: 53 Mul and 53 Add after its convolutions, every one in planes).
// W·s then the product rounds differently from the product then ·s: within a few ulps.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

#include <optional>
#include <vector>

namespace infer::detail {

namespace {

// The per-channel values of a float constant that broadcasts against a convolution's output
// of rank `rank` with `channels` channels along axis 1 and nowhere else (shape [1, M, 1, 1],
// [M, 1, 1], or one value), as `channels` floats; nothing for any other constant.
std::optional<std::vector<float>> per_channel(const Tensor* constant, size_t rank, int64_t channels) {
    if (!constant || constant->dtype() != DType::f32 || constant->rank() > rank) return std::nullopt;
    const Shape& shape = constant->shape();
    const size_t offset = rank - shape.rank();  // the constant's axis i lines up with the output's i + offset
    for (size_t i = 0; i < shape.rank(); ++i) {
        const bool channel_axis = i + offset == 1;
        if (shape[i] != 1 && !(channel_axis && shape[i] == channels)) return std::nullopt;
    }
    const std::vector<float> values = constant->to_vector<float>();
    if (values.size() == 1) return std::vector<float>(static_cast<size_t>(channels), values[0]);
    return values;
}

}  // namespace

void fold_conv_affine(Rewriter& rewriter, const PassContext&) {
    const OpId conv = op_id("Conv"), mul = op_id("Mul"), add = op_id("Add");
    const Pattern p(rewriter);
    for (size_t n = 0; n < p.graph().nodes.size(); ++n) {
        const int c = static_cast<int>(n);
        if (!p.is(c, conv)) continue;
        const NodeIR& node = p.node(c);
        const Tensor* w = p.constant(node.inputs[1]);
        const bool has_bias = node.inputs.size() > 2 && node.inputs[2] >= 0;
        const Tensor* b = has_bias ? p.constant(node.inputs[2]) : nullptr;
        const int y = node.outputs[0];
        const auto rank = p.rank(y);
        if (!w || w->dtype() != DType::f32 || w->rank() < 3 || (has_bias && (!b || b->dtype() != DType::f32)) || !rank)
            continue;
        const int64_t channels = w->shape()[0];
        if (channels <= 0) continue;  // an empty output has nothing to fold (and no weights per channel)
        std::vector<int> nodes{c};
        int result = y;
        std::vector<float> scale(static_cast<size_t>(channels), 1.0f), shift(static_cast<size_t>(channels), 0.0f);
        if (const int m = p.sole_reader(result, mul); m >= 0) {
            if (const auto s = per_channel(p.constant(Pattern::other_input(p.node(m), result)), *rank, channels)) {
                scale = *s;
                nodes.push_back(m);
                result = p.node(m).outputs[0];
            }
        }
        if (const int a = p.sole_reader(result, add); a >= 0) {
            if (const auto t = per_channel(p.constant(Pattern::other_input(p.node(a), result)), *rank, channels)) {
                shift = *t;
                nodes.push_back(a);
                result = p.node(a).outputs[0];
            }
        }
        if (nodes.size() == 1) continue;

        std::vector<float> weight = w->to_vector<float>();
        const size_t per_channel_weights = weight.size() / static_cast<size_t>(channels);
        for (size_t i = 0; i < weight.size(); ++i) weight[i] *= scale[i / per_channel_weights];
        std::vector<float> bias = b ? b->to_vector<float>() : std::vector<float>(static_cast<size_t>(channels), 0.0f);
        for (size_t m = 0; m < bias.size(); ++m) bias[m] = bias[m] * scale[m] + shift[m];

        NodeIR folded = node;
        folded.name = p.node(nodes.back()).name;
        folded.inputs.resize(3);
        folded.inputs[1] = rewriter.add_constant(rewriter.unique_name(node.name + "_folded_weight"),
                                                 Tensor::from_vector(weight, w->shape()));
        folded.inputs[2] = rewriter.add_constant(rewriter.unique_name(node.name + "_folded_bias"),
                                                 Tensor::from_vector(bias, Shape({channels})));
        folded.outputs = {result};
        rewriter.replace(nodes, folded);
    }
}

}  // namespace infer::detail
