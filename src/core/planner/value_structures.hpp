#pragma once
// Sequences and optionals in a plan. A plan is made for known input shapes, and it knows every
// sequence's length and element shapes too (the signature gives those of sequence inputs;
// positions and split sizes must be known when the plan is made, as target shapes are). So a
// sequence is planned as the list of tensor values it holds, an optional as the one it holds
// or none, and the sequence ops become bookkeeping: SequenceAt names an element, SequenceInsert
// makes a longer list, SequenceLength is a constant. Only ops that compute elements place
// kernels: ConcatFromSequence a Concat, SplitToSequence a Split, SequenceMap one call of its
// body per element.
#include "core/ir/graph_ir.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace infer::detail {

// What a plan knows of a sequence or optional value.
struct ValueStructure {
    ValueKind kind = ValueKind::sequence;  // of the contents: a tensor for an optional tensor
    bool optional = false;
    bool present = true;                   // false: an optional holding nothing
    DType dtype = DType::f32;              // the elements'
    std::vector<int> elements;             // tensor value ids, in order (one for an optional tensor)
};

// InputSignature::structure and Plan::output_structure entries: a tensor, an absent optional,
// or (n >= 0) a sequence of n tensors, which take n places in the flat lists of tensors.
constexpr int kTensorEntry = -1;
constexpr int kAbsentEntry = -2;

// The planner's side: what resolving a node needs from the plan being made (planner.cpp).
class StructurePlanner {
public:
    virtual ~StructurePlanner() = default;
    // Valid until the next new value: copy what must outlive one.
    virtual const TensorType& type_of(int value) const = 0;
    virtual const Tensor* known(int value) const = 0;  // a host value known at plan time
    virtual const ValueStructure& structure_of(int value) const = 0;  // throws for a tensor
    virtual void set_structure(int value, ValueStructure structure) = 0;
    virtual void set_known(int value, Tensor tensor) = 0;
    // Gives a node's tensor output its type before place_kernel computes it.
    virtual void declare(int value, const TensorType& type) = 0;
    // A tensor value of this plan only (not in the graph), of a static type.
    virtual int new_value(const TensorType& type) = 0;
    // `value` is tensor `source` itself: no step, no copy.
    virtual void same_as(int value, int source) = 0;
    // A new value holding `source`'s elements under `shape` (a view).
    virtual int reshaped(int source, const Shape& shape) = 0;
    // Places a kernel of `op` over tensor values, under `node`'s attributes; `name` labels it in
    // reports and errors.
    virtual void place_kernel(const NodeIR& node, const std::string& op, const std::string& name,
                              const std::vector<int>& inputs, const std::vector<int>& outputs) = 0;
    // Plans the nodes of `graph` (a typed branch or body) as if they were this graph's, its
    // inputs being `inputs`; returns the values of its outputs. Node names get `prefix`.
    virtual std::vector<int> plan_inline(std::shared_ptr<const GraphIR> graph, const std::vector<int>& inputs,
                                         const std::string& prefix) = 0;
};

// Whether `node` is planned by plan_structural_node: it takes or makes a sequence or optional,
// or it is an If whose condition is known, or a short Loop whose iterations are (its branch or
// iterations are then planned inline, so that their nodes run on the plan's device like the
// rest instead of in a nested CPU plan).
bool is_structural(const NodeIR& node, const std::vector<TensorType>& input_types,
                   const std::vector<const Tensor*>& input_values, const std::vector<TensorType>& output_types);

// Resolves a node of the sequence family (or an Identity of a sequence or optional). An If
// whose branches pass sequences or optionals is planned as the branch its condition (known
// at plan time: the host reads it) takes; such a Loop as its iterations, one after the other
// (the trip count and each iteration's condition must be known at plan time). Throws
// Unsupported when a position or split size is not known at plan time, ModelError for a
// position out of range or mismatched element types.
void plan_structural_node(const NodeIR& node, StructurePlanner& planner);

}  // namespace infer::detail
