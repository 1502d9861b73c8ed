// Plans the nodes that take or make sequences and optionals (value_structures.hpp): each
// sequence becomes the list of its elements' values, each optional the value it holds or none.
#include "core/planner/value_structures.hpp"

#include "core/ops/op_schema.hpp"
#include "core/ops/shapes_control.hpp"
#include "core/ops/shapes_sequence.hpp"

#include <infer/error.hpp>
#include <infer/graph.hpp>

#include <algorithm>

namespace infer::detail {

namespace {

class StructuralNode {
public:
    StructuralNode(const NodeIR& node, StructurePlanner& planner) : node_(node), p_(planner) {
        for (int id : node.inputs) {
            types_.push_back(id >= 0 ? p_.type_of(id) : TensorType{});
            values_.push_back(id >= 0 ? p_.known(id) : nullptr);
        }
    }

    void plan() {
        const InferenceContext ctx(node_, types_, values_);
        const std::string& op = node_.op;
        if (op == "SequenceConstruct") return sequence_out({node_.inputs.begin(), node_.inputs.end()}, p_.type_of(node_.inputs[0]).dtype);
        if (op == "SequenceEmpty") return sequence_out({}, dtype_from_onnx(node_.attributes.get_int("dtype", 1)));
        if (op == "SequenceInsert") return insert(ctx);
        if (op == "SequenceErase") return erase(ctx);
        if (op == "SequenceAt") {
            const ValueStructure& s = sequence(0);
            p_.same_as(output(), s.elements[sequence_position(ctx, position(1), s.elements.size(), false)]);
            return;
        }
        if (op == "SequenceLength")
            return p_.set_known(output(), Tensor::from_vector(std::vector<int64_t>{static_cast<int64_t>(sequence(0).elements.size())},
                                                              Shape(std::vector<int64_t>{})));
        if (op == "SplitToSequence") return split(ctx);
        if (op == "ConcatFromSequence") return concat(ctx);
        if (op == "SequenceMap") return map(ctx);
        if (op == "Optional") return optional();
        if (op == "OptionalHasElement") {
            const bool present = node_.inputs.empty() || node_.inputs[0] < 0 ? false
                                 : types_[0].is_plain_tensor()              ? true
                                                                            : p_.structure_of(node_.inputs[0]).present;
            Tensor flag = Tensor::empty(DType::boolean, Shape(std::vector<int64_t>{}));
            *static_cast<uint8_t*>(flag.raw_data()) = present;
            return p_.set_known(output(), flag);
        }
        if (op == "OptionalGetElement" || op == "Identity") return pass_on();
        if (op == "If") return plan_if();
        if (op == "Loop") return plan_loop();
        ctx.fail("is not an op on sequences or optionals");
    }

private:
    int output(size_t i = 0) const { return node_.outputs.at(i); }

    const ValueStructure& sequence(size_t input) const {
        const ValueStructure& s = p_.structure_of(node_.inputs.at(input));
        if (s.kind != ValueKind::sequence || !s.present)
            throw InvalidArgument(where() + ": input " + std::to_string(input) + " holds no sequence");
        return s;
    }

    std::string where() const { return "node '" + node_.name + "' (" + node_.op + ")"; }

    // A position input's value; `fallback` when the input is absent.
    int64_t position(size_t input, std::optional<int64_t> fallback = std::nullopt) const {
        if (input >= node_.inputs.size() || node_.inputs[input] < 0) {
            if (fallback) return *fallback;
            throw ModelError(where() + ": the position is missing");
        }
        return known_ints(input).at(0);
    }

    std::vector<int64_t> known_ints(size_t input) const {
        if (!values_[input])
            throw Unsupported(where() + ": input " + std::to_string(input) +
                              " is computed at run time; infer plans sequences whose positions and split sizes are "
                              "known when the plan is made (constants, values derived from shapes, graph inputs)");
        return values_[input]->to_vector<int64_t>();
    }

    void sequence_out(std::vector<int> elements, DType dtype, size_t out = 0) {
        for (int id : elements) {
            const TensorType& t = p_.type_of(id);
            if (!t.is_plain_tensor()) throw Unsupported(where() + ": sequences of sequences or optionals are not supported");
            if (t.dtype != dtype)
                throw ModelError(where() + ": an element is " + std::string(dtype_name(t.dtype)) + ", the sequence holds " +
                                 std::string(dtype_name(dtype)));
        }
        p_.set_structure(output(out), {ValueKind::sequence, false, true, dtype, std::move(elements)});
    }

    void insert(const InferenceContext& ctx) {
        const ValueStructure& s = sequence(0);
        std::vector<int> elements = s.elements;
        const int64_t n = static_cast<int64_t>(elements.size());
        const size_t at = sequence_position(ctx, position(2, n), elements.size(), true);
        elements.insert(elements.begin() + static_cast<std::ptrdiff_t>(at), node_.inputs[1]);
        sequence_out(std::move(elements), s.dtype);
    }

