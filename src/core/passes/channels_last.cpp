// Between convolutions, each pixel's channels together: ONNX's planes [N, C, H, W] become
// [N, H, W, C] for the stretch of a CNN the target runs that way, with one Transpose where the
// stretch begins and one where a value leaves it. A convolution on the CPU's products reads
// each output position's patch as one row of channels and writes a position's output channels
// together; in planes an 8-bit convolution had to turn its input channel-last and its output
// back at every layer (a tenth of an int8 ResNet-50's time on one core), and an f32 one filled
// its 64-position tiles poorly where a late stage has 49 positions.
//
// Taken, in graph order:
//  - QLinearConv with a constant weight, one group and a 4-D input → ChannelsLastQLinearConv
//    (always: the kernel would otherwise pay for both transposes itself);
//  - Conv and FusedConv of a 4-D float input with a constant weight, one group or one channel
//    per group (depthwise) → ChannelsLastConv (its residual Z channel-last too);
//  - MaxPool of a 4-D 8-bit or float input made channel-last, without Indices → ChannelsLastMaxPool;
//  - QuantizedAdd of two 4-D operands, one of them made channel-last (elementwise: only the
//    layout of its operands and result changes; a 4-D operand that broadcasts is transposed
//    the same way, so it still broadcasts along the right axes);
//  - on the CPU, a float Add of two 4-D operands both made channel-last, and a float Resize of
//    a 4-D X made channel-last, its scales or sizes permuted alike (a Gather where they are
//    computed): an FPN's top-down path, lateral + upsampled, between its convolutions;
//  - on the CPU, what precision int8 makes of a float convolution (passes/quantize_convolutions):
//    DynamicQuantizeLinear of a 4-D X made channel-last (its Y only: the scale and zero point
//    are one value each), ConvIntegerToFloat of such an X with a constant weight and one group
//    → ChannelsLastConvIntegerToFloat, and the Relu or Clip after it; else the integer layers
//    would stay in planes, and the float layers between them too (each would need two
//    Transposes): MobileNetV2's depthwise layers, in planes, took 2.8 of an int8 run's 4.4 ms.
// Each form only where the target has a kernel for it (keyed by X's dtype: the CPU's float
// forms are f32 only, so a convolution the precision lowered to bf16 stays as it is there;
// CUDA's take f16 and bf16 too); values read outside the stretch or returned by the graph get
// their planes back from a Transpose. A float convolution gains less than the
// transposes around it cost when its neighbours stay in planes (EfficientNet's squeeze-excite
// blocks and SiLU between every pair): the float forms are taken only when they add few
// Transposes for their number (at most one per two convolutions, and one more), else none.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

#include <algorithm>
#include <set>

