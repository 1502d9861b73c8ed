// Types of the sequence family at validation: element dtypes are checked and carried, element
// shapes are carried where the elements share one (a dimension they differ in is dynamic).
#include "core/ops/shapes_sequence.hpp"

#include "core/ops/shapes_control.hpp"

#include <infer/graph.hpp>

namespace infer::detail {

namespace {

const TensorType& sequence_input(const InferenceContext& ctx, size_t i) {
    const TensorType& type = ctx.type(i);
    if (type.kind != ValueKind::sequence || type.optional)
        ctx.fail("input " + std::to_string(i) + " must be a sequence");
    return type;
}

// The shape two element shapes share: equal dimensions kept, others dynamic.
std::optional<Shape> common_shape(const std::optional<Shape>& a, const std::optional<Shape>& b) {
    if (!a || !b || a->rank() != b->rank()) return std::nullopt;
    std::vector<int64_t> dims;
    for (size_t d = 0; d < a->rank(); ++d) dims.push_back((*a)[d] == (*b)[d] ? (*a)[d] : kDynamic);
    return Shape(dims);
}

Shape known(const std::optional<Shape>& shape) {
    if (!shape) throw ShapeUnknown{};
    return *shape;
}

// SequenceMap's body typed with one element of each sequence input and the tensor inputs.
std::shared_ptr<GraphIR> typed_map_body(const InferenceContext& ctx) {
    std::vector<TensorType> inputs;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
        TensorType element = ctx.type(i);
        if (element.optional) ctx.fail("input " + std::to_string(i) + " is optional; SequenceMap takes sequences and tensors");
        element.kind = ValueKind::tensor;
        inputs.push_back(element);
    }
    sequence_input(ctx, 0);
    return typed_subgraph(ctx.attrs().get_graph("body").ir(), inputs, {}, ctx.node().name);
}

bool is(const InferenceContext& ctx, std::string_view op) { return ctx.node().op == op; }

}  // namespace

DType dtype_of_sequence_family(const InferenceContext& ctx, size_t output) {
    const std::string& op = ctx.node().op;
    if (op == "SequenceLength") return DType::i64;
    if (op == "OptionalHasElement") return DType::boolean;
    if (op == "SequenceEmpty") return dtype_from_onnx(ctx.attrs().get_int("dtype", 1));
    if (op == "Optional" && !ctx.has_input(0)) return dtype_from_onnx(ctx.attrs().get_int("type"));
    if (op == "SequenceMap") {
        const auto body = typed_map_body(ctx);
        if (output >= body->outputs.size()) ctx.fail("the body has fewer outputs than the node");
        return body->values[body->outputs[output]].type.dtype;
    }
    return ctx.dtype(0);
}

std::vector<Shape> shape_of_sequence_family(const InferenceContext& ctx) {
    const std::string& op = ctx.node().op;
    const Shape scalar(std::vector<int64_t>{});
    if (op == "SequenceConstruct") {
        check_same_dtypes(ctx, 0);
        std::optional<Shape> shape = ctx.type(0).shape;
        for (size_t i = 1; i < ctx.num_inputs(); ++i) shape = common_shape(shape, ctx.type(i).shape);
        return {known(shape)};
    }
    if (op == "SequenceEmpty") throw ShapeUnknown{};
    if (op == "SequenceInsert") {
        const TensorType& sequence = sequence_input(ctx, 0);
        if (ctx.dtype(1) != sequence.dtype)
            ctx.fail("the tensor is " + std::string(dtype_name(ctx.dtype(1))) + ", the sequence holds " +
                     std::string(dtype_name(sequence.dtype)));
        return {known(common_shape(sequence.shape, ctx.type(1).shape))};
    }
    if (op == "SequenceErase") return {known(sequence_input(ctx, 0).shape)};
    if (op == "SequenceAt") return {known(sequence_input(ctx, 0).shape)};
    if (op == "SequenceLength") {
        sequence_input(ctx, 0);
        return {scalar};
    }
    if (op == "SplitToSequence") {
        std::optional<std::vector<int64_t>> split;
        bool scalar_split = false;
        if (ctx.has_input(1)) {
            split = ctx.ints(1);
            scalar_split = ctx.shape(1).rank() == 0;
        }
        std::optional<Shape> shape;
        const auto pieces = split_to_sequence_shapes(ctx, ctx.shape(0), split, scalar_split);
        if (pieces.empty()) throw ShapeUnknown{};
        shape = pieces[0];
        for (const Shape& piece : pieces) shape = common_shape(shape, piece);
        return {known(shape)};
    }
    if (op == "ConcatFromSequence") {
        sequence_input(ctx, 0);
        throw ShapeUnknown{};  // the number of elements decides it
    }
    if (op == "SequenceMap") {
        const auto body = typed_map_body(ctx);
        if (body->outputs.size() != ctx.node().outputs.size())
            ctx.fail("the body returns " + std::to_string(body->outputs.size()) + " values for " +
                     std::to_string(ctx.node().outputs.size()) + " outputs");
        std::vector<Shape> shapes;
        for (int id : body->outputs) shapes.push_back(known(body->values[id].type.shape));
        return shapes;
    }
    if (op == "Optional") {
        if (!ctx.has_input(0)) throw ShapeUnknown{};
        return {known(ctx.type(0).shape)};
    }
    if (op == "OptionalHasElement") return {scalar};
    if (op == "OptionalGetElement") return {known(ctx.type(0).shape)};
    ctx.fail("not an op of the sequence family");
}

