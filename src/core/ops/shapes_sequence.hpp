#pragma once
// Types of the sequence family (table_sequence.cpp) as validation sees them: a sequence's
// element dtype and the shape its elements share. How many elements a sequence has, and each
// one's shape, the planner works out per plan (planner/value_structures.cpp) with the rules
// shared here.
#include "core/ops/shape_functions.hpp"

#include <optional>
#include <vector>

namespace infer::detail {

DType dtype_of_sequence_family(const InferenceContext& ctx, size_t output);
std::vector<Shape> shape_of_sequence_family(const InferenceContext& ctx);
// Output kinds: a sequence, a tensor, an optional, or whatever input 0 is (Identity).
void structure_sequence(const InferenceContext& ctx, size_t output, TensorType& type);
void structure_tensor(const InferenceContext& ctx, size_t output, TensorType& type);
void structure_optional(const InferenceContext& ctx, size_t output, TensorType& type);
void structure_like_input0(const InferenceContext& ctx, size_t output, TensorType& type);

// SplitToSequence's pieces of a tensor of shape `input`: `split` is absent (pieces of 1,
// the axis dropped unless keepdims), a scalar (pieces of that size, the last one shorter) or
// one size per piece. Throws ModelError (via `ctx`) for sizes that do not add up.
std::vector<Shape> split_to_sequence_shapes(const InferenceContext& ctx, const Shape& input,
                                            const std::optional<std::vector<int64_t>>& split, bool split_is_scalar);

// A position into a sequence of `length` elements (SequenceAt, SequenceInsert, SequenceErase):
// negative counts from the back; `past_end` allows `length` itself (insertion at the back).
size_t sequence_position(const InferenceContext& ctx, int64_t position, size_t length, bool past_end);

}  // namespace infer::detail
