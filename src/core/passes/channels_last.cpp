// Between 8-bit convolutions, each pixel's channels together: ONNX's planes [N, C, H, W] become
// [N, H, W, C] for the stretch of a quantized CNN the target runs that way, with one Transpose
// where the stretch begins and one where a value leaves it. A convolution on the packed int8
// kernel reads each output position's patch as one row of channels and writes its tiles a
// position at a time; in planes it had to turn its input channel-last and its output back at
// every layer (a tenth of an int8 ResNet-50's time on one core went to those byte transposes).
//
// Taken, in graph order:
//  - QLinearConv with a constant weight, one group and a 4-D input → ChannelsLastQLinearConv
//    (always: the kernel would otherwise pay for both transposes itself);
//  - MaxPool of a 4-D 8-bit input made channel-last, without Indices → ChannelsLastMaxPool;
//  - QuantizedAdd of two 4-D operands, one of them made channel-last (elementwise: only the
//    layout of its operands and result changes; a 4-D operand that broadcasts is transposed
//    the same way, so it still broadcasts along the right axes).
// Each form only where the target has a kernel for it; values read outside the stretch or
// returned by the graph get their planes back from a Transpose.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

#include <algorithm>

namespace infer::detail {

namespace {

const std::vector<int64_t> kToChannelsLast{0, 2, 3, 1}, kToPlanes{0, 3, 1, 2};

NodeIR transpose(const std::string& name, int from, int to, const std::vector<int64_t>& perm) {
    Attributes attributes;
    attributes.set("perm", perm);
    return {"Transpose", name, {from}, {to}, attributes};
}

}  // namespace

void channels_last_integer(Rewriter& rewriter, const PassContext& context) {
    const OpId qlinear_conv = op_id("QLinearConv"), max_pool = op_id("MaxPool"), quantized_add = op_id("QuantizedAdd");
    const Pattern p(rewriter);
    const GraphIR& g = p.graph();
    const auto four_d = [&](int value) { return value >= 0 && p.type(value).shape && p.type(value).shape->rank() == 4; };
    const auto integer8 = [&](int value) { return p.type(value).dtype == DType::u8 || p.type(value).dtype == DType::i8; };

    // Which nodes turn channel-last (graph order: a node's choice looks at its producers').
    std::vector<bool> made_channels_last(g.values.size(), false);
    std::vector<int> converted;
    std::vector<NodeIR> forms;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const int n = static_cast<int>(i);
        const NodeIR& node = g.nodes[i];
        NodeIR form = node;
        if (p.is(n, qlinear_conv)) {
            const Tensor* w = p.constant(node.inputs[3]);
            if (!four_d(node.inputs[0]) || !w || w->rank() != 4 || node.attributes.get_int("group", 1) != 1) continue;
            form.op = "ChannelsLastQLinearConv";
        } else if (p.is(n, max_pool)) {
            const int x = node.inputs[0];
            if (node.outputs.size() != 1 || !four_d(x) || !integer8(x) || !made_channels_last[x]) continue;
            form.op = "ChannelsLastMaxPool";  // storage_order, which only Indices read, stays unread
        } else if (p.is(n, quantized_add)) {
            const int a = node.inputs[0], b = node.inputs[3];
            if (!four_d(a) || !four_d(b) || !four_d(node.outputs[0]) || (!made_channels_last[a] && !made_channels_last[b])) continue;
        } else {
            continue;
        }
        // The 8-bit kernels are keyed by X's dtype (u8 or i8).
        if (!context.target.kernels().find(form.op, p.type(node.inputs[0]).dtype) || !context.target_supports(g, form)) continue;
        converted.push_back(n);
        forms.push_back(std::move(form));
        for (int out : node.outputs) made_channels_last[out] = true;
    }

    // The rewrite: each converted node reads and writes channel-last values of its own.
    std::vector<int> channels_last(g.values.size(), -1);  // a value's channel-last twin
    std::vector<bool> is_converted(g.nodes.size(), false);
    for (int n : converted) is_converted[n] = true;
    for (size_t c = 0; c < converted.size(); ++c) {
        const int n = converted[c];
        NodeIR& form = forms[c];
        std::vector<NodeIR> made;
        const std::vector<size_t> layout_inputs = form.op == "QuantizedAdd" ? std::vector<size_t>{0, 3} : std::vector<size_t>{0};
        for (size_t slot : layout_inputs) {
            const int v = form.inputs[slot];
            if (channels_last[v] < 0) {  // a value from outside the stretch (its producers' turn came first)
                channels_last[v] = rewriter.add_value(g.values[v].name + "/channels_last");
                made.push_back(transpose(rewriter.unique_name(g.values[v].name + "/to_channels_last"), v, channels_last[v],
                                         kToChannelsLast));
            }
            form.inputs[slot] = channels_last[v];
        }
        std::vector<NodeIR> back;
        for (int& out : form.outputs) {
            const int original = out;
            out = channels_last[original] = rewriter.add_value(g.values[original].name + "/channels_last");
            bool read_outside = std::find(g.outputs.begin(), g.outputs.end(), original) != g.outputs.end();
            for (int reader : p.readers(original)) read_outside = read_outside || !is_converted[reader];
            if (read_outside)
                back.push_back(transpose(rewriter.unique_name(g.values[original].name + "/to_planes"), out, original, kToPlanes));
        }
        made.push_back(std::move(form));
        for (NodeIR& t : back) made.push_back(std::move(t));
        rewriter.replace({n}, std::move(made));
    }
}

}  // namespace infer::detail
