// The op table's indexing family: ops that move, select or make elements without arithmetic
// (reshaping views, Transpose, Concat/Split/Slice/Gather, the gathers and scatters, resizing,
// padding, selections) and the shape-making ops Shape, ConstantOfShape and Range. Shape
// functions live in shapes_indexing_movement.cpp and shapes_indexing.cpp (shapes_indexing.hpp).
#include "core/ops/op_schema.hpp"
#include "core/ops/shape_functions.hpp"
#include "core/ops/shapes_indexing.hpp"
#include "core/ops/shapes_sequence.hpp"

namespace infer::detail {

namespace {
constexpr uint32_t host(std::initializer_list<int> inputs) { return host_inputs_mask(inputs); }

std::vector<Shape> shape_matrix_like(const InferenceContext& ctx) {
    if (ctx.shape(0).rank() < 2) ctx.fail("input must have rank >= 2");
    if (ctx.node().op == "EyeLike" && ctx.shape(0).rank() != 2) ctx.fail("input must be 2-D");
    return {ctx.shape(0)};
}
}  // namespace

std::vector<OpSchema> indexing_op_schemas() {
    const auto same = dtype_same_as_kernel_input;
    return {
        // name, inputs min/max, outputs min/max, kernel dtype input, dtype rule, shapes,
        // host inputs
        // Identity passes sequences and optionals on too (planned as their elements).
        {"Identity", 1, 1, 1, 1, 0, same, shape_unary, 0, kView, structure_like_input0},

        {"Reshape", 2, 2, 1, 1, 0, same, shape_reshape, host({1}), kView},
        {"Flatten", 1, 1, 1, 1, 0, same, shape_flatten, 0, kView},
        {"Transpose", 1, 1, 1, 1, 0, same, shape_transpose, 0, kMovesValues},
        {"Concat", 1, kVariadic, 1, 1, 0, same, shape_concat, 0, kMovesValues},
        {"Split", 1, 2, 1, kVariadic, 0, same, shape_split, host({1}), kMovesValues},
        {"Slice", 3, 5, 1, 1, 0, same, shape_slice, host({1, 2, 3, 4}), kMovesValues},
        {"Gather", 2, 2, 1, 1, 0, same, shape_gather, 0, kMovesValues},
        {"Unsqueeze", 2, 2, 1, 1, 0, same, shape_unsqueeze, host({1}), kView},
        {"Squeeze", 1, 2, 1, 1, 0, same, shape_squeeze, host({1}), kView},
        {"Expand", 2, 2, 1, 1, 0, same, shape_expand, host({1}), kMovesValues},
        {"Shape", 1, 1, 1, 1, 0, dtype_i64, shape_shape, 0, {.reads_shape_only = true}},
        {"ConstantOfShape", 1, 1, 1, 1, 0, dtype_from_value_attribute, shape_constant_of_shape, host({0})},
        {"Range", 3, 3, 1, 1, 0, same, shape_range, host({0, 1, 2})},

        {"GatherElements", 2, 2, 1, 1, 0, same, shape_gather_elements, 0, kMovesValues},
        {"GatherND", 2, 2, 1, 1, 0, same, shape_gather_nd, 0, kMovesValues},
        {"ScatterElements", 3, 3, 1, 1, 0, same, shape_scatter},
        {"Scatter", 3, 3, 1, 1, 0, same, shape_scatter},
        {"ScatterND", 3, 3, 1, 1, 0, same, shape_scatter_nd},
        // TensorScatter(past_cache, update, write_indices?): the key/value cache update. The
        // output may be the past cache's own buffer (in place), and kernels then write only the
        // update's rows; write_indices stays on the device so that a captured decode step
        // replays with new positions.
        {"TensorScatter", 2, 3, 1, 1, 0, same, shape_tensor_scatter, 0, {.in_place = 0b1, .moves_values = true}},
        {"Trilu", 1, 2, 1, 1, 0, same, shape_matrix_like, host({1})},
        {"EyeLike", 1, 1, 1, 1, 0, dtype_from_dtype_attribute, shape_matrix_like},
        // Resize: X, roi, scales, sizes. Upsample (deprecated): X, scales.
        {"Resize", 1, 4, 1, 1, 0, same, shape_resize, host({1, 2, 3})},
        {"Upsample", 2, 2, 1, 1, 0, same, shape_upsample, host({1})},
        {"GridSample", 2, 2, 1, 1, 0, same, shape_grid_sample},
        {"TfIdfVectorizer", 1, 1, 1, 1, 0, dtype_f32, shape_tfidf},
        // Identity with the mask all true, or in training mode (input 2) elements dropped at
        // random with probability ratio (input 1) and the rest scaled by 1 / (1 - ratio).
        {"Dropout", 1, 3, 1, 2, 0, dtype_same_then_bool, shape_same_twice, host({1, 2})},
        {"CastLike", 2, 2, 1, 1, 0, dtype_of_input1, shape_unary},
        {"OneHot", 3, 3, 1, 1, 2, dtype_of_input2, shape_one_hot, host({1})},
        {"Tile", 2, 2, 1, 1, 0, same, shape_tile, host({1}), kMovesValues},
        // Pad: data, pads, constant_value, axes.
        {"Pad", 2, 4, 1, 1, 0, same, shape_pad, host({1, 3})},
        {"DepthToSpace", 1, 1, 1, 1, 0, same, shape_depth_to_space},
        {"SpaceToDepth", 1, 1, 1, 1, 0, same, shape_space_to_depth},
        {"TopK", 2, 2, 2, 2, 0, dtype_same_then_i64, shape_top_k, host({1})},
        {"Compress", 2, 2, 1, 1, 0, same, shape_compress, host({1})},
        {"ReverseSequence", 2, 2, 1, 1, 0, same, shape_reverse_sequence},
        {"NonZero", 1, 1, 1, 1, 0, dtype_i64, shape_nonzero, host({0})},
        // How many distinct values there are decides the outputs' length: X is read on the host.
        {"Unique", 1, 1, 1, 4, 0, dtype_same_then_i64, shape_unique, host({0})},
        // Which boxes survive decides the output's length: every input is read on the host.
        {"NonMaxSuppression", 2, 5, 1, 1, 0, dtype_i64, shape_non_max_suppression, host({0, 1, 2, 3, 4})},
    };
}

}  // namespace infer::detail
