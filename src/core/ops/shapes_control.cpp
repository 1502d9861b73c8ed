// Shapes of the control-flow family. A branch or body is typed afresh for each node and plan:
// its inputs take the node's input types (and values, where known), and validation infers the
// rest, so a subgraph's outputs follow whatever the enclosing graph feeds it.
#include "core/ops/shapes_control.hpp"

#include "core/planner/plan.hpp"

#include <infer/graph.hpp>

#include <algorithm>
#include <optional>

namespace infer::detail {

namespace {

const TensorType kScalarI64{DType::i64, Shape(std::vector<int64_t>{})};
const TensorType kScalarBool{DType::boolean, Shape(std::vector<int64_t>{})};

struct Typed {
    std::vector<TensorType> inputs;
    std::vector<const Tensor*> values;
};

// The node's inputs [first, first + count) and its implicit inputs, as a subgraph sees them.
Typed node_inputs(const InferenceContext& ctx, size_t first, size_t count, size_t implicit) {
    Typed t;
    const size_t n = ctx.node().inputs.size();
    const auto take = [&](size_t i) {
        if (!ctx.has_input(i)) ctx.fail("input " + std::to_string(i) + " is absent");
        TensorType type = ctx.type(i);
        t.inputs.push_back(type);
        const Tensor* value = nullptr;
        try {
            value = &ctx.value(i);
        } catch (const ShapeUnknown&) {
        }
        t.values.push_back(value);
    };
    for (size_t i = first; i < first + count; ++i) take(i);
    for (size_t i = n - implicit; i < n; ++i) take(i);
    return t;
}

// A subgraph's output types, as the node's attribute `attribute` gives them.
std::vector<TensorType> output_types(const InferenceContext& ctx, const char* attribute, const Typed& t) {
    return subgraph_output_types(ctx.attrs().get_graph(attribute).ir(), t.inputs, t.values, ctx.node().name);
}

const Shape& known_shape(const TensorType& type) {
    if (!type.shape) throw ShapeUnknown{};
    return *type.shape;
}

// If's outputs: the taken branch's when the condition is known, else the branches' when they
// agree.
std::vector<TensorType> if_outputs(const InferenceContext& ctx) {
    const size_t implicit = implicit_input_count(ctx.attrs(), ctx.node().inputs.size());
    if (ctx.node().inputs.size() != 1 + implicit) ctx.fail("If takes one input, the condition");
    const Typed t = node_inputs(ctx, 1, 0, implicit);
    std::optional<bool> cond;
    try {
        cond = ctx.value(0).to_vector<double>().at(0) != 0;
    } catch (const ShapeUnknown&) {
    }
    if (cond) return output_types(ctx, *cond ? "then_branch" : "else_branch", t);
    const auto then_types = output_types(ctx, "then_branch", t), else_types = output_types(ctx, "else_branch", t);
    if (then_types.size() != else_types.size()) ctx.fail("the branches differ in their number of outputs");
    for (size_t i = 0; i < then_types.size(); ++i) {
        if (then_types[i].dtype != else_types[i].dtype) ctx.fail("the branches' output " + std::to_string(i) + " differ in dtype");
        if (then_types[i].kind != else_types[i].kind || then_types[i].optional != else_types[i].optional)
            ctx.fail("the branches' output " + std::to_string(i) + " differ in kind (tensor, sequence, optional)");
        if (then_types[i].shape != else_types[i].shape) throw ShapeUnknown{};
    }
    return then_types;
}

// Loop: body(iteration, cond, carried...) → (cond, carried..., scan slices...).
struct LoopTypes {
    std::vector<TensorType> body_outputs;
    size_t carried = 0;
};
LoopTypes loop_types(const InferenceContext& ctx) {
    const size_t n = ctx.node().inputs.size();
    const size_t implicit = implicit_input_count(ctx.attrs(), n);
    if (n < 2 + implicit) ctx.fail("Loop takes the trip count and the condition (either may be empty) first");
    LoopTypes l;
    l.carried = n - 2 - implicit;
    Typed t = node_inputs(ctx, 2, l.carried, implicit);
    t.inputs.insert(t.inputs.begin(), {kScalarI64, kScalarBool});
    // The body is typed as its first iteration sees it (counter 0, condition true); a body
    // whose shapes change from one iteration to the next fails at run time, naming the value.
    static const Tensor first_iteration = Tensor::from_vector(std::vector<int64_t>{0}, kScalarI64.shape.value());
    static const Tensor running = [] {
        Tensor t = Tensor::empty(DType::boolean, kScalarBool.shape.value());
        *static_cast<uint8_t*>(t.raw_data()) = 1;
        return t;
    }();
    t.values.insert(t.values.begin(), {&first_iteration, &running});
    // Carried values change each iteration too: only their types reach the body.
    for (size_t i = 2; i < 2 + l.carried; ++i) t.values[i] = nullptr;
    l.body_outputs = output_types(ctx, "body", t);
    if (l.body_outputs.size() < 1 + l.carried || ctx.node().outputs.size() != l.body_outputs.size() - 1)
        ctx.fail("the body must return the condition, " + std::to_string(l.carried) +
                 " carried values and the scan outputs, one per output of the node");
    return l;
}

// `shape` with `extent` put in front.
Shape with_axis0(int64_t extent, const Shape& shape) {
    std::vector<int64_t> dims{extent};
    dims.insert(dims.end(), shape.begin(), shape.end());
    return Shape(dims);
}

// Scan: body(states..., one slice of each scan input...) → (states..., scan output slices...).
struct ScanTypes {
    std::vector<TensorType> outputs;  // the node's
    size_t states = 0;
};
ScanTypes scan_types(const InferenceContext& ctx) {
    const size_t n = ctx.node().inputs.size();
    const size_t implicit = implicit_input_count(ctx.attrs(), n);
    const size_t own = n - implicit;
    const size_t scans = scan_input_count(ctx.attrs(), own, ctx.node().name);
    ScanTypes s;
    s.states = own - scans;
    Typed t = node_inputs(ctx, 0, own, implicit);
    // Takes axis 0 off inputs [first, last), which must have it and agree on it; returns it.
    const auto strip_axis0 = [&](size_t first, size_t last, const std::string& what) {
        int64_t extent = -1;
        for (size_t i = first; i < last; ++i) {
            const Shape& full = known_shape(t.inputs[i]);
            if (full.rank() == 0) ctx.fail(what + " " + std::to_string(i) + " must have rank >= 1");
            if (extent >= 0 && full[0] != extent) ctx.fail("the " + what + "s differ in axis 0");
            extent = full[0];
            t.inputs[i].shape = Shape(std::vector<int64_t>(full.begin() + 1, full.end()));
            t.values[i] = nullptr;
        }
        return extent;
    };
    // Opset 8's form (batch_axis, set on import): every own input has a batch axis first, and
    // each batch entry is scanned on its own; the body sees one entry.
    const bool batched = ctx.attrs().get_int("batch_axis", 0) != 0;
    const int64_t batch = batched ? strip_axis0(0, own, "input (opset 8: batch axis)") : -1;
    const int64_t length = strip_axis0(s.states, own, "scan input");
    for (size_t i = 0; i < s.states; ++i) t.values[i] = nullptr;  // change each iteration
    const std::vector<TensorType> body = output_types(ctx, "body", t);
    if (body.size() != ctx.node().outputs.size() || body.size() < s.states)
        ctx.fail("the body must return the " + std::to_string(s.states) + " states and one slice per scan output");
    for (size_t i = 0; i < body.size(); ++i) {
        TensorType out = body[i];
        if (i < s.states) {
            const bool both_static = out.shape && t.inputs[i].shape && out.shape->is_static() && t.inputs[i].shape->is_static();
            if (out.dtype != ctx.dtype(i) || (both_static && out.shape != t.inputs[i].shape))
                ctx.fail("state " + std::to_string(i) + " changes type in the body");
            out.shape = t.inputs[i].shape;
        } else if (out.shape) {
            out.shape = with_axis0(length, *out.shape);
        }
        if (batched && out.shape) out.shape = with_axis0(batch, *out.shape);
        s.outputs.push_back(out);
    }
    return s;
}

}  // namespace

size_t implicit_input_count(const Attributes& attrs, size_t node_inputs) {
    const int64_t count = attrs.get_int("implicit_inputs", 0);
    if (count < 0 || static_cast<size_t>(count) > node_inputs)
        throw ModelError("implicit_inputs " + std::to_string(count) + " exceeds the node's " +
                         std::to_string(node_inputs) + " inputs");
    return static_cast<size_t>(count);
}

std::shared_ptr<GraphIR> typed_subgraph(const GraphIR& graph, const std::vector<TensorType>& inputs,
                                        const std::vector<const Tensor*>& values, const std::string& node) {
    if (graph.inputs.size() != inputs.size())
        throw ModelError("node '" + node + "': its subgraph '" + graph.name + "' has " +
                         std::to_string(graph.inputs.size()) + " inputs, the node gives " +
                         std::to_string(inputs.size()));
    auto typed = std::make_shared<GraphIR>(graph);
    std::vector<int> kept;
    for (size_t i = 0; i < inputs.size(); ++i) {
        const int id = graph.inputs[i];
        typed->values[id].type = inputs[i];
        if (i < values.size() && values[i]) typed->constants[id] = *values[i];
        else kept.push_back(id);
    }
    typed->inputs = kept;
    validate(*typed);
    return typed;
}

// Once every input shape is known (when a plan is made), the subgraph is planned for the CPU
// without running it: planning folds what the known values decide (a slice by the loop
// counter), which validation alone cannot.
std::vector<TensorType> subgraph_output_types(const GraphIR& graph, const std::vector<TensorType>& inputs,
                                              const std::vector<const Tensor*>& values, const std::string& node) {
    const auto typed = typed_subgraph(graph, inputs, values, node);
    std::vector<TensorType> out;
    for (int id : typed->outputs) out.push_back(typed->values[id].type);
    for (const TensorType& type : out)
        if (!type.is_plain_tensor()) return out;  // plans list a sequence's elements, not it
    InputSignature signature;
    for (int id : typed->inputs) {
        const TensorType& type = typed->values[id].type;
        if (!type.is_plain_tensor() || !type.shape || !type.shape->is_static()) return out;
        signature.dtypes.push_back(type.dtype);
        signature.shapes.push_back(*type.shape);
        signature.devices.push_back(Device::CPU);
    }
    WeightCache weights;
    std::shared_ptr<const Plan> plan;
    try {
        plan = make_plan(typed, signature, SessionOptions{}, weights, true);
    } catch (const Unsupported&) {
        return out;  // shapes decided by values computed inside: validation's types stand
    }
    for (size_t i = 0; i < out.size(); ++i) {
        const Slot& slot = plan->slots[plan->output_slots[i]];
        out[i] = {slot.dtype, slot.shape};
    }
    return out;
}

bool condition_passes_through(const GraphIR& body) {
    int id = body.outputs.at(0);
    for (bool changed = true; changed;) {
        changed = false;
        for (const NodeIR& node : body.nodes)
            if (node.op == "Identity" && node.outputs.at(0) == id && !node.inputs.empty()) {
                id = node.inputs[0];
                changed = true;
            }
    }
    if (body.inputs.size() > 1 && id == body.inputs[1]) return true;
    auto constant = body.constants.find(id);
    return constant != body.constants.end() && constant->second.numel() == 1 &&
           constant->second.to_vector<double>()[0] != 0;
}

size_t scan_input_count(const Attributes& attrs, size_t own_inputs, const std::string& node) {
    const int64_t m = attrs.get_int("num_scan_inputs");
    if (m < 1 || static_cast<size_t>(m) > own_inputs)
        throw ModelError("node '" + node + "' (Scan): num_scan_inputs " + std::to_string(m) + " must be 1 to " +
                         std::to_string(own_inputs));
    for (const char* name : {"scan_input_axes", "scan_output_axes", "scan_input_directions", "scan_output_directions"})
        if (attrs.has(name))
            for (int64_t v : attrs.get_ints(name))
                if (v != 0) throw Unsupported("node '" + node + "' (Scan): " + name + " other than 0 is not supported");
    return static_cast<size_t>(m);
}

DType dtype_of_control_output(const InferenceContext& ctx, size_t output) {
    try {
        if (ctx.node().op == "If") return if_outputs(ctx).at(output).dtype;
        if (ctx.node().op == "Loop") return loop_types(ctx).body_outputs.at(output + 1).dtype;
        return scan_types(ctx).outputs.at(output).dtype;
    } catch (const ShapeUnknown&) {
        return DType::f32;  // unknown until the shapes are
    }
}

void structure_of_control_output(const InferenceContext& ctx, size_t output, TensorType& type) {
    TensorType made;
    try {
        if (ctx.node().op == "If") {
            // The then branch's kinds (if_outputs checks that the else branch's agree).
            const size_t implicit = implicit_input_count(ctx.attrs(), ctx.node().inputs.size());
            made = output_types(ctx, "then_branch", node_inputs(ctx, 1, 0, implicit)).at(output);
        }
        else if (ctx.node().op == "Loop") made = loop_types(ctx).body_outputs.at(output + 1);
    } catch (const ShapeUnknown&) {
        return;  // the kind of an output follows the branch, which validation cannot type yet
    }
    // A scan output of a Loop stacks tensors; carried values and If's outputs are what the
    // body or branch makes.
    if (ctx.node().op == "Loop" && output >= ctx.node().inputs.size() - 2 - implicit_input_count(ctx.attrs(), ctx.node().inputs.size()))
        return;
    type.kind = made.kind;
    type.optional = made.optional;
}

std::vector<Shape> shape_if(const InferenceContext& ctx) {
    std::vector<Shape> shapes;
    for (const TensorType& t : if_outputs(ctx)) shapes.push_back(known_shape(t));
    return shapes;
}

std::vector<Shape> shape_loop(const InferenceContext& ctx) {
    const LoopTypes l = loop_types(ctx);
    const size_t scans = l.body_outputs.size() - 1 - l.carried;
    bool carried_stable = true;
    for (size_t i = 0; i < l.carried; ++i) {
        const TensorType& in = l.body_outputs[1 + i];
        if (in.dtype != ctx.dtype(2 + i)) ctx.fail("carried value " + std::to_string(i) + " changes dtype in the body");
        carried_stable = carried_stable && in.shape && *in.shape == ctx.shape(2 + i);
    }
    std::vector<Shape> shapes;
    for (size_t i = 0; i < l.carried; ++i) shapes.push_back(ctx.shape(2 + i));
    if (scans == 0 && carried_stable) return shapes;
    // Otherwise the output shapes follow the number of iterations, known only when the trip
    // count is and the body does not end the loop early.
    if (!ctx.has_input(0) || !condition_passes_through(ctx.attrs().get_graph("body").ir())) throw ShapeUnknown{};
    const bool runs = !ctx.has_input(1) || ctx.value(1).to_vector<double>().at(0) != 0;
    const int64_t iterations = runs ? std::max<int64_t>(ctx.ints(0).at(0), 0) : 0;
    if (!carried_stable && iterations > 0) throw ShapeUnknown{};
    for (size_t i = 0; i < scans; ++i) {
        std::vector<int64_t> dims{iterations};
        const Shape& slice = known_shape(l.body_outputs[1 + l.carried + i]);
        dims.insert(dims.end(), slice.begin(), slice.end());
        shapes.push_back(Shape(dims));
    }
    return shapes;
}

}  // namespace infer::detail

namespace infer::detail {

std::vector<Shape> shape_scan(const InferenceContext& ctx) {
    std::vector<Shape> shapes;
    for (const TensorType& t : scan_types(ctx).outputs) shapes.push_back(known_shape(t));
    return shapes;
}

}  // namespace infer::detail
