#pragma once
// Shape and dtype functions of the indexing family (table_indexing.cpp), and the geometry its
// CPU kernels share with them.
#include "core/ops/shape_functions.hpp"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace infer::detail {

// dtype rules
DType dtype_of_input2(const InferenceContext& ctx, size_t output);
DType dtype_from_dtype_attribute(const InferenceContext& ctx, size_t output);  // EyeLike
DType dtype_same_then_bool(const InferenceContext& ctx, size_t output);        // Dropout

// shapes_indexing_movement.cpp: reshaping, transposing, joining, cutting, shape-making
std::vector<Shape> shape_reshape(const InferenceContext& ctx);
std::vector<Shape> shape_flatten(const InferenceContext& ctx);
std::vector<Shape> shape_transpose(const InferenceContext& ctx);
std::vector<Shape> shape_concat(const InferenceContext& ctx);
std::vector<Shape> shape_split(const InferenceContext& ctx);
std::vector<Shape> shape_slice(const InferenceContext& ctx);
std::vector<Shape> shape_gather(const InferenceContext& ctx);
std::vector<Shape> shape_unsqueeze(const InferenceContext& ctx);
std::vector<Shape> shape_squeeze(const InferenceContext& ctx);
std::vector<Shape> shape_expand(const InferenceContext& ctx);
std::vector<Shape> shape_shape(const InferenceContext& ctx);
std::vector<Shape> shape_constant_of_shape(const InferenceContext& ctx);
std::vector<Shape> shape_range(const InferenceContext& ctx);

// shapes_indexing.cpp
std::vector<Shape> shape_same_twice(const InferenceContext& ctx);  // Dropout: y and mask
std::vector<Shape> shape_gather_elements(const InferenceContext& ctx);
std::vector<Shape> shape_gather_nd(const InferenceContext& ctx);
std::vector<Shape> shape_scatter(const InferenceContext& ctx);
std::vector<Shape> shape_scatter_nd(const InferenceContext& ctx);
std::vector<Shape> shape_tensor_scatter(const InferenceContext& ctx);
// TensorScatter's sequence axis (attribute `axis`, default -2) made non-negative; throws
// InvalidArgument when it is the batch axis or outside rank `rank`.
size_t tensor_scatter_axis(const Attributes& attributes, size_t rank);
std::vector<Shape> shape_resize(const InferenceContext& ctx);
std::vector<Shape> shape_upsample(const InferenceContext& ctx);
std::vector<Shape> shape_grid_sample(const InferenceContext& ctx);
DType dtype_f32(const InferenceContext& ctx, size_t output);      // TfIdfVectorizer
std::vector<Shape> shape_tfidf(const InferenceContext& ctx);    // [C] → [K], [N, C] → [N, K]
std::vector<Shape> shape_one_hot(const InferenceContext& ctx);
std::vector<Shape> shape_tile(const InferenceContext& ctx);
std::vector<Shape> shape_pad(const InferenceContext& ctx);
std::vector<Shape> shape_depth_to_space(const InferenceContext& ctx);
std::vector<Shape> shape_space_to_depth(const InferenceContext& ctx);
std::vector<Shape> shape_top_k(const InferenceContext& ctx);
std::vector<Shape> shape_compress(const InferenceContext& ctx);
std::vector<Shape> shape_nonzero(const InferenceContext& ctx);
std::vector<Shape> shape_reverse_sequence(const InferenceContext& ctx);

// shapes_indexing_nms.cpp: NonMaxSuppression's selection, (batch, class, box) per kept box in
// the order kept; the shape function and the kernel share it. Throws InvalidArgument on
// malformed boxes or scores.
std::vector<std::array<int64_t, 3>> non_max_suppression(const Tensor& boxes, const Tensor& scores,
                                                        const Tensor* max_per_class, const Tensor* iou_threshold,
                                                        const Tensor* score_threshold, bool center_point,
                                                        const std::string& node);
std::vector<Shape> shape_non_max_suppression(const InferenceContext& ctx);

// shapes_indexing_unique.cpp: Unique's selection over the elements (no axis) or the slices
// along an axis, seen as `outer` x `count` x `inner`: the first occurrence of each distinct
// slice in output order, each slice's position in the output, and the occurrences.
struct UniqueSelection {
    std::vector<int64_t> first, inverse, counts;
    int64_t outer = 1, count = 0, inner = 1;
};
UniqueSelection unique_selection(const Tensor& x, std::optional<int64_t> axis, bool sorted, const std::string& node);
std::vector<Shape> shape_unique(const InferenceContext& ctx);

// Shared with the kernels that need the same geometry (Slice).
struct SliceRange {
    int64_t start, step, count;  // element index of the first, stride, number taken
};
// ONNX Slice semantics for one axis of extent `dim` (clamping, negative indices and steps).
SliceRange resolve_slice(int64_t dim, int64_t start, int64_t end, int64_t step);

// Pad's begin/end amounts per axis from the pads input and the optional axes input.
struct PadAmounts {
    std::vector<int64_t> begin, end;
};
PadAmounts resolve_pads(const std::vector<int64_t>& pads, const std::vector<int64_t>& axes,
                        bool axes_given, size_t rank, std::string* error);

// Resize's output extent for each axis from scales (floor(dim * scale)) or sizes.
std::vector<int64_t> resize_output_dims(const std::vector<int64_t>& in,
                                        const std::vector<float>& scales,
                                        const std::vector<int64_t>& sizes);

}  // namespace infer::detail
