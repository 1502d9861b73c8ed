#pragma once
// Products of a few rows by a weight (a decode step, a batch-1 request): Y = act(alpha · A · B +
// bias) with A [m, k], m ≤ 8, in one kernel of our own. cuBLAS runs such a product as a general
// GEMM tile (about 14 µs for one 768-wide row on an H200, where the weight takes under 1 µs to
// read), and its bias epilogue cannot apply GELU; here the weight is streamed once with 16-byte
// loads, the rows of A reused for every weight element, and bias and activation applied before
// the single store.
#include "backends/cuda/gemm.hpp"

#include <cstdint>

namespace infer::cuda {

// The most rows the skinny kernel takes; more go through cuBLAS, whose tiles then fill.
inline constexpr int64_t kSkinnyRows = 8;

struct SkinnyProduct {
    DType type;           // f32, f16 or bf16 for A, B, bias and Y
    const void* a;        // [m, k] row-major, rows lda apart
    int64_t lda;
    const void* b;        // [k, n] row-major, or [n, k] when b_transposed, rows ldb apart
    int64_t ldb;
    bool b_transposed;
    const void* bias;     // [n] or nullptr
    void* y;              // [m, n] row-major, rows ldy apart
    int64_t ldy;
    int64_t m, n, k;
    float alpha;
    Activation activation;
};

// Runs the product and returns true, or returns false having enqueued nothing when it is not one
// the kernel covers (more than kSkinnyRows rows, an empty k, sizes past 32-bit indexing); the
// caller then takes the cuBLAS path.
bool skinny_gemm(const Launch& launch, const SkinnyProduct& product);

}  // namespace infer::cuda
