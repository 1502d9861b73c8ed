#pragma once
// One registration function per family of kernels; the CPU backend calls them all.
#include <infer/backend.hpp>

namespace infer::cpu {

void register_binary_kernels(KernelRegistry& registry);         // Add ... Greater, Where
void register_unary_kernels(KernelRegistry& registry);          // Sqrt ... Gelu, Not
void register_cast_kernels(KernelRegistry& registry);           // Cast
void register_matmul_kernels(KernelRegistry& registry);         // MatMul, Gemm
void register_reduce_kernels(KernelRegistry& registry);         // ReduceMean/Sum/Max
void register_normalization_kernels(KernelRegistry& registry);  // Softmax, Layer/BatchNorm
void register_data_movement_kernels(KernelRegistry& registry);  // Reshape ... Slice, Identity
void register_indexing_kernels(KernelRegistry& registry);       // Concat, Split, Gather
void register_generator_kernels(KernelRegistry& registry);      // Shape, ConstantOfShape, Range
void register_conv_kernels(KernelRegistry& registry);           // Conv
void register_pool_kernels(KernelRegistry& registry);           // MaxPool, AveragePool, Global...
void register_math_family_kernels(KernelRegistry& registry);      // table_math.cpp's ops
void register_indexing_family_kernels(KernelRegistry& registry);  // table_indexing.cpp's ops
void register_neural_family_kernels(KernelRegistry& registry);    // table_neural.cpp's ops
void register_fused_kernels(KernelRegistry& registry);            // table_fused.cpp's ops

}  // namespace infer::cpu
