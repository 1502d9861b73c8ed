#pragma once
// Attention for f16 and bf16 in one kernel, the scores never leaving the chip: each block takes
// 64 query rows of one (batch, head), walks the keys 64 at a time with tensor-core products
// (mma.sync m16n8k16, f32 accumulation) and keeps a running softmax (max and sum per row, the
// partial output rescaled when the max grows). Memory traffic is Q, K, V and the output once,
// where the cuBLAS path writes and reads a [B, H, Sq, Sk] score tensor three times.
#include "backends/cuda/kernel_support.hpp"

#include <cstdint>

namespace infer::cuda {

// Element strides of a bias broadcast to [B, H, Sq, Sk] (0 along broadcast axes).
struct BiasStrides {
    int64_t batch = 0, head = 0, query = 0, key = 0;
};

// Q [B, Sq, H·D], K [B, Sk, H·D], V [B, Sk, H·D] with `input_row` elements from one sequence
// position to the next (H·D, or 3·H·D where the three come packed in one tensor), out
// [B, Sq, H·D] contiguous; the bias, when present, is added to the scaled scores.
struct AttentionProblem {
    DType type;
    const void *q, *k, *v, *bias;
    void* out;
    int64_t batch, heads, sq, sk, head_dim, input_row;
    BiasStrides bias_strides;
    float scale;
};

// Whether the fused kernel covers a problem of this dtype and head sizes (f16/bf16, the key and
// value heads of one size among 32, 64, 96, 128); the caller falls back otherwise.
bool flash_attention_covers(DType type, int64_t head_dim, int64_t value_head_dim);

// Runs the fused kernel; returns false (having done nothing) for a problem it does not cover,
// including operands not aligned to 16 bytes.
bool flash_attention(const Launch& launch, const AttentionProblem& problem);

}  // namespace infer::cuda
