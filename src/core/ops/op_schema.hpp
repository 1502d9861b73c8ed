#pragma once
// The op table: the single list of op kinds infer knows, with their arity, the input whose dtype
// selects a kernel, the output dtype rule, the shape function, and the facts the passes and the
// planner need (OpTraits). Passes and the planner read those facts; they never test op names.
// Adding an op touches three places: an entry in its family's table_<family>.cpp, a CPU kernel,
// and an op test case (docs/adding-an-op.md).
#include "core/ir/graph_ir.hpp"

#include <infer/attributes.hpp>
#include <infer/error.hpp>

#include <cstdint>
#include <exception>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace infer::detail {

// Thrown by a shape function that needs something not known yet (an input's rank, or the value
// of a shape-carrying input). Validation then leaves the outputs' shapes unknown; at run-time
// planning it means the shape depends on data, which infer does not support yet.
struct ShapeUnknown : std::exception {};

class InferenceContext {
public:
    InferenceContext(const NodeIR& node, const std::vector<TensorType>& inputs,
                     const std::vector<const Tensor*>& values)
        : node_(node), inputs_(inputs), values_(values) {}

    const NodeIR& node() const { return node_; }
    const Attributes& attrs() const { return node_.attributes; }
    size_t num_inputs() const { return inputs_.size(); }
    bool has_input(size_t i) const { return i < node_.inputs.size() && node_.inputs[i] >= 0; }
    DType dtype(size_t i) const { return inputs_.at(i).dtype; }
    // The input's whole type: its kind (tensor or sequence) and whether it is optional.
    const TensorType& type(size_t i) const { return inputs_.at(i); }
    // The input's shape; throws ShapeUnknown when its rank is not known.
    const Shape& shape(size_t i) const;
    // The input's value (a host tensor); throws ShapeUnknown when not known at this point.
    const Tensor& value(size_t i) const;
    // The input's value read as integers (i64 or i32 tensors).
    std::vector<int64_t> ints(size_t i) const;
    // Throws ModelError: "node 'name' (Op): message".
    [[noreturn]] void fail(const std::string& message) const;

private:
    const NodeIR& node_;
    const std::vector<TensorType>& inputs_;
    const std::vector<const Tensor*>& values_;
};

using ShapeFunction = std::vector<Shape> (*)(const InferenceContext&);
using DTypeFunction = DType (*)(const InferenceContext&, size_t output);
// For ops that take or make sequences and optionals (table_sequence.cpp): sets the kind of
// output `output`, whose dtype and shape are set already.
using StructureFunction = void (*)(const InferenceContext&, size_t output, TensorType& type);

// The host_inputs mask of the given input positions: host_inputs({1, 2}).
constexpr uint32_t host_inputs_mask(std::initializer_list<int> inputs) {
    uint32_t mask = 0;
    for (int i : inputs) mask |= 1u << i;
    return mask;
}

// How the f16/bf16 lowering treats an op (passes/lower_precision.cpp).
enum class PrecisionClass : uint8_t {
    follows_inputs,  // runs in the low type unless a non-constant float input stays f32
    low,             // always in the low type: the matrix products the lowering is for
    keeps_f32,       // always in f32: results that leave the low type's range or lose it in a sum
};

// What passes and the planner may assume about an op.
struct OpTraits {
    PrecisionClass precision = PrecisionClass::follows_inputs;
    // Output 0 holds input `view_of`'s elements in the same order under a new shape (Reshape,
    // Flatten, Squeeze, Unsqueeze, Identity): the planner makes it an alias, with no step and no
    // copy, when the input is contiguous. -1: not a view.
    int8_t view_of = -1;
    // Inputs (bit i = input i) whose buffer output 0 may overwrite when that input dies at this
    // node and has output 0's dtype and size: the kernels read element i before writing element i.
    uint8_t in_place = 0;
    // Reads only its input's shape, never its data (Shape, Size): the planner evaluates it at
    // plan time whatever the input.
    bool reads_shape_only = false;
    // May be evaluated at plan time when every input is known.
    bool foldable = true;
    // In infer's own domain: made by fusion passes, never imported from a model file.
    bool internal = false;
    // Every output element is a copy of an input element (gathers, slices, concatenation, the
    // cache writes): it cannot make a value out of f16's range, so f16 runs do not scan its
    // outputs (executor.cpp), which for a decode step's cache writes was the whole cache.
    bool moves_values = false;
    // Its host inputs choose which work runs (If's condition, Loop's trip count), and they decide
    // output shapes only where validation could not give every output a static shape. Elsewhere
    // the graph inputs they come from do not key plans by value: a condition computed from data
    // would otherwise make a plan per distinct input.
    bool host_inputs_choose_work = false;
};

// Traits shared by many entries of the families' tables.
inline constexpr OpTraits kLowPrecision{.precision = PrecisionClass::low};
inline constexpr OpTraits kKeepsF32{.precision = PrecisionClass::keeps_f32};
inline constexpr OpTraits kView{.view_of = 0};
inline constexpr OpTraits kMovesValues{.moves_values = true};
// Pointwise ops: element i of the output depends on element i of each same-shaped input only.
inline constexpr OpTraits kPointwiseUnary{.in_place = 0b1};
inline constexpr OpTraits kPointwiseBinary{.in_place = 0b11};
inline constexpr OpTraits kPointwiseUnaryF32{.precision = PrecisionClass::keeps_f32, .in_place = 0b1};
inline constexpr OpTraits kPointwiseBinaryF32{.precision = PrecisionClass::keeps_f32, .in_place = 0b11};
inline constexpr int kVariadic = -1;  // OpSchema::max_inputs/max_outputs: any number

struct OpSchema {
    std::string_view name;
    int min_inputs;
    int max_inputs;          // -1: variadic
    int min_outputs;
    int max_outputs;
    int kernel_dtype_input;  // the input whose dtype keys the kernel registry
    DTypeFunction output_dtype;
    ShapeFunction infer_shapes;  // one shape per output the node has
    // Inputs whose values (not just shapes) shape the output: axes, target shapes, slice bounds.
    // They stay on the host whatever device runs the node (bit i = input i).
    uint32_t host_inputs = 0;
    OpTraits traits = {};
    // Set for ops whose inputs or outputs may be sequences or optionals; the planner resolves
    // such nodes at plan time (planner/value_structures.cpp). Null: tensors only.
    StructureFunction output_structure = nullptr;
    OpId id = kUnknownOp;  // set when the table is assembled

    bool is_host_input(size_t i) const { return i < 32 && (host_inputs >> i) & 1u; }
};

// The op table's families, each in its own table_<family>.cpp with its shape functions in
// shapes_<family>*.cpp; op_table.cpp assembles them.
std::vector<OpSchema> math_op_schemas();
std::vector<OpSchema> indexing_op_schemas();
std::vector<OpSchema> neural_op_schemas();
std::vector<OpSchema> control_op_schemas();
std::vector<OpSchema> sequence_op_schemas();
// Ops fusion passes make (traits.internal): never imported, always with a CPU kernel.
std::vector<OpSchema> fused_op_schemas();

// nullptr when the op is unknown.
const OpSchema* find_op(std::string_view name);
const std::vector<OpSchema>& all_ops();
// The id of a known op; throws std::logic_error for a name the table lacks (a typo in a pass).
OpId op_id(std::string_view name);
const OpSchema& op_schema(OpId id);

// ONNX's TensorProto element-type numbers, used by attributes such as Cast's "to".
DType dtype_from_onnx(int64_t onnx_type);
int64_t dtype_to_onnx(DType type);

}  // namespace infer::detail
