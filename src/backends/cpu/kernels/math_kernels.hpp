#pragma once
// Registration functions of the math family's kernel files; math_family.cpp calls them all.
#include <infer/backend.hpp>

namespace infer::cpu {

void register_math_arithmetic_kernels(KernelRegistry& registry);  // Add ... Greater, Where
void register_math_function_kernels(KernelRegistry& registry);    // Sqrt ... Gelu, Not
void register_math_cast_kernels(KernelRegistry& registry);        // Cast
void register_math_matmul_kernels(KernelRegistry& registry);      // MatMul, Gemm
void register_math_reduce_sum_kernels(KernelRegistry& registry);  // ReduceMean/Sum/Max
void register_math_unary_kernels(KernelRegistry& registry);       // trigonometry, rounding, IsNaN
void register_math_activation_kernels(KernelRegistry& registry);  // LeakyRelu ... Mish
void register_math_binary_kernels(KernelRegistry& registry);      // Mod, logic, PRelu, Clip
void register_math_variadic_kernels(KernelRegistry& registry);    // Min, Max, Sum, Mean
void register_math_reduce_kernels(KernelRegistry& registry);      // ReduceMin ... ReduceL2
void register_math_axis_kernels(KernelRegistry& registry);        // LogSoftmax ... CumSum
void register_math_einsum_kernels(KernelRegistry& registry);      // Einsum
void register_math_det_kernels(KernelRegistry& registry);         // Det

}  // namespace infer::cpu
