#pragma once
// Shape and dtype functions of the neural-network layers family (table_neural.cpp).
#include "core/ops/shape_functions.hpp"

#include <string>
#include <vector>

namespace infer::detail {

// dtype rules
DType dtype_of_output_datatype(const InferenceContext& ctx, size_t output);  // window functions
DType dtype_quantized(const InferenceContext& ctx, size_t output);  // zero point's, else u8
DType dtype_of_scale(const InferenceContext& ctx, size_t output);  // DequantizeLinear
DType dtype_dynamic_quantize(const InferenceContext& ctx, size_t output);
DType dtype_i32(const InferenceContext& ctx, size_t output);
DType dtype_of_input7(const InferenceContext& ctx, size_t output);  // QLinear*'s y_zero_point

// shapes_neural_layers.cpp: normalizations, convolution and pooling over [N, C, spatial...]
std::vector<Shape> shape_layer_norm(const InferenceContext& ctx);
// RMSNormalization: Y takes Scale's dtype (ONNX's V), or y_dtype when fold_norm_casts set it.
DType dtype_rms_norm(const InferenceContext& ctx, size_t output);
std::vector<Shape> shape_rms_norm(const InferenceContext& ctx);
std::vector<Shape> shape_batch_norm(const InferenceContext& ctx);
std::vector<Shape> shape_conv(const InferenceContext& ctx);
std::vector<Shape> shape_pool(const InferenceContext& ctx);
std::vector<Shape> shape_global_pool(const InferenceContext& ctx);
std::vector<Shape> shape_max_unpool(const InferenceContext& ctx);
std::vector<Shape> shape_roi_align(const InferenceContext& ctx);  // [regions, C, output_height, output_width]

// shapes_neural.cpp
// Broadcast batch dims and [M, K] x [K, N] of inputs a and b, as MatMul's, whatever their dtypes
// (the integer products).
Shape matmul_of(const InferenceContext& ctx, size_t a, size_t b);
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
// spectral: DFT (dft_length on the host), STFT (frame_step, frame_length), MelWeightMatrix (all)
std::vector<Shape> shape_dft(const InferenceContext& ctx);
std::vector<Shape> shape_stft(const InferenceContext& ctx);
std::vector<Shape> shape_mel_weight_matrix(const InferenceContext& ctx);
std::vector<Shape> shape_recurrent(const InferenceContext& ctx);
// training optimizers: output j has the shape and dtype of the X it updates or the state
// it carries (input 2 + j modulo the number of updated tensors)
DType dtype_of_optimizer(const InferenceContext& ctx, size_t output);
std::vector<Shape> shape_optimizer(const InferenceContext& ctx);
// normalizations over [N, C, ...]
std::vector<Shape> shape_instance_norm(const InferenceContext& ctx);

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