    void erase(const InferenceContext& ctx) {
        const ValueStructure& s = sequence(0);
        std::vector<int> elements = s.elements;
        if (elements.empty()) throw InvalidArgument(where() + ": the sequence is empty");
        const size_t at = sequence_position(ctx, position(1, -1), elements.size(), false);
        elements.erase(elements.begin() + static_cast<std::ptrdiff_t>(at));
        sequence_out(std::move(elements), s.dtype);
    }

    void split(const InferenceContext& ctx) {
        const int input = node_.inputs[0];
        const TensorType type = p_.type_of(input);  // a copy: new values may move the planner's types
        const Shape shape = type.shape.value();
        const size_t axis = shape.normalize_axis(node_.attributes.get_int("axis", 0));
        const bool has_split = node_.inputs.size() > 1 && node_.inputs[1] >= 0;
        std::vector<Shape> pieces;
        if (has_split) {
            pieces = split_to_sequence_shapes(ctx, shape, known_ints(1), types_[1].shape.value().rank() == 0);
        } else {
            // Pieces of one, the axis kept for the Split and dropped afterwards unless keepdims.
            pieces = split_to_sequence_shapes(ctx, shape, std::vector<int64_t>(static_cast<size_t>(shape[axis]), 1), false);
        }
        std::vector<int> elements;
        for (const Shape& piece : pieces) elements.push_back(p_.new_value({type.dtype, piece}));
        if (!elements.empty()) p_.place_kernel(node_, "Split", node_.name, {input}, elements);
        if (!has_split && !node_.attributes.get_int("keepdims", 1)) {
            std::vector<int64_t> dims = shape.dims();
            dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(axis));
            for (int& element : elements) element = p_.reshaped(element, Shape(dims));
        }
        sequence_out(std::move(elements), type.dtype);
    }

    void concat(const InferenceContext& ctx) {
        const ValueStructure& s = sequence(0);
        if (s.elements.empty()) throw InvalidArgument(where() + ": the sequence is empty");
        const bool new_axis = node_.attributes.get_int("new_axis", 0) != 0;
        const Shape first = p_.type_of(s.elements[0]).shape.value();
        const size_t rank = first.rank() + (new_axis ? 1 : 0);
        const size_t axis = Shape(std::vector<int64_t>(rank, 1)).normalize_axis(node_.attributes.get_int("axis"));
        std::vector<int> parts;
        std::vector<int64_t> dims;
        for (int element : s.elements) {
            Shape shape = p_.type_of(element).shape.value();
            if (new_axis) {
                std::vector<int64_t> d = shape.dims();
                d.insert(d.begin() + static_cast<std::ptrdiff_t>(axis), 1);
                shape = Shape(d);
                element = p_.reshaped(element, shape);
            }
            if (dims.empty()) {
                dims = shape.dims();
            } else {
                if (shape.rank() != dims.size()) ctx.fail("the elements differ in rank");
                for (size_t d = 0; d < dims.size(); ++d)
                    if (d != axis && shape[d] != dims[d])
                        ctx.fail("the elements differ in dimension " + std::to_string(d) + " (" + first.to_string() +
                                 " against " + shape.to_string() + ")");
                dims[axis] += shape[axis];
            }
            parts.push_back(element);
        }
        p_.declare(output(), {s.dtype, Shape(dims)});
        p_.place_kernel(node_, "Concat", node_.name, parts, {output()});
    }

    // SequenceMap: the body once per element of the sequence inputs, tensor inputs given whole.
    void map(const InferenceContext& ctx) {
        size_t length = 0;
        bool first = true;
        for (size_t i = 0; i < node_.inputs.size(); ++i) {
            if (types_[i].kind != ValueKind::sequence) continue;
            const size_t n = sequence(i).elements.size();
            if (!first && n != length)
                throw InvalidArgument(where() + ": the sequences differ in length (" + std::to_string(length) + " and " +
                                      std::to_string(n) + ")");
            length = n;
            first = false;
        }
        const GraphIR& body = node_.attributes.get_graph("body").ir();
        std::vector<std::vector<int>> results(node_.outputs.size());
        for (size_t e = 0; e < length; ++e) {
            std::vector<int> inputs;
            std::vector<TensorType> input_types;
            std::vector<const Tensor*> input_values;
            for (size_t i = 0; i < node_.inputs.size(); ++i) {
                inputs.push_back(types_[i].kind == ValueKind::sequence ? sequence(i).elements[e] : node_.inputs[i]);
                input_types.push_back(p_.type_of(inputs.back()));
                input_values.push_back(nullptr);
            }
            const std::vector<TensorType> out_types = subgraph_output_types(body, input_types, input_values, node_.name);
            if (out_types.size() != node_.outputs.size()) ctx.fail("the body returns another number of values");
            std::vector<int> outputs;
            for (const TensorType& t : out_types) {
                if (!t.is_plain_tensor() || !t.shape || !t.shape->is_static())
                    throw Unsupported(where() + ": the body's outputs must be tensors of shapes known when the plan is made");
                outputs.push_back(p_.new_value(t));
            }
            p_.place_kernel(node_, "SequenceMap", node_.name + "[" + std::to_string(e) + "]", inputs, outputs);
            for (size_t k = 0; k < outputs.size(); ++k) results[k].push_back(outputs[k]);
        }
        for (size_t k = 0; k < results.size(); ++k) sequence_out(results[k], p_.type_of(output(k)).dtype, k);
    }

