#pragma once
// f16 and bf16 support for kernels that compute in f32: convert at the kernel boundary.
// Inputs and outputs whose dtype is f16 or bf16 become f32 scratch tensors around a call of
// the f32 kernel; every other tensor (indices, conditions, shapes) passes through untouched.
#include <infer/backend.hpp>

#include <string>

namespace infer::cpu {

// A float tensor's values (f32, f16 or bf16) as f32, into `out` (t.numel() of them).
void widen_to_float(const Tensor& t, float* out);
// `t.numel()` f32 values rounded into the 16-bit tensor `t` (f16 or bf16).
void narrow_from_float(const float* values, Tensor& t);

// The f32 kernel made by `f32_factory`, run on f32 copies of the 16-bit inputs.
KernelFactory with_f32_compute(KernelFactory f32_factory);
KernelFactory with_f32_compute(const Kernel& f32_kernel);

// Registers `f32_kernel` under f32 and, converted at the boundary, under f16 and bf16.
void add_floating(KernelRegistry& registry, const std::string& op, const Kernel& f32_kernel);
// Registers op's f32 kernel, converted at the boundary, under f16 and bf16.
void add_f32_compute(KernelRegistry& registry, const std::string& op);

}  // namespace infer::cpu
