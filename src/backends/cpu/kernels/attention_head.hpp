#pragma once
// One attention head in f32, softmax(Q·Kᵀ·scale + bias)·V, on vector kernels of our own (AVX-512
// or AVX2 + FMA, chosen at run time), with the scores of a block of query rows kept in L1:
// the keys are transposed once per head into rows of the sequence, the scores of 8 query rows
// are computed against them by broadcast and FMA, softmaxed in place, and multiplied by V's
// rows (read where they lie) into 8 rows of the output. It replaces two sgemm calls per head
// and a round trip of the [Sq, Sk] scores through memory (MiniLM at batch 8 ran 1 152 such
// calls per inference).
#include <cstddef>
#include <cstdint>

namespace infer::cpu {

struct AttentionHead {
    const float* q;  // Q[i, t] = q[i·q_row + t]
    const float* k;  // K[j, t] = k[j·k_row + t]
    const float* v;  // V[j, c] = v[j·v_row + c]
    float* out;      // O[i, c] = out[i·out_row + c]
    int64_t q_row, k_row, v_row, out_row;
    int64_t sq, sk, d, dv;
    float scale;
    const float* bias;  // bias[i·bias_row + j·bias_column] added to the scaled scores, or null
    int64_t bias_row, bias_column;
};

// One head; `scratch` holds attention_head_scratch(sk, d) floats.
using AttentionHeadKernel = void (*)(const AttentionHead& head, float* scratch);

// The vector kernel of the f32 product kernel in use (packed_float_gemm.hpp: avx512 or avx2)
// for heads of `dv` values (a whole number of its vectors) and `sq` queries, or null. Chosen
// once per run, not per head (the choice reads INFER_FLOAT_GEMM). A decode step's few queries
// (fewer than a block of 8) keep sgemm: transposing every key for one query row would read and
// write the keys twice more, and its scratch would grow from Sk floats a head to (d + 8) · Sk.
AttentionHeadKernel attention_head_kernel(int64_t sq, int64_t dv);
// Floats of scratch one head needs (keys transposed, a block's scores, a padded block of Q).
size_t attention_head_scratch(int64_t sk, int64_t d);

}  // namespace infer::cpu
