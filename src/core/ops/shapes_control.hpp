#pragma once
// Shape and dtype functions of the control-flow family (table_control.cpp), and the typed copy
// of a subgraph that they and the kernels share: a branch or body takes its types from the
// node's inputs each time a plan is made.
#include "core/ops/shape_functions.hpp"

#include <memory>
#include <string>
#include <vector>

namespace infer::detail {

DType dtype_of_control_output(const InferenceContext& ctx, size_t output);
std::vector<Shape> shape_if(const InferenceContext& ctx);
std::vector<Shape> shape_loop(const InferenceContext& ctx);
std::vector<Shape> shape_scan(const InferenceContext& ctx);
// If's and Loop's outputs are sequences or optionals where the branch or body makes them (the
// planner then plans the branch, or each iteration of the body, inline: value_structures.cpp).
void structure_of_control_output(const InferenceContext& ctx, size_t output, TensorType& type);

// The number of implicit inputs (tensors of enclosing graphs that the subgraphs read), which
// follow the node's own inputs.
size_t implicit_input_count(const Attributes& attrs, size_t node_inputs);

// A validated copy of `graph` whose inputs have `inputs` types; an input whose value is known
// (`values`, may be shorter) becomes a constant of the copy. Throws ModelError naming the node
// when the counts differ or the subgraph is malformed.
std::shared_ptr<GraphIR> typed_subgraph(const GraphIR& graph, const std::vector<TensorType>& inputs,
                                        const std::vector<const Tensor*>& values, const std::string& node);

// The output types of `graph` given its input types and known values: with every input shape
// static, the subgraph is planned for the CPU (without running it) so that shapes its known
// values decide come out static too. `node` names the node it belongs to in errors.
std::vector<TensorType> subgraph_output_types(const GraphIR& graph, const std::vector<TensorType>& inputs,
                                              const std::vector<const Tensor*>& values, const std::string& node);

// Whether a Loop body's condition output is its condition input (or a constant true), so that
// the loop runs exactly the trip count when it starts.
bool condition_passes_through(const GraphIR& body);

// Scan's num_scan_inputs, checked against the node; non-default scan axes and directions are
// refused (Unsupported).
size_t scan_input_count(const Attributes& attrs, size_t own_inputs, const std::string& node);

}  // namespace infer::detail
