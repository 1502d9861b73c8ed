#include "backends/cpu/kernels/attention_head.hpp"

#include "backends/cpu/kernels/packed_float_gemm.hpp"
#include "backends/cpu/kernels/transpose8x8.hpp"
#include "backends/cpu/kernels/neural_normalization.hpp"
#include "backends/cpu/kernels/vector_exp.hpp"
#include "backends/cpu/kernels/vector_lanes.hpp"

#include <algorithm>
#include <limits>

namespace infer::cpu {

namespace {

constexpr int64_t kBlockRows = 8;  // query rows whose scores stay in L1 together

// Keys padded to a whole number of the widest step below (two 16-float vectors).
int64_t padded_keys(int64_t sk) { return (sk + 31) / 32 * 32; }

// Vectors of columns per step: with 32 registers, AVX-512 keeps 8 rows × 2 vectors of sums
// (16 FMAs for 2 loads and 8 broadcasts); AVX2's 16 registers hold 8 rows × 1.
template <class V>
inline constexpr int64_t kStepVectors = kLanes<V> == 16 ? 2 : 1;

// acc[r][c] = Σ_s a[r·a_row + s] · b[s·b_row + c·L .. + L] over `steps` steps s, for the
// kBlockRows rows of a (all readable): a block of rows times a row of C vectors, the a values
// broadcast. Both products of a head are this.
template <class V, int64_t C>
[[gnu::always_inline]] inline void block_product(const float* a, int64_t a_row, const float* b, int64_t b_row,
                                                 int64_t steps, V (&acc)[kBlockRows][C]) {
    for (auto& row : acc)
        for (V& sum : row) sum = splat<V>(0.0f);
    for (int64_t step = 0; step < steps; ++step) {
        V columns[C];
        for (int64_t c = 0; c < C; ++c) columns[c] = load_lanes<V>(b + step * b_row + c * kLanes<V>);
        for (int64_t r = 0; r < kBlockRows; ++r) {
            const float value = a[r * a_row + step];
            for (int64_t c = 0; c < C; ++c) acc[r][c] += value * columns[c];
        }
    }
}

// Scores of kBlockRows query rows (q, rows q_row apart) against the transposed keys kt [d, skp]:
// s[r, j] = scale · Σ_t q[r, t] · kt[t, j], C vectors of keys at a time.
template <class V, int64_t C>
[[gnu::always_inline]] inline void block_scores(const float* q, int64_t q_row, const float* kt, int64_t skp,
                                                int64_t d, float scale, float* s) {
    for (int64_t j = 0; j < skp; j += C * kLanes<V>) {
        V acc[kBlockRows][C];
        block_product<V, C>(q, q_row, kt + j, skp, d, acc);
        for (int64_t r = 0; r < kBlockRows; ++r)
            for (int64_t c = 0; c < C; ++c) store_lanes(s + r * skp + j + c * kLanes<V>, acc[r][c] * scale);
    }
}

// out[r, c] = Σ_j p[r, j] · v[j, c] for the block's `rows` rows, C vectors of V's columns from
// column c0.
template <class V, int64_t C>
[[gnu::always_inline]] inline void block_values(const float* p, int64_t skp, const float* v, int64_t v_row,
                                                int64_t sk, int64_t c0, const float (&inverse)[kBlockRows], float* out,
                                                int64_t out_row, int64_t rows) {
    V acc[kBlockRows][C];
    block_product<V, C>(p, skp, v + c0, v_row, sk, acc);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < C; ++c) store_lanes(out + r * out_row + c0 + c * kLanes<V>, acc[r][c] * inverse[r]);
}

// The softmax of a block's score rows s [kBlockRows, skp], `rows` of them real: each row plus
// its bias becomes e^(x - the row's largest) in place, and inverse[r] is 1 / the row's sum,
// applied to the row's outputs (dv values) instead of to its Sk probabilities. Several rows go
// side by side through each pass, so that their dependent chains (the largest, the exps, the
// sum) overlap; row by row, through softmax_row, the block's softmax took as long as its two
// products. Keys past sk are -inf here, so the passes run over whole vectors.
template <class V>
[[gnu::always_inline]] inline void block_softmax(float* s, int64_t skp, const AttentionHead& h, int64_t i0,
                                                 int64_t rows, float (&inverse)[kBlockRows]) {
    constexpr int64_t L = kLanes<V>;
    // Rows at a time: AVX2's 16 registers hold 4 rows' sums and largest values beside exp's own.
    constexpr int64_t R = L == 16 ? 8 : 4;
    for (int64_t r = 0; r < kBlockRows; ++r) {
        float* row = s + r * skp;
        if (h.bias && r < rows) add_bias_row(row, h.bias + (i0 + r) * h.bias_row, h.sk, h.bias_column);
        std::fill(row + h.sk, row + skp, -std::numeric_limits<float>::infinity());
    }
    for (int64_t r0 = 0; r0 < kBlockRows; r0 += R) {
        float* first = s + r0 * skp;
        V largest[R], sums[R];
        for (V& m : largest) m = splat<V>(-std::numeric_limits<float>::infinity());
        for (V& sum : sums) sum = splat<V>(0.0f);
        for (int64_t j = 0; j < skp; j += L)
            for (int64_t r = 0; r < R; ++r) {
                const V x = load_lanes<V>(first + r * skp + j);
                largest[r] = x > largest[r] ? x : largest[r];
            }
        float top[R];
        for (int64_t r = 0; r < R; ++r) top[r] = lane_max(largest[r]);
        for (int64_t j = 0; j < skp; j += L)
            for (int64_t r = 0; r < R; ++r) {
                float* at = first + r * skp + j;
                const V e = exp_lanes(load_lanes<V>(at) - top[r]);
                store_lanes(at, e);
                sums[r] += e;
            }
        for (int64_t r = 0; r < R; ++r) inverse[r0 + r] = 1.0f / lane_sum(sums[r]);
    }
}

// kt[t, j] = K[j, t] for j < sk, zero up to skp: 8 × 8 blocks transposed in registers where d
// allows (element by element, the strided reads took a fifth of the head's time).
__attribute__((target("avx2"))) void transpose_keys(const float* k, int64_t k_row, int64_t sk, int64_t d, float* kt,
                                                    int64_t skp) {
    int64_t j = 0;
    if (d % 8 == 0)
        for (; j + 8 <= sk; j += 8)
            for (int64_t t = 0; t < d; t += 8) {
                __m256 r[8];
                for (int64_t i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(k + (j + i) * k_row + t);
                transpose8x8(r);
                for (int64_t i = 0; i < 8; ++i) _mm256_storeu_ps(kt + (t + i) * skp + j, r[i]);
            }
    for (int64_t t = 0; t < d; ++t) {
        float* row = kt + t * skp;
        for (int64_t jj = j; jj < sk; ++jj) row[jj] = k[jj * k_row + t];
        std::fill(row + sk, row + skp, 0.0f);
    }
}

template <class V>
[[gnu::always_inline]] inline void head_lanes(const AttentionHead& h, float* scratch) {
    const int64_t skp = padded_keys(h.sk);
    float* kt = scratch;                     // [d, skp], the keys past sk zero
    float* s = kt + h.d * skp;               // [kBlockRows, skp]
    float* q_block = s + kBlockRows * skp;   // [kBlockRows, d]: the last block's rows, zero-padded
    transpose_keys(h.k, h.k_row, h.sk, h.d, kt, skp);
    for (int64_t i0 = 0; i0 < h.sq; i0 += kBlockRows) {
        const int64_t rows = std::min(kBlockRows, h.sq - i0);
        const float* q = h.q + i0 * h.q_row;
        int64_t q_row = h.q_row;
        if (rows < kBlockRows) {
            std::fill(q_block, q_block + kBlockRows * h.d, 0.0f);
            for (int64_t r = 0; r < rows; ++r) std::copy_n(q + r * h.q_row, h.d, q_block + r * h.d);
            q = q_block;
            q_row = h.d;
        }
        block_scores<V, kStepVectors<V>>(q, q_row, kt, skp, h.d, h.scale, s);
        float inverse[kBlockRows];
        block_softmax<V>(s, skp, h, i0, rows, inverse);
        constexpr int64_t step = kStepVectors<V> * kLanes<V>;
        float* out = h.out + i0 * h.out_row;
        int64_t c0 = 0;
        for (; c0 + step <= h.dv; c0 += step)
            block_values<V, kStepVectors<V>>(s, skp, h.v, h.v_row, h.sk, c0, inverse, out, h.out_row, rows);
        for (; c0 < h.dv; c0 += kLanes<V>)
            block_values<V, 1>(s, skp, h.v, h.v_row, h.sk, c0, inverse, out, h.out_row, rows);
    }
}

__attribute__((target("avx512f"))) void head_avx512(const AttentionHead& h, float* scratch) {
    head_lanes<__m512>(h, scratch);
}
__attribute__((target("avx2,fma"))) void head_avx2(const AttentionHead& h, float* scratch) {
    head_lanes<__m256>(h, scratch);
}

}  // namespace

// The kernel follows the f32 product kernel's choice (INFER_FLOAT_GEMM lowers it, so tests run
// each width, and the sgemm path under blas, on one machine).
AttentionHeadKernel attention_head_kernel(int64_t sq, int64_t dv) {
    if (sq < kBlockRows) return nullptr;
    switch (f32_gemm_kernel()) {
        case FloatGemmKernel::avx512: return dv % 16 == 0 ? head_avx512 : nullptr;
        case FloatGemmKernel::avx2: return dv % 8 == 0 ? head_avx2 : nullptr;
        default: return nullptr;
    }
}

size_t attention_head_scratch(int64_t sk, int64_t d) {
    return static_cast<size_t>((d + kBlockRows) * padded_keys(sk) + kBlockRows * d);
}

}  // namespace infer::cpu
