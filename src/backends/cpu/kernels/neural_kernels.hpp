#pragma once
// The neural family's kernel files, each with its registration function; neural_family.cpp
// calls them all.
#include <infer/backend.hpp>

#include <string>

namespace infer::cpu {

void register_normalization_kernels(KernelRegistry& registry);   // Softmax, Layer/BatchNorm
void register_conv_kernels(KernelRegistry& registry);            // Conv, FusedConv
void register_channels_last_conv_kernels(KernelRegistry& registry);  // ChannelsLastConv
void register_bf16_conv_kernel(KernelRegistry& registry, const std::string& op);  // op in bf16 on AVX512_BF16
void register_pool_kernels(KernelRegistry& registry);            // MaxPool, AveragePool, Global...
void register_loss_kernels(KernelRegistry& registry);            // SoftmaxCrossEntropy, NLL
void register_conv_transpose_kernels(KernelRegistry& registry);  // ConvTranspose
void register_channel_norm_kernels(KernelRegistry& registry);    // InstanceNorm, LRN, MVN, ...
void register_quantize_kernels(KernelRegistry& registry);        // (De)QuantizeLinear, Dynamic...
void register_integer_matmul_kernels(KernelRegistry& registry);  // MatMulInteger, QLinearMatMul
void register_integer_conv_kernels(KernelRegistry& registry);    // ConvInteger, QLinearConv
void register_window_kernels(KernelRegistry& registry);          // Hann/Hamming/BlackmanWindow
void register_roi_align_kernels(KernelRegistry& registry);       // RoiAlign
void register_spectral_kernels(KernelRegistry& registry);        // DFT, STFT, MelWeightMatrix
void register_recurrent_kernels(KernelRegistry& registry);       // RNN, GRU, LSTM
void register_optimizer_kernels(KernelRegistry& registry);       // Adagrad, Momentum, Adam

}  // namespace infer::cpu
