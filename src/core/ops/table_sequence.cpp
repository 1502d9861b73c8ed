// The op table's sequence family: lists of tensors (ONNX sequence type) and values that may be
// absent (optional type). A plan knows each sequence's length and element shapes, so these ops
// run no kernel of their own: the planner resolves them into the tensors they name
// (planner/value_structures.cpp), with a Concat, Split or a subgraph call where elements are
// computed. Validation types live in shapes_sequence.cpp.
#include "core/ops/op_schema.hpp"
#include "core/ops/shapes_sequence.hpp"

namespace infer::detail {

std::vector<OpSchema> sequence_op_schemas() {
    const auto dtype = dtype_of_sequence_family;
    const auto shape = shape_of_sequence_family;
    // Positions and split sizes decide the structure: the host reads them at plan time.
    constexpr OpTraits kStructural{.precision = PrecisionClass::keeps_f32, .foldable = false};
    return {
        // name, inputs min/max, outputs min/max, kernel dtype input, dtype rule, shapes,
        // host inputs, traits, output kind
        {"SequenceConstruct", 1, kVariadic, 1, 1, 0, dtype, shape, 0, kStructural, structure_sequence},
        {"SequenceEmpty", 0, 0, 1, 1, 0, dtype, shape, 0, kStructural, structure_sequence},
        {"SequenceInsert", 2, 3, 1, 1, 0, dtype, shape, host_inputs_mask({2}), kStructural, structure_sequence},
        {"SequenceErase", 1, 2, 1, 1, 0, dtype, shape, host_inputs_mask({1}), kStructural, structure_sequence},
        {"SequenceAt", 2, 2, 1, 1, 0, dtype, shape, host_inputs_mask({1}), kStructural, structure_tensor},
        {"SequenceLength", 1, 1, 1, 1, 0, dtype, shape, 0, kStructural, structure_tensor},
        {"SplitToSequence", 1, 2, 1, 1, 0, dtype, shape, host_inputs_mask({1}), kStructural, structure_sequence},
        {"ConcatFromSequence", 1, 1, 1, 1, 0, dtype, shape, 0, kStructural, structure_tensor},
        {"SequenceMap", 1, kVariadic, 1, kVariadic, 0, dtype, shape, 0, kStructural, structure_sequence},
        {"Optional", 0, 1, 1, 1, 0, dtype, shape, 0, kStructural, structure_optional},
        {"OptionalHasElement", 0, 1, 1, 1, 0, dtype, shape, 0, kStructural, structure_tensor},
        {"OptionalGetElement", 1, 1, 1, 1, 0, dtype, shape, 0, kStructural, structure_like_input0},
    };
}

}  // namespace infer::detail
