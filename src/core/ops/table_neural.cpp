// The op table's neural-network layers family: Softmax and the normalizations, convolutions and
// pools, losses, quantization, window generators and recurrent layers. Shape functions live in
// shapes_neural_layers.cpp and shapes_neural.cpp (shapes_neural.hpp).
#include "core/ops/op_schema.hpp"
#include "core/ops/shape_functions.hpp"
#include "core/ops/shapes_neural.hpp"

namespace infer::detail {

std::vector<OpSchema> neural_op_schemas() {
    const auto same = dtype_same_as_kernel_input;
    const uint32_t size_on_host = 1u;  // window functions: input 0, the size, shapes the output
    return {
        // name, inputs min/max, outputs min/max, kernel dtype input, dtype rule, shapes,
        // host inputs
        {"Softmax", 1, 1, 1, 1, 0, same, shape_unary},
        {"LayerNormalization", 2, 3, 1, 3, 0, same, shape_layer_norm, 0, kKeepsF32},
        // RMSNormalization (opset 23): X / sqrt(mean(X²) + epsilon) · Scale over X[axis:], Y of
        // Scale's dtype. Kept in f32 by the f16/bf16 lowering, as LayerNormalization; then
        // fold_norm_casts lets it read a low-type X and write a low-type Y (y_dtype).
        {"RMSNormalization", 2, 2, 1, 1, 0, dtype_rms_norm, shape_rms_norm, 0, kKeepsF32},
        // Y has X's dtype; the running mean and variance (training mode) the input mean's.
        {"BatchNormalization", 5, 5, 1, 3, 0,
         [](const InferenceContext& ctx, size_t output) { return ctx.dtype(output == 0 ? 0 : 3); }, shape_batch_norm},

        {"Conv", 2, 3, 1, 1, 0, same, shape_conv, 0, kLowPrecision},
        {"MaxPool", 1, 1, 1, 2, 0, dtype_same_then_i64, shape_pool},
        {"AveragePool", 1, 1, 1, 1, 0, same, shape_pool},
        {"GlobalAveragePool", 1, 1, 1, 1, 0, same, shape_global_pool},
        {"RoiAlign", 3, 3, 1, 1, 0, same, shape_roi_align},

        {"SoftmaxCrossEntropyLoss", 2, 3, 1, 2, 0, same, shape_nll_loss},
        {"NegativeLogLikelihoodLoss", 2, 3, 1, 1, 0, same, shape_nll_loss},

        {"ConvTranspose", 2, 3, 1, 1, 0, same, shape_conv_transpose},
        {"InstanceNormalization", 3, 3, 1, 1, 0, same, shape_instance_norm},
        {"LRN", 1, 1, 1, 1, 0, same, shape_unary},
        {"MeanVarianceNormalization", 1, 1, 1, 1, 0, same, shape_unary},
        {"GlobalMaxPool", 1, 1, 1, 1, 0, same, shape_global_pool},
        // MaxUnpool: X, I (MaxPool's Indices), output_shape, which decides the output's shape.
        {"MaxUnpool", 2, 3, 1, 1, 0, same, shape_max_unpool, host_inputs_mask({2})},

        {"QuantizeLinear", 2, 3, 1, 1, 0, dtype_quantized, shape_quantize},
        {"DequantizeLinear", 2, 3, 1, 1, 0, dtype_of_scale, shape_quantize},
        {"DynamicQuantizeLinear", 1, 1, 3, 3, 0, dtype_dynamic_quantize, shape_dynamic_quantize},
        {"MatMulInteger", 2, 4, 1, 1, 0, dtype_i32, shape_matmul_integer},
        {"ConvInteger", 2, 4, 1, 1, 0, dtype_i32, shape_conv_integer},
        {"QLinearMatMul", 8, 8, 1, 1, 0, dtype_of_input7, shape_qlinear_matmul},
        {"QLinearConv", 8, 9, 1, 1, 0, dtype_of_input7, shape_qlinear_conv},

        {"HannWindow", 1, 1, 1, 1, 0, dtype_of_output_datatype, shape_window, size_on_host},
        {"HammingWindow", 1, 1, 1, 1, 0, dtype_of_output_datatype, shape_window, size_on_host},
        {"BlackmanWindow", 1, 1, 1, 1, 0, dtype_of_output_datatype, shape_window, size_on_host},
        // Spectral transforms: what shapes the output is read on the host.
        {"DFT", 1, 2, 1, 1, 0, same, shape_dft, host_inputs_mask({1})},
        {"STFT", 2, 4, 1, 1, 0, same, shape_stft, host_inputs_mask({1, 3})},
        {"MelWeightMatrix", 5, 5, 1, 1, 0, dtype_of_output_datatype, shape_mel_weight_matrix, host_inputs_mask({0, 1, 2, 3, 4})},

        {"RNN", 3, 6, 1, 2, 0, same, shape_recurrent},
        {"GRU", 3, 6, 1, 2, 0, same, shape_recurrent},
        {"LSTM", 3, 8, 1, 3, 0, same, shape_recurrent},

        // Training optimizers (domain ai.onnx.preview.training): R, T, then tensors by role.
        // The learning rate and the step count are read on the host.
        {"Adagrad", 5, kVariadic, 2, kVariadic, 2, dtype_of_optimizer, shape_optimizer, host_inputs_mask({0, 1})},
        {"Momentum", 5, kVariadic, 2, kVariadic, 2, dtype_of_optimizer, shape_optimizer, host_inputs_mask({0, 1})},
        {"Adam", 6, kVariadic, 3, kVariadic, 2, dtype_of_optimizer, shape_optimizer, host_inputs_mask({0, 1})},
    };
}

}  // namespace infer::detail
