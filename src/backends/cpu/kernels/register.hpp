#pragma once
// One registration function per op family (src/core/ops/table_<family>.cpp); the CPU backend
// calls them all, and each family's <family>_family.cpp (fused.cpp) calls its files in turn.
#include <infer/backend.hpp>

namespace infer::cpu {

void register_math_family_kernels(KernelRegistry& registry);      // table_math.cpp's ops
void register_indexing_family_kernels(KernelRegistry& registry);  // table_indexing.cpp's ops
void register_neural_family_kernels(KernelRegistry& registry);    // table_neural.cpp's ops
void register_control_family_kernels(KernelRegistry& registry);   // table_control.cpp's ops
void register_fused_kernels(KernelRegistry& registry);            // table_fused.cpp's ops
void register_quantized_matmul_kernel(KernelRegistry& registry);  // QuantizedMatMul, of the fused family
void register_bf16_attention_kernel(KernelRegistry& registry);    // Attention in bf16 on AVX512_BF16
void register_silu_kernel(KernelRegistry& registry);              // Silu, of the fused family
void register_quantized_add_kernel(KernelRegistry& registry);     // QuantizedAdd, of the fused family

}  // namespace infer::cpu