    void optional() {
        if (node_.inputs.empty() || node_.inputs[0] < 0) {
            const TensorType& declared = p_.type_of(output());
            return p_.set_structure(output(), {declared.kind, true, false, declared.dtype, {}});
        }
        const int input = node_.inputs[0];
        if (types_[0].is_plain_tensor())
            return p_.set_structure(output(), {ValueKind::tensor, true, true, types_[0].dtype, {input}});
        ValueStructure s = p_.structure_of(input);
        s.optional = true;
        p_.set_structure(output(), std::move(s));
    }

    // Identity of a sequence or optional, and OptionalGetElement: the same contents.
    void pass_on() {
        const int input = node_.inputs[0];
        if (types_[0].is_plain_tensor()) return p_.same_as(output(), input);
        ValueStructure s = p_.structure_of(input);
        if (node_.op == "OptionalGetElement") {
            if (!s.present) throw InvalidArgument(where() + ": the optional input holds no value");
            if (s.kind == ValueKind::tensor) return p_.same_as(output(), s.elements.at(0));
            s.optional = false;
        }
        p_.set_structure(output(), std::move(s));
    }

    // Output `out` is `value`: the same tensor, or the same sequence or optional.
    void bind_result(int out, int value) {
        if (p_.type_of(value).is_plain_tensor()) p_.same_as(out, value);
        else p_.set_structure(out, p_.structure_of(value));
    }

    // The branch the condition takes, planned inline with the node's implicit inputs.
    void plan_if() {
        if (!values_[0]) throw Unsupported(where() + ": the condition is not known when the plan is made");
        const bool taken = values_[0]->to_vector<double>().at(0) != 0;
        const GraphIR& branch = node_.attributes.get_graph(taken ? "then_branch" : "else_branch").ir();
        std::vector<int> inputs(node_.inputs.begin() + 1, node_.inputs.end());
        std::vector<TensorType> types(types_.begin() + 1, types_.end());
        const auto typed = typed_subgraph(branch, types, {}, node_.name);
        const std::vector<int> results = p_.plan_inline(typed, inputs, node_.name + "/");
        if (results.size() != node_.outputs.size()) throw ModelError(where() + ": the branch returns another number of values");
        for (size_t k = 0; k < results.size(); ++k) bind_result(output(k), results[k]);
    }

    // Loop: its iterations inline, each body typed with its counter and carried values.
    void plan_loop() {
        constexpr int64_t kMostIterations = 4096;  // each iteration adds its nodes to the plan
        const size_t n = node_.inputs.size();
        const size_t implicit = implicit_input_count(node_.attributes, n);
        const size_t carried = n - 2 - implicit;
        if (n < 1 || node_.inputs[0] < 0 || !values_[0])
            throw Unsupported(where() + ": a Loop that carries sequences or optionals needs a trip count known when "
                                        "the plan is made");
        const int64_t trips = values_[0]->to_vector<int64_t>().at(0);
        bool condition = true;
        if (n > 1 && node_.inputs[1] >= 0) {
            if (!values_[1]) throw Unsupported(where() + ": the condition is not known when the plan is made");
            condition = values_[1]->to_vector<double>().at(0) != 0;
        }
        if (trips > kMostIterations)
            throw Unsupported(where() + ": " + std::to_string(trips) + " iterations; a Loop that carries sequences is "
                                        "planned iteration by iteration, up to " + std::to_string(kMostIterations));
        std::vector<int> state(node_.inputs.begin() + 2, node_.inputs.begin() + static_cast<std::ptrdiff_t>(2 + carried));
        const std::vector<int> outer(node_.inputs.end() - static_cast<std::ptrdiff_t>(implicit), node_.inputs.end());
        const GraphIR& body = node_.attributes.get_graph("body").ir();
        const size_t scans = node_.outputs.size() - carried;
        std::vector<std::vector<int>> slices(scans);
        const Shape scalar(std::vector<int64_t>{});
        for (int64_t i = 0; i < trips && condition; ++i) {
            const Tensor counter = Tensor::from_vector(std::vector<int64_t>{i}, scalar);
            Tensor running = Tensor::empty(DType::boolean, scalar);
            *static_cast<uint8_t*>(running.raw_data()) = 1;
            std::vector<TensorType> types{{DType::i64, scalar}, {DType::boolean, scalar}};
            std::vector<const Tensor*> values{&counter, &running};
            std::vector<int> inputs;
            for (int id : state) inputs.push_back(id);
            for (int id : outer) inputs.push_back(id);
            for (int id : inputs) {
                types.push_back(p_.type_of(id));
                values.push_back(nullptr);
            }
            const auto typed = typed_subgraph(body, types, values, node_.name);
            const std::vector<int> results =
                p_.plan_inline(typed, inputs, node_.name + "/" + std::to_string(i) + "/");
            if (results.size() != 1 + carried + scans) throw ModelError(where() + ": the body returns another number of values");
            const Tensor* next = p_.known(results[0]);
            if (!next) throw Unsupported(where() + ": the body's condition is computed at run time");
            condition = next->to_vector<double>().at(0) != 0;
            state.assign(results.begin() + 1, results.begin() + static_cast<std::ptrdiff_t>(1 + carried));
            for (size_t k = 0; k < scans; ++k) slices[k].push_back(results[1 + carried + k]);
        }
        for (size_t k = 0; k < carried; ++k) bind_result(output(k), state[k]);
        for (size_t k = 0; k < scans; ++k) stack(output(carried + k), slices[k]);
    }

