#pragma once
// Shape and dtype functions of the indexing family (table_indexing.cpp), and the geometry its
// CPU kernels share with them.
#include "core/ops/shape_functions.hpp"

#include <string>
#include <vector>

namespace infer::detail {

// dtype rules
DType dtype_of_input2(const InferenceContext& ctx, size_t output);
DType dtype_from_dtype_attribute(const InferenceContext& ctx, size_t output);  // EyeLike
DType dtype_same_then_bool(const InferenceContext& ctx, size_t output);        // Dropout
DType dtype_same_then_i64(const InferenceContext& ctx, size_t output);         // TopK

// shapes
std::vector<Shape> shape_same_twice(const InferenceContext& ctx);  // Dropout: y and mask
std::vector<Shape> shape_gather_elements(const InferenceContext& ctx);
std::vector<Shape> shape_gather_nd(const InferenceContext& ctx);
std::vector<Shape> shape_scatter(const InferenceContext& ctx);
std::vector<Shape> shape_scatter_nd(const InferenceContext& ctx);
std::vector<Shape> shape_resize(const InferenceContext& ctx);
std::vector<Shape> shape_upsample(const InferenceContext& ctx);
std::vector<Shape> shape_one_hot(const InferenceContext& ctx);
std::vector<Shape> shape_tile(const InferenceContext& ctx);
std::vector<Shape> shape_pad(const InferenceContext& ctx);
std::vector<Shape> shape_depth_to_space(const InferenceContext& ctx);
std::vector<Shape> shape_space_to_depth(const InferenceContext& ctx);
std::vector<Shape> shape_top_k(const InferenceContext& ctx);
std::vector<Shape> shape_compress(const InferenceContext& ctx);
std::vector<Shape> shape_nonzero(const InferenceContext& ctx);
std::vector<Shape> shape_reverse_sequence(const InferenceContext& ctx);

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
