#pragma once
// Row-major matrix products through cuBLAS, in f32/f16/bf16 with f32 accumulation (f32 inputs
// rounded to TF32 when the session allows it). Used by MatMul and Gemm, and by Conv after im2col.
// Gemm with a bias row goes to cuBLASLt first (gemm_lt.hpp).
#include "backends/cuda/kernel_support.hpp"

#include <cstdint>

namespace infer::cuda {

// What a product's epilogue applies after the bias: nothing, ReLU, the exact (erf) GELU, or the
// tanh approximation (GPT-2's gelu_new); activation.cuh computes them.
enum class Activation : int { none, relu, gelu, gelu_tanh };

// One operand of a batch of row-major matrices: `ld` is the stored row width, `stride` the
// element distance between consecutive matrices of the batch (0: the same matrix for all).
struct GemmOperand {
    const void* data;
    int64_t ld;
    int64_t stride;
    bool transposed = false;
};

// The cuBLAS type of a matrix of `type`; Unsupported for types without a matrix product.
cudaDataType_t blas_data_type(const Launch& launch, DType type);
// f32 accumulation for every storage type; f32 inputs rounded to TF32 (10-bit mantissa, on tensor
// cores) when the kernel's session allows it.
cublasComputeType_t blas_compute_type(const Launch& launch, DType type);

// C[i] = alpha · op(A[i]) · op(B[i]) + beta · C[i] for i < batch, with C [m, n] row-major.
// With beta == 0, C is not read (it may hold anything).
void gemm_row_major(const Launch& launch, DType type, int64_t m, int64_t n, int64_t k,
                    float alpha, const GemmOperand& a, const GemmOperand& b, float beta, void* c,
                    int64_t ldc, int64_t stride_c, int64_t batch);

}  // namespace infer::cuda
