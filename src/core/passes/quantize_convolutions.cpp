// precision = int8: a convolution by a constant f32 weight, of one group and at least
// kLeastChannels input and output channels, becomes
//   DynamicQuantizeLinear(X) -> x_q (u8), x_scale, x_zero
//   Mul(x_scale, w_scale)     -> scale [M]
//   ConvIntegerToFloat(x_q, W_q, scale, x_zero, -, B)
// with W quantized here, symmetric per output channel to s8 (w_scale[m] = max |W[m]| / 127):
// the same integer convolution a QDQ model's convolutions run on (the packed int8 kernel, the
// scale and bias in its epilogue). It runs before the conv epilogue fusion, which takes Conv
// only, so a ReLU or residual Add after a quantized convolution stays a node of its own.
// Left in f32: grouped and depthwise convolutions (the integer kernel for them is the direct
// loop, slower than the float one) and convolutions of few channels. Quantizing X is a pass over
// its C channels and dequantizing Y one over its M, while the product saves work in proportion
// to C·M: with fewer than 64 of either, the passes cost more than int8 saves. An image's 3
// colours (the first layer, also the most sensitive to rounding) are far below; so were
// MobileNetV2's expansions from 16 or 24 channels and projections to 16–32, which made
// precision = int8 slower than f32 there (6.3–6.5 ms against 4.8–5.2 on 2 cores of an AMX Xeon;
// 4.7–4.8 with them left in f32). ResNet-50's convolutions all have 64 or more.
// Activations are quantized per run (dynamic): calibration covers the products only so far.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

#include <algorithm>
#include <cmath>

namespace infer::detail {

namespace {

constexpr int64_t kLeastChannels = 64;

struct QuantizedWeight {
    Tensor values;  // s8, W's shape
    Tensor scales;  // f32 [M]
};

QuantizedWeight quantize_per_channel(const Tensor& w) {
    const int64_t m = w.shape()[0], per = w.numel() / m;
    const std::vector<float> values = w.to_vector<float>();
    std::vector<int8_t> quantized(values.size());
    std::vector<float> scales(static_cast<size_t>(m));
    for (int64_t o = 0; o < m; ++o) {
        const auto first = values.begin() + o * per;
        float largest = 0.0f;
        for (auto v = first; v != first + per; ++v) largest = std::max(largest, std::fabs(*v));
        const float scale = largest > 0.0f ? largest / 127.0f : 1.0f;  // an all-zero channel stays zero
        scales[static_cast<size_t>(o)] = scale;
        for (int64_t i = 0; i < per; ++i)
            quantized[static_cast<size_t>(o * per + i)] =
                static_cast<int8_t>(std::clamp(std::nearbyint(first[i] / scale), -127.0f, 127.0f));
    }
    return {Tensor::from_vector(quantized, w.shape()), Tensor::from_vector(scales, Shape{m})};
}

}  // namespace

void quantize_convolutions(Rewriter& rewriter, const PassContext& context) {
    if (context.precision != Precision::int8) return;
    // Only where the target runs the integer convolution (the CPU); elsewhere they stay float.
    if (!context.target.kernels().find("ConvIntegerToFloat", DType::u8) ||
        !context.target.kernels().find("DynamicQuantizeLinear", DType::f32))
        return;
    const OpId conv = op_id("Conv");
    const Pattern p(rewriter);
    for (size_t n = 0; n < p.graph().nodes.size(); ++n) {
        const int c = static_cast<int>(n);
        if (!p.is(c, conv)) continue;
        const NodeIR& node = p.node(c);
        const int weight_value = p.through_identity(node.inputs[1]);
        const Tensor* weight = p.constant(weight_value);
        if (!weight || weight->dtype() != DType::f32 || weight->rank() < 3 || p.type(node.inputs[0]).dtype != DType::f32)
            continue;
        if (node.attributes.get_int("group", 1) != 1 || weight->shape()[1] < kLeastChannels ||
            weight->shape()[0] < kLeastChannels)
            continue;
        const bool has_bias = node.inputs.size() > 2 && node.inputs[2] >= 0;
        if (has_bias && p.type(node.inputs[2]).dtype != DType::f32) continue;

        const QuantizedWeight w = quantize_per_channel(*weight);
        const int w_q = rewriter.add_constant(node.name + "/weight_s8", w.values);
        const int w_scale = rewriter.add_constant(node.name + "/weight_scale", w.scales);
        const int x_q = rewriter.add_value(node.name + "/x_u8");
        const int x_scale = rewriter.add_value(node.name + "/x_scale");
        const int x_zero = rewriter.add_value(node.name + "/x_zero");
        const int scale = rewriter.add_value(node.name + "/scale");
        NodeIR quantize{"DynamicQuantizeLinear", rewriter.unique_name(node.name + "/quantize_x"), {node.inputs[0]},
                        {x_q, x_scale, x_zero}, {}};
        NodeIR combine{"Mul", rewriter.unique_name(node.name + "/scale"), {x_scale, w_scale}, {scale}, {}};
        NodeIR integer{"ConvIntegerToFloat", node.name, {x_q, w_q, scale, x_zero, -1, has_bias ? node.inputs[2] : -1},
                       node.outputs, node.attributes};
        while (integer.inputs.back() < 0) integer.inputs.pop_back();
        rewriter.replace({c}, {std::move(quantize), std::move(combine), std::move(integer)});
    }
}

}  // namespace infer::detail
