#pragma once
// MatMul and FusedMatMul by a constant 2-D weight, in f32 and bf16, on the packed kernels of
// packed_float_gemm.hpp: the weight packed once per session, the bias and activation (and the
// narrowing of a bf16 output) done on each tile as it leaves the registers. Other forms (a
// weight computed at run time, batched weights, a CPU without the kernels) keep the kernel
// registered before.
#include <infer/backend.hpp>

#include <string>

namespace infer::cpu {

// Wraps op's f32 and bf16 kernels, which must be registered already. FusedMatMul reads input
// 2 as its bias and its `activation` attribute; MatMul has neither.
void add_packed_weight_product(KernelRegistry& registry, const std::string& op);

}  // namespace infer::cpu