namespace infer::detail {

namespace {

const std::vector<int64_t> kToChannelsLast{0, 2, 3, 1}, kToPlanes{0, 3, 1, 2};

NodeIR transpose(const std::string& name, int from, int to, const std::vector<int64_t>& perm) {
    Attributes attributes;
    attributes.set("perm", perm);
    return {"Transpose", name, {from}, {to}, attributes};
}

bool is_integer8(DType t) { return t == DType::u8 || t == DType::i8; }

struct Choice {
    std::vector<int> converted;           // nodes, in graph order
    std::vector<NodeIR> forms;            // their channel-last forms
    std::vector<bool> made_channels_last; // per value: written by a converted node
};

// The value slots of a form that are channel-last: X, and a residual or QuantizedAdd's B.
std::vector<size_t> layout_inputs(const NodeIR& form) {
    if (form.op == "QuantizedAdd") return {0, 3};
    if (form.op == "Add") return {0, 1};
    if (form.op == "ChannelsLastConv" && form.inputs.size() > 3 && form.inputs[3] >= 0) return {0, 3};
    return {0};
}

// The outputs of a form that are channel-last: all, but DynamicQuantizeLinear's scale and zero
// point (one value each).
std::vector<size_t> layout_outputs(const NodeIR& form) {
    if (form.op == "DynamicQuantizeLinear") return {0};
    std::vector<size_t> all(form.outputs.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
}

// The forms that read or write float values: they are taken only where they pay (float_forms_pay).
bool is_float_form(const NodeIR& form, DType x) {
    static const std::set<std::string> ops{"ChannelsLastConv", "ChannelsLastConvIntegerToFloat", "Add", "Resize",
                                           "DynamicQuantizeLinear", "Relu", "Clip"};
    return ops.count(form.op) || (form.op == "ChannelsLastMaxPool" && !is_integer8(x));
}

Choice choose(const Pattern& p, const PassContext& context, bool with_float) {
    const OpId qlinear_conv = op_id("QLinearConv"), conv = op_id("Conv"), fused_conv = op_id("FusedConv"),
               max_pool = op_id("MaxPool"), quantized_add = op_id("QuantizedAdd"), add = op_id("Add"),
               resize = op_id("Resize"), conv_integer_to_float = op_id("ConvIntegerToFloat"),
               dynamic_quantize = op_id("DynamicQuantizeLinear"), relu = op_id("Relu"), clip = op_id("Clip");
    // Float Add and Resize in the stretch: on the CPU only so far (not yet measured on CUDA).
    const bool layout_free_forms = with_float && context.target.name() == "cpu";
    const GraphIR& g = p.graph();
    const auto four_d = [&](int value) { return value >= 0 && p.type(value).shape && p.type(value).shape->rank() == 4; };
    const auto integer8 = [&](int value) { return is_integer8(p.type(value).dtype); };
    const auto floating = [&](int value) {
        const DType t = p.type(value).dtype;
        return t == DType::f32 || t == DType::f16 || t == DType::bf16;
    };

    // Which nodes turn channel-last (graph order: a node's choice looks at its producers').
    Choice c;
    c.made_channels_last.assign(g.values.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
        const int n = static_cast<int>(i);
        const NodeIR& node = g.nodes[i];
        NodeIR form = node;
        if (p.is(n, qlinear_conv)) {
            const Tensor* w = p.constant(node.inputs[3]);
            if (!four_d(node.inputs[0]) || !w || w->rank() != 4 || node.attributes.get_int("group", 1) != 1) continue;
            form.op = "ChannelsLastQLinearConv";
        } else if (p.is(n, conv) || p.is(n, fused_conv)) {
            const Tensor* w = p.constant(node.inputs[1]);
            const int64_t group = node.attributes.get_int("group", 1);
            if (!with_float || !four_d(node.inputs[0]) || !floating(node.inputs[0]) || !w || w->rank() != 4 ||
                node.outputs.size() != 1)
                continue;
            if (group != 1 && !(w->shape()[1] == 1 && w->shape()[0] == group)) continue;  // one group, or depthwise
            form.op = "ChannelsLastConv";
        } else if (p.is(n, conv_integer_to_float)) {
            // Only with X from the stretch (its DynamicQuantizeLinear): a QDQ file's
            // ConvIntegerToFloat between QuantizeLinears would add two Transposes of its own,
            // which its in-epilogue transposes in planes do not cost.
            const Tensor* w = p.constant(node.inputs[1]);
            if (!layout_free_forms || !four_d(node.inputs[0]) || !c.made_channels_last[node.inputs[0]] || !w ||
                w->rank() != 4 || node.attributes.get_int("group", 1) != 1)
                continue;
            form.op = "ChannelsLastConvIntegerToFloat";
        } else if (p.is(n, dynamic_quantize) || p.is(n, relu) || p.is(n, clip)) {
            const int x = node.inputs[0];
            if (!layout_free_forms || !floating(x) || !four_d(x) || !c.made_channels_last[x]) continue;
        } else if (p.is(n, max_pool)) {
            const int x = node.inputs[0];
            if (node.outputs.size() != 1 || !four_d(x) || !(integer8(x) || floating(x)) || !c.made_channels_last[x]) continue;
            form.op = "ChannelsLastMaxPool";  // storage_order, which only Indices read, stays unread
        } else if (p.is(n, quantized_add)) {
            const int a = node.inputs[0], b = node.inputs[3];
            if (!four_d(a) || !four_d(b) || !four_d(node.outputs[0]) ||
                (!c.made_channels_last[a] && !c.made_channels_last[b]))
                continue;
        } else if (p.is(n, add)) {
            const int a = node.inputs[0], b = node.inputs[1];
            if (!layout_free_forms || !floating(a) || !four_d(node.outputs[0]) || !c.made_channels_last[a] ||
                !c.made_channels_last[b])
                continue;
        } else if (p.is(n, resize)) {
            const int x = node.inputs[0];
            const auto absent_or_empty = [&](size_t i) {
                if (i >= node.inputs.size() || node.inputs[i] < 0) return true;
                const Tensor* t = p.constant(node.inputs[i]);
                return t && t->numel() == 0;
            };
            if (!layout_free_forms || !floating(x) || !four_d(x) || !c.made_channels_last[x] || node.outputs.size() != 1 ||
                !absent_or_empty(1) || node.attributes.has("axes"))
                continue;
        } else {
            continue;
        }
        if (!context.target.kernels().find(form.op, p.type(node.inputs[0]).dtype) || !context.target_supports(g, form)) continue;
        const std::vector<size_t> slots = layout_inputs(form);
        if (!std::all_of(slots.begin(), slots.end(), [&](size_t slot) { return four_d(form.inputs[slot]); })) continue;
        for (size_t slot : layout_outputs(form)) c.made_channels_last[node.outputs[slot]] = true;
        c.converted.push_back(n);
        c.forms.push_back(std::move(form));
    }
    return c;
}

// A Shape node of the whole shape (no start or end), which reads a converted node's value
// through the channel-last twin instead (rewrite_shape_reader): the FPN's upsampling sizes.
bool whole_shape(const Pattern& p, int n) {
    const NodeIR& node = p.node(n);
    return p.is(n, op_id("Shape")) && !node.attributes.has("start") && !node.attributes.has("end");
}

// Whether a value written by a converted node is read in planes too (or returned).
bool read_outside(const Pattern& p, const std::vector<bool>& is_converted, int value) {
    bool outside = std::find(p.graph().outputs.begin(), p.graph().outputs.end(), value) != p.graph().outputs.end();
    for (int reader : p.readers(value)) outside = outside || (!is_converted[reader] && !whole_shape(p, reader));
    return outside;
}

// Shape(value in planes) as Shape(its channel-last twin) with the dims put back in planes order.
void rewrite_shape_reader(const Pattern& p, Rewriter& rewriter, int n, int twin) {
    const NodeIR& node = p.node(n);
    const int dims = rewriter.add_value(rewriter.unique_name(node.name + "/channels_last"));
    const int order = rewriter.add_constant(rewriter.unique_name(node.name + "/to_planes"), Tensor::from_vector(kToPlanes, {4}));
    rewriter.replace({n}, std::vector<NodeIR>{{"Shape", rewriter.unique_name(node.name + "/channels_last"), {twin}, {dims}, {}},
                                              {"Gather", node.name, {dims, order}, {node.outputs[0]}, {}}});
}

// The Transposes a choice's float nodes add (values entering them in planes, values they write
// that are read in planes), against how many float convolutions it turns: a Transpose is one pass
// over a tensor, a convolution many; ResNet-50 and MobileNetV2 need 2 for 53 and 52, a block
// of SiLU-separated convolutions 2 per convolution, a lone convolution 2. At most one per two
// convolutions, and one more.
bool float_forms_pay(const Pattern& p, const Choice& c) {
    const GraphIR& g = p.graph();
    std::vector<bool> is_converted(g.nodes.size(), false), entering(g.values.size(), false);
    for (int n : c.converted) is_converted[n] = true;
    int64_t convolutions = 0, transposes = 0;
    for (size_t i = 0; i < c.converted.size(); ++i) {
        const NodeIR& form = c.forms[i];
        if (!is_float_form(form, p.type(form.inputs[0]).dtype)) continue;
        convolutions += form.op == "ChannelsLastConv" || form.op == "ChannelsLastConvIntegerToFloat";
        for (size_t slot : layout_inputs(form)) {
            const int v = form.inputs[slot];
            if (!c.made_channels_last[v] && !entering[v]) {
                entering[v] = true;
                ++transposes;
            }
        }
        for (size_t slot : layout_outputs(form)) transposes += read_outside(p, is_converted, form.outputs[slot]);
    }
    return transposes <= convolutions / 2 + 1;
}

// A channel-last Resize's scales (input 2) and sizes (input 3) in [N, H, W, C] order: constants
// permuted here, computed ones by a Gather before it (added to `made`).
void permute_resize_extents(const Pattern& p, Rewriter& rewriter, NodeIR& form, std::vector<NodeIR>& made) {
    for (size_t i = 2; i < form.inputs.size(); ++i) {
        const int v = form.inputs[i];
        if (v < 0) continue;
        // Named after the Resize: a sizes tensor of the wrong length then fails in a node that
        // says whose sizes they were.
        const std::string name = rewriter.unique_name(form.name + (i == 2 ? "/scales" : "/sizes") + "_channels_last");
        if (const Tensor* t = p.constant(v)) {
            if (t->numel() == 0) continue;
            if (t->numel() != 4) return;  // Resize itself reports the wrong count
            if (t->dtype() == DType::f32) {
                const std::vector<float> e = t->to_vector<float>();
                form.inputs[i] = rewriter.add_constant(name, Tensor::from_vector(std::vector<float>{e[0], e[2], e[3], e[1]}, {4}));
            } else {
                const std::vector<int64_t> e = t->to_vector<int64_t>();
                form.inputs[i] = rewriter.add_constant(name, Tensor::from_vector(std::vector<int64_t>{e[0], e[2], e[3], e[1]}, {4}));
            }
            continue;
        }
        const int order = rewriter.add_constant(rewriter.unique_name(name + "/order"),
                                                Tensor::from_vector(kToChannelsLast, {4}));
        form.inputs[i] = rewriter.add_value(name);
        made.push_back({"Gather", rewriter.unique_name(name), {v, order}, {form.inputs[i]}, {}});
    }
}

}  // namespace

void channels_last(Rewriter& rewriter, const PassContext& context) {
    const Pattern p(rewriter);
    const GraphIR& g = p.graph();
    Choice choice = choose(p, context, true);
    if (!float_forms_pay(p, choice)) choice = choose(p, context, false);
    const std::vector<int>& converted = choice.converted;
    std::vector<NodeIR>& forms = choice.forms;

    // The rewrite: each converted node reads and writes channel-last values of its own.
    std::vector<int> channels_last(g.values.size(), -1);  // a value's channel-last twin
    std::vector<bool> is_converted(g.nodes.size(), false);
    for (int n : converted) is_converted[n] = true;
    for (size_t c = 0; c < converted.size(); ++c) {
        const int n = converted[c];
        NodeIR& form = forms[c];
        std::vector<NodeIR> made;
        for (size_t slot : layout_inputs(form)) {
            const int v = form.inputs[slot];
            if (channels_last[v] < 0) {  // a value from outside the stretch (its producers' turn came first)
                channels_last[v] = rewriter.add_value(g.values[v].name + "/channels_last");
                made.push_back(transpose(rewriter.unique_name(g.values[v].name + "/to_channels_last"), v, channels_last[v],
                                         kToChannelsLast));
            }
            form.inputs[slot] = channels_last[v];
        }
        if (form.op == "Resize") permute_resize_extents(p, rewriter, form, made);
        std::vector<NodeIR> back;
        for (size_t slot : layout_outputs(form)) {
            int& out = form.outputs[slot];
            const int original = out;
            out = channels_last[original] = rewriter.add_value(g.values[original].name + "/channels_last");
            if (read_outside(p, is_converted, original))
                back.push_back(transpose(rewriter.unique_name(g.values[original].name + "/to_planes"), out, original, kToPlanes));
            for (int reader : p.readers(original))
                if (!is_converted[reader] && whole_shape(p, reader)) rewrite_shape_reader(p, rewriter, reader, out);
        }
        made.push_back(std::move(form));
        for (NodeIR& t : back) made.push_back(std::move(t));
        rewriter.replace({n}, std::move(made));
    }
}

}  // namespace infer::detail
