#pragma once
// Shape and dtype functions of the neural-network layers family (table_neural.cpp).
#include "core/ops/op_schema.hpp"

namespace infer::detail {

// dtype rules
DType dtype_of_output_datatype(const InferenceContext& ctx, size_t output);  // window functions
DType dtype_quantized(const InferenceContext& ctx, size_t output);  // zero point's, else u8
DType dtype_of_scale(const InferenceContext& ctx, size_t output);  // DequantizeLinear
DType dtype_dynamic_quantize(const InferenceContext& ctx, size_t output);
DType dtype_i32(const InferenceContext& ctx, size_t output);
DType dtype_of_input7(const InferenceContext& ctx, size_t output);  // QLinear*'s y_zero_point

// losses
std::vector<Shape> shape_nll_loss(const InferenceContext& ctx);
// convolutions
std::vector<Shape> shape_conv_transpose(const InferenceContext& ctx);
std::vector<Shape> shape_conv_integer(const InferenceContext& ctx);
std::vector<Shape> shape_qlinear_conv(const InferenceContext& ctx);
// quantization
std::vector<Shape> shape_quantize(const InferenceContext& ctx);
std::vector<Shape> shape_dynamic_quantize(const InferenceContext& ctx);
std::vector<Shape> shape_matmul_integer(const InferenceContext& ctx);
std::vector<Shape> shape_qlinear_matmul(const InferenceContext& ctx);
// generators and recurrences
std::vector<Shape> shape_window(const InferenceContext& ctx);
std::vector<Shape> shape_recurrent(const InferenceContext& ctx);
// normalizations over [N, C, ...]
std::vector<Shape> shape_instance_norm(const InferenceContext& ctx);

// ConvTranspose's geometry for one spatial axis, shared with its kernel.
struct TransposedAxis {
    int64_t in, kernel, stride, dilation, pad_begin, out;
};
// Reads the attributes; `input` and `kernel` are the spatial extents of X and W. Throws
// ModelError on malformed attributes.
std::vector<TransposedAxis> conv_transpose_geometry(const Attributes& attrs,
                                                    const std::vector<int64_t>& input,
                                                    const std::vector<int64_t>& kernel);

}  // namespace infer::detail
