#pragma once
// Float64 references of the indexing family (reference_indexing.cpp), written from the ONNX
// specification. Index-carrying inputs are RefTensors of integral values.
#include "reference.hpp"

#include <optional>
#include <string>

namespace ref {

RefTensor gather_elements(const RefTensor& data, const RefTensor& indices, int64_t axis);
RefTensor gather_nd(const RefTensor& data, const RefTensor& indices, int64_t batch_dims);
// reduction: "none", "add", "mul", "max", "min"
RefTensor scatter_elements(const RefTensor& data, const RefTensor& indices, const RefTensor& updates,
                           int64_t axis, const std::string& reduction);
RefTensor scatter_nd(const RefTensor& data, const RefTensor& indices, const RefTensor& updates,
                     const std::string& reduction);
// TensorScatter: past with update's rows written along `axis` from write_indices[batch] on
// (wrapping around the cache when circular); an empty write_indices means all zeros.
RefTensor tensor_scatter(const RefTensor& past, const RefTensor& update, const RefTensor* write_indices, int64_t axis,
                         bool circular);
RefTensor trilu(const RefTensor& x, bool upper, int64_t k);
RefTensor eye_like(const infer::Shape& shape, int64_t k);
RefTensor one_hot(const RefTensor& indices, int64_t depth, double off, double on, int64_t axis);
RefTensor tile(const RefTensor& x, const Dims& repeats);
// mode: "constant", "reflect", "edge"; pads: begins then ends for every axis.
RefTensor pad(const RefTensor& x, const Dims& pads, const std::string& mode, double value);
RefTensor depth_to_space(const RefTensor& x, int64_t block, bool crd);
RefTensor space_to_depth(const RefTensor& x, int64_t block);
std::vector<RefTensor> top_k(const RefTensor& x, int64_t k, int64_t axis, bool largest);
RefTensor compress(const RefTensor& x, const std::vector<bool>& condition, bool has_axis, int64_t axis);
RefTensor reverse_sequence(const RefTensor& x, const Dims& lengths, int64_t batch_axis, int64_t time_axis);
RefTensor nonzero(const RefTensor& x);
// Unique over the elements (axis empty) or the slices along an axis: Y, indices, inverse
// indices, counts.
std::vector<RefTensor> unique(const RefTensor& x, std::optional<int64_t> axis, bool sorted);
// GridSample of x [N, C, H, W] at grid [N, Ho, Wo, 2]; mode nearest|bilinear|bicubic, padding
// zeros|border|reflection.
RefTensor grid_sample(const RefTensor& x, const RefTensor& grid, const std::string& mode, const std::string& padding,
                      bool align_corners);
// NonMaxSuppression with corner boxes [B, N, 4] and scores [B, C, N]: rows (batch, class, box).
RefTensor non_max_suppression(const RefTensor& boxes, const RefTensor& scores, int64_t keep, double iou_limit,
                              double score_limit);

struct ResizeSpec {
    std::string mode = "nearest";                      // nearest, linear, cubic
    std::string coordinates = "half_pixel";
    std::string nearest_mode = "round_prefer_floor";
    double cubic_a = -0.75;
    bool exclude_outside = false;
};
// scales per axis; out: the output shape.
RefTensor resize(const RefTensor& x, const std::vector<double>& scales, const infer::Shape& out,
                 const ResizeSpec& spec);

}  // namespace ref
