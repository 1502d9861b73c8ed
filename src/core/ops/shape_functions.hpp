#pragma once
// Shape and dtype functions of the op table, grouped by family in shapes_*.cpp.
#include "core/ops/op_schema.hpp"

namespace infer::detail {

// dtype rules
DType dtype_same_as_kernel_input(const InferenceContext& ctx, size_t output);
DType dtype_bool(const InferenceContext& ctx, size_t output);
DType dtype_i64(const InferenceContext& ctx, size_t output);
DType dtype_from_to_attribute(const InferenceContext& ctx, size_t output);
DType dtype_from_value_attribute(const InferenceContext& ctx, size_t output);
DType dtype_of_input1(const InferenceContext& ctx, size_t output);

// Fails naming the input when inputs first.. differ in dtype from input `first`.
void check_same_dtypes(const InferenceContext& ctx, size_t first);

// elementwise family (shapes_elementwise.cpp)
std::vector<Shape> shape_unary(const InferenceContext& ctx);
std::vector<Shape> shape_broadcast(const InferenceContext& ctx);
std::vector<Shape> shape_matmul(const InferenceContext& ctx);
std::vector<Shape> shape_gemm(const InferenceContext& ctx);
std::vector<Shape> shape_reduce(const InferenceContext& ctx);
std::vector<Shape> shape_layer_norm(const InferenceContext& ctx);

// tensor manipulation family (shapes_tensor.cpp)
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

// convolution family (shapes_nn.cpp)
std::vector<Shape> shape_conv(const InferenceContext& ctx);
std::vector<Shape> shape_pool(const InferenceContext& ctx);
std::vector<Shape> shape_global_pool(const InferenceContext& ctx);
std::vector<Shape> shape_batch_norm(const InferenceContext& ctx);

// Shared by the shape functions and by kernels that need the same geometry.
struct SliceRange {
    int64_t start, step, count;  // element index of the first, stride, number taken
};
// ONNX Slice semantics for one axis of extent `dim` (clamping, negative indices and steps).
SliceRange resolve_slice(int64_t dim, int64_t start, int64_t end, int64_t step);

// Spatial geometry of Conv and the pools for one spatial axis.
struct WindowGeometry {
    int64_t pad_begin, pad_end, out;
};
struct WindowParams {
    std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
    std::string auto_pad;
    bool ceil_mode = false;
};
// Reads kernel_shape/strides/dilations/pads/auto_pad/ceil_mode for `spatial` axes.
WindowParams read_window_params(const Attributes& attrs, size_t spatial,
                                const std::vector<int64_t>& kernel_from_weights);
std::vector<WindowGeometry> window_geometry(const WindowParams& params,
                                            const std::vector<int64_t>& input_spatial);

}  // namespace infer::detail
