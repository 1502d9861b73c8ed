#pragma once
// Gemm with a bias row through cuBLASLt: the product, alpha and the bias in one kernel (the bias
// epilogue) instead of a broadcast copy of the bias followed by a product that reads it back.
#include "backends/cuda/gemm.hpp"

namespace infer::cuda {

// What cuBLASLt applies after the product: the bias, or the bias then ReLU (exact, unlike its
// GELU epilogue, which is the tanh approximation and so not used for ONNX's Gelu).
enum class GemmEpilogue { bias, bias_relu };

// Y = alpha · op(A) · op(B) + addend + bias (then ReLU for bias_relu), with Y [m, n] row-major
// and dense, bias [n] added to every row, the addend (a residual, or null) laid out as Y, all
// in `type` (f32, f16 or bf16). Returns false, having enqueued nothing, when cuBLASLt has no
// algorithm for it (or the bias is not aligned as its kernels need); the caller then takes the
// cuBLAS path.
bool gemm_bias_epilogue(const Launch& launch, DType type, int64_t m, int64_t n, int64_t k,
                        float alpha, const GemmOperand& a, const GemmOperand& b, const void* bias,
                        void* y, GemmEpilogue epilogue = GemmEpilogue::bias, const void* addend = nullptr);

}  // namespace infer::cuda