void structure_sequence(const InferenceContext&, size_t, TensorType& type) { type.kind = ValueKind::sequence; }

void structure_tensor(const InferenceContext&, size_t, TensorType& type) { type.kind = ValueKind::tensor; }

void structure_optional(const InferenceContext& ctx, size_t, TensorType& type) {
    if (ctx.has_input(0)) {
        if (ctx.type(0).optional) ctx.fail("the input is optional already");
        type.kind = ctx.type(0).kind;
    } else {
        type.kind = ctx.attrs().get_int("type_is_sequence", 0) ? ValueKind::sequence : ValueKind::tensor;
    }
    type.optional = true;
}

void structure_like_input0(const InferenceContext& ctx, size_t, TensorType& type) {
    if (!ctx.has_input(0)) return;
    if (is(ctx, "OptionalGetElement")) {
        type.kind = ctx.type(0).kind;
        type.optional = false;
        return;
    }
    type.kind = ctx.type(0).kind;
    type.optional = ctx.type(0).optional;
}

std::vector<Shape> split_to_sequence_shapes(const InferenceContext& ctx, const Shape& input,
                                            const std::optional<std::vector<int64_t>>& split, bool split_is_scalar) {
    const size_t axis = input.normalize_axis(ctx.attrs().get_int("axis", 0));
    const int64_t extent = input[axis];
    if (extent == kDynamic) throw ShapeUnknown{};
    const auto with_extent = [&](int64_t n) {
        std::vector<int64_t> dims = input.dims();
        dims[axis] = n;
        return Shape(dims);
    };
    std::vector<Shape> pieces;
    if (!split) {
        std::vector<int64_t> dims = input.dims();
        if (ctx.attrs().get_int("keepdims", 1)) dims[axis] = 1;
        else dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(axis));
        return std::vector<Shape>(static_cast<size_t>(extent), Shape(dims));
    }
    if (split_is_scalar) {
        const int64_t size = split->at(0);
        if (size <= 0) ctx.fail("split " + std::to_string(size) + " must be positive");
        for (int64_t start = 0; start < extent; start += size) pieces.push_back(with_extent(std::min(size, extent - start)));
        return pieces;
    }
    int64_t total = 0;
    for (int64_t size : *split) {
        if (size < 0) ctx.fail("split sizes must not be negative");
        total += size;
        pieces.push_back(with_extent(size));
    }
    if (total != extent)
        ctx.fail("split sizes add up to " + std::to_string(total) + ", axis " + std::to_string(axis) + " has " +
                 std::to_string(extent));
    return pieces;
}

size_t sequence_position(const InferenceContext& ctx, int64_t position, size_t length, bool past_end) {
    const int64_t n = static_cast<int64_t>(length);
    const int64_t last = past_end ? n : n - 1;
    if (position < -n || position > last)
        ctx.fail("position " + std::to_string(position) + " is out of range for a sequence of " + std::to_string(length) +
                 " elements");
    return static_cast<size_t>(position < 0 ? position + n : position);
}

}  // namespace infer::detail
