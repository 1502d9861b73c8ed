#pragma once
// MatMul and FusedMatMul in f16/bf16 on the CPU. A few rows (a decode step, a single request) by
// a 2-D weight stream the 16-bit weight itself, widening it a block at a time in cache: half the
// bytes an f32 weight takes, where converting the whole weight to f32 first (the boundary
// conversion every other 16-bit kernel uses) reads it once and writes and reads twice its size.
// Other shapes go through the boundary conversion.
#include <infer/backend.hpp>

#include <cstdint>
#include <string>

namespace infer::cpu {

// What follows the product in a fused op: `bias` (f32, [n], or null) and the node's activation
// on y [rows, n].
using ProductEpilogue = void (*)(const KernelContext& ctx, const float* bias, float* y, int64_t rows, int64_t n);

// Registers op's f16 and bf16 kernels: the streamed product above (then `epilogue`, if any, with
// input 2 as the bias), else op's f32 kernel, which must be registered already, converted at
// the boundary.
void add_16bit_weight_product(KernelRegistry& registry, const std::string& op, ProductEpilogue epilogue);

}  // namespace infer::cpu