    // A Loop's scan output: its slices stacked along a new first axis.
    void stack(int out, const std::vector<int>& slices) {
        static const NodeIR kAxis0{"Concat", "", {}, {}, [] {
                                       Attributes a;
                                       a.set("axis", int64_t{0});
                                       return a;
                                   }(),
                                   kUnknownOp};
        if (slices.empty()) throw Unsupported(where() + ": a scan output of no iterations");
        std::vector<int> parts;
        Shape slice = p_.type_of(slices[0]).shape.value();
        for (int id : slices) {
            if (p_.type_of(id).shape != slice) throw ModelError(where() + ": the scan output's slices differ in shape");
            std::vector<int64_t> dims{1};
            dims.insert(dims.end(), slice.begin(), slice.end());
            parts.push_back(p_.reshaped(id, Shape(dims)));
        }
        std::vector<int64_t> dims{static_cast<int64_t>(slices.size())};
        dims.insert(dims.end(), slice.begin(), slice.end());
        p_.declare(out, {p_.type_of(slices[0]).dtype, Shape(dims)});
        p_.place_kernel(kAxis0, "Concat", node_.name + "/scan", parts, {out});
    }

    const NodeIR& node_;
    StructurePlanner& p_;
    std::vector<TensorType> types_;
    std::vector<const Tensor*> values_;
};

// Whether a Loop of tensors is planned iteration by iteration too, so that its body's nodes run
// on the plan's device: when the plan knows how many iterations run (a known trip count and
// condition, and a body that passes its condition through) and the unrolled nodes stay few.
// Longer loops, and loops that end on a value they compute, run as a nested CPU plan.
bool runs_inline(const NodeIR& loop, const std::vector<const Tensor*>& input_values) {
    constexpr int64_t kMostInlineNodes = 1024;
    if (input_values.size() < 2 || !input_values[0]) return false;
    if (loop.inputs[1] >= 0 && (!input_values[1] || input_values[1]->to_vector<double>().at(0) == 0)) return false;
    const GraphIR& body = loop.attributes.get_graph("body").ir();
    const int64_t trips = input_values[0]->to_vector<int64_t>().at(0);
    return trips >= 1 && condition_passes_through(body) &&
           trips * static_cast<int64_t>(std::max<size_t>(body.nodes.size(), 1)) <= kMostInlineNodes;
}

}  // namespace

bool is_structural(const NodeIR& node, const std::vector<TensorType>& input_types,
                   const std::vector<const Tensor*>& input_values, const std::vector<TensorType>& output_types) {
    static const OpId if_op = op_id("If"), loop_op = op_id("Loop");
    if (node.id == if_op && !input_values.empty() && input_values[0]) return true;
    if (node.id == loop_op && runs_inline(node, input_values)) return true;
    if (!op_schema(node.id).output_structure) return false;
    for (size_t i = 0; i < node.inputs.size(); ++i)
        if (node.inputs[i] >= 0 && !input_types[i].is_plain_tensor()) return true;
    for (const TensorType& type : output_types)
        if (!type.is_plain_tensor()) return true;
    // The sequence family's own ops are never folded (OptionalHasElement of no input).
    return !op_schema(node.id).traits.foldable;
}

void plan_structural_node(const NodeIR& node, StructurePlanner& planner) { StructuralNode(node, planner).plan(); }

}  // namespace infer::detail
