// The op table's control-flow family: If, Loop and Scan, whose branches and bodies are graphs
// (attributes of type graph). A subgraph reads tensors of the graphs around it through the
// node's implicit inputs, which follow the node's own inputs (attribute implicit_inputs gives
// their number), so the planner keeps them alive. Shape functions live in shapes_control.cpp.
// An If or Loop that passes sequences or optionals is planned inline instead of as a kernel
// (planner/value_structures.cpp).
#include "core/ops/op_schema.hpp"
#include "core/ops/shapes_control.hpp"

namespace infer::detail {

std::vector<OpSchema> control_op_schemas() {
    // The condition and the trip count decide which work runs and how many scan slices there
    // are: the host reads them.
    constexpr OpTraits kChoosesWork{.host_inputs_choose_work = true};
    return {
        // name, inputs min/max, outputs min/max, kernel dtype input, dtype rule, shapes,
        // host inputs
        {"If", 1, kVariadic, 1, kVariadic, 0, dtype_of_control_output, shape_if, host_inputs_mask({0}), kChoosesWork,
         structure_of_control_output},
        {"Loop", 0, kVariadic, 1, kVariadic, 1, dtype_of_control_output, shape_loop, host_inputs_mask({0, 1}), kChoosesWork,
         structure_of_control_output},
        {"Scan", 1, kVariadic, 1, kVariadic, 0, dtype_of_control_output, shape_scan},
    };
}

}  // namespace infer::detail
