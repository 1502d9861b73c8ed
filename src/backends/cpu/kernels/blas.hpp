#pragma once
// Single-precision matrix products for the CPU kernels, row-major, through OpenBLAS.
//
// The process has one thread pool, ours. OpenBLAS runs single-threaded: its own threads spin
// between calls, and two pools on the same cores would fight each other. A product large
// enough to share is cut into a grid of blocks over our pool (gemm_grid.hpp).
#include <cstdint>
#include <string>

namespace infer::cpu {

// C = alpha * op(A) op(B) + beta * C, op(A) m×k, op(B) k×n; parallel over the pool when large,
// inline when called from inside a pool task.
void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// The same on the calling thread only, for callers that already spread products over the pool.
void sgemm_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

// C = A·B for at most kStreamRows rows of A (f32) and B [k, n] of f16 or bf16 bits, row-major,
// B read once and widened a block at a time in cache: a decode step's product with 16-bit
// weights reads half the bytes of f32 ones. Parallel over the pool by blocks of columns.
inline constexpr int64_t kStreamRows = 8;
void gemm_rows_16bit_weights(int64_t m, int64_t n, int64_t k, const float* a, const uint16_t* b, bool bfloat16,
                             float* c);

// Which BLAS this is and which kernels it picked for this CPU, e.g. "OpenBLAS 0.3.21 ...
// (kernels: SkylakeX)": a generic kernel choice on a new CPU costs a large factor, so benchmarks
// record it.
std::string blas_description();

// Multiply-adds below which a product is not worth splitting across threads.
inline constexpr int64_t kParallelGemmWork = int64_t{1} << 19;

}  // namespace infer::cpu
