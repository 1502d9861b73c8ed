#include "backends/cpu/kernels/blas.hpp"

#include "backends/cpu/kernels/gemm_grid.hpp"
#include "backends/cpu/kernels/half_convert.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "core/log.hpp"

#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace infer::cpu {

namespace {

// OpenBLAS picks its kernels once, when it loads, from the CPU's model number. A CPU it does not
// know (a newer one, or a virtual machine that hides the model) gets its generic Prescott
// kernels: SSE3 only, 2-3 times slower than the AVX-512 ones on the same cores (measured on a
// 16-core Xeon VM: DistilBERT batch 1, 90 ms against 38 ms). Only the OPENBLAS_CORETYPE
// environment variable, set before the process starts, changes the choice.
std::optional<std::string> better_coretype() {
    static const std::set<std::string> pre_avx2{"Prescott", "Core2",    "Penryn",    "Dunnington", "Nehalem",
                                                "Atom",     "Katmai",   "Coppermine", "Northwood", "Banias",
                                                "Opteron",  "Barcelona", "Bobcat",   "Sandybridge", "Bulldozer",
                                                "Piledriver"};
    if (!pre_avx2.contains(openblas_get_corename())) return std::nullopt;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
    return std::nullopt;
}

void single_threaded_openblas() {
    static std::once_flag once;
    std::call_once(once, [] {
        openblas_set_num_threads(1);
        if (const auto coretype = better_coretype())
            detail::logger().warn(
                "OpenBLAS chose its generic {} kernels for this CPU, which has faster instructions: matrix "
                "products will be 2-3x slower than they could be. Start the program with "
                "OPENBLAS_CORETYPE={} in the environment.",
                openblas_get_corename(), *coretype);
    });
}

// C = alpha·A·B + beta·C for a few rows of A (m <= kStreamRows), B not transposed: each element
// of B is read once, in row order, and the rows of C it meets stay in L1. OpenBLAS's sgemm packs
// B into panels first, which for a decode step's products (one token or a few: the whole weight
// matrix for a handful of rows) reads and writes every weight twice more than the product
// needs: measured on 2 Zen 4 cores, x·W for GPT-2's 768×50257 head ran at 8 GB/s of weights
// with m = 1..8, against 28 GB/s streamed. Four rows of B at a time, so that each pass over a
// block of C does four multiply-adds per load and store of C.
constexpr int64_t kStreamColumns = 512;  // a block of C, kStreamRows x 2 KB, stays in L1

void stream_rows_gemm(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                      int64_t ldb, float beta, float* c, int64_t ldc) {
    for (int64_t n0 = 0; n0 < n; n0 += kStreamColumns) {
        const int64_t width = std::min(kStreamColumns, n - n0);
        for (int64_t i = 0; i < m; ++i) {
            float* row = c + i * ldc + n0;
            for (int64_t j = 0; j < width; ++j) row[j] = beta == 0.0f ? 0.0f : beta * row[j];
        }
        int64_t kk = 0;
        for (; kk + 4 <= k; kk += 4) {
            const float* b0 = b + kk * ldb + n0;
            const float *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
            for (int64_t i = 0; i < m; ++i) {
                const float* ai = a + i * lda + kk;
                const float a0 = alpha * ai[0], a1 = alpha * ai[1], a2 = alpha * ai[2], a3 = alpha * ai[3];
                float* __restrict row = c + i * ldc + n0;
                for (int64_t j = 0; j < width; ++j) row[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j];
            }
        }
        for (; kk < k; ++kk) {
            const float* bk = b + kk * ldb + n0;
            for (int64_t i = 0; i < m; ++i) {
                const float ak = alpha * a[i * lda + kk];
                float* __restrict row = c + i * ldc + n0;
                for (int64_t j = 0; j < width; ++j) row[j] += ak * bk[j];
            }
        }
    }
}

// C (m rows, n wide, rows ldc apart) += A[:, k0:k1] · B[k0:k1, :] with B read front to back,
// four rows of it at a time, all n columns in one sweep: each pass streams consecutive memory,
// which the prefetchers follow at the cores' full bandwidth. Used where m rows of C fit in L2.
void stream_rows_sweep(int64_t m, int64_t n, int64_t k0, int64_t k1, float alpha, const float* a, int64_t lda,
                       const float* b, int64_t ldb, float* c, int64_t ldc) {
    int64_t kk = k0;
    for (; kk + 4 <= k1; kk += 4) {
        const float* b0 = b + kk * ldb;
        const float *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
        for (int64_t i = 0; i < m; ++i) {
            const float* ai = a + i * lda + kk;
            const float a0 = alpha * ai[0], a1 = alpha * ai[1], a2 = alpha * ai[2], a3 = alpha * ai[3];
            float* __restrict row = c + i * ldc;
            for (int64_t j = 0; j < n; ++j) row[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j];
        }
    }
    for (; kk < k1; ++kk) {
        const float* bk = b + kk * ldb;
        for (int64_t i = 0; i < m; ++i) {
            const float ak = alpha * a[i * lda + kk];
            float* __restrict row = c + i * ldc;
            for (int64_t j = 0; j < n; ++j) row[j] += ak * bk[j];
        }
    }
}

// A decode step's product (a few rows by a weight larger than the caches) over the pool: the
// weight's rows split into one contiguous range per thread, each thread sweeping its range into
// its own partial C, the partials summed at the end (m·n adds against k·n weights read). Split by
// columns instead, each thread would read a short stretch of every row of B, which on 2 Zen 4
// cores streamed GPT-2's weights at 21-26 GB/s where a sequential read reaches 31.
constexpr int64_t kSweepBytes = 256 << 10;  // m rows of C kept in L2 while B streams past

// The split itself: B's k rows in one contiguous range per thread (whole groups of four, the
// last taking the rest), sweep(k0, k1, partial) filling each thread's zeroed m × n partial,
// then C = beta·C + the partials' sum. False, doing nothing, when m rows of C exceed
// kSweepBytes or there is too little work to share.
template <class Sweep>
bool split_weight_rows(int64_t m, int64_t n, int64_t k, float beta, float* c, int64_t ldc, Sweep&& sweep) {
    if (m * n * static_cast<int64_t>(sizeof(float)) > kSweepBytes) return false;
    const int64_t tasks = std::min<int64_t>({int64_t{pool_thread_count()}, k / 4, k * n * kStreamRows / kParallelGemmWork});
    if (tasks <= 1) return false;
    std::vector<float> partial(static_cast<size_t>(tasks * m * n), 0.0f);
    const int64_t per = (k / 4 + tasks - 1) / tasks * 4;
    parallel_for(tasks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const int64_t k0 = std::min(k, t * per), k1 = t + 1 == tasks ? k : std::min(k, k0 + per);
            sweep(k0, k1, partial.data() + t * m * n);
        }
    });
    // The partials' sum, over the pool by column blocks: for a vocabulary head on 16 threads it
    // reads 2 MB of partials, a tenth of the product's time if one thread did it.
    parallel_for(n, grain_for(m * tasks), [&](int64_t j0, int64_t j1) {
        for (int64_t i = 0; i < m; ++i) {
            float* row = c + i * ldc;
            for (int64_t j = j0; j < j1; ++j) {
                float sum = beta == 0.0f ? 0.0f : beta * row[j];
                for (int64_t t = 0; t < tasks; ++t) sum += partial[static_cast<size_t>((t * m + i) * n + j)];
                row[j] = sum;
            }
        }
    });
    return true;
}

bool stream_rows_parallel(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                          int64_t ldb, float beta, float* c, int64_t ldc) {
    return split_weight_rows(m, n, k, beta, c, ldc, [&](int64_t k0, int64_t k1, float* partial) {
        stream_rows_sweep(m, n, k0, k1, alpha, a, lda, b, ldb, partial, n);
    });
}

// 16-bit values widened to f32 in registers: the library-wide conversions split large arrays over
// the pool, which for a 1 KB row costs more than the conversion.
__attribute__((target("avx2,f16c"))) void widen_row_avx2(const uint16_t* src, float* dst, int64_t count, bool bfloat16) {
    int64_t j = 0;
    for (; j + 8 <= count; j += 8) {
        const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j));
        const __m256 values = bfloat16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16))
                                       : _mm256_cvtph_ps(bits);
        _mm256_storeu_ps(dst + j, values);
    }
    if (j < count) {
        if (bfloat16)
            bfloat16_to_float(src + j, dst + j, static_cast<size_t>(count - j));
        else
            half_to_float(src + j, dst + j, static_cast<size_t>(count - j));
    }
}

void widen_row(const uint16_t* src, float* dst, int64_t count, bool bfloat16) {
    static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
    if (avx2) {
        widen_row_avx2(src, dst, count, bfloat16);
    } else if (bfloat16) {
        bfloat16_to_float(src, dst, static_cast<size_t>(count));
    } else {
        half_to_float(src, dst, static_cast<size_t>(count));
    }
}

// One block of columns [n0, n0 + width) of gemm_rows_16bit_weights: four rows of B widened into
// an L1 tile, then the same multiply-adds as stream_rows_gemm.
void rows_16bit_block(int64_t m, int64_t n, int64_t k, const float* a, const uint16_t* b, bool bfloat16, float* c,
                      int64_t n0, int64_t width) {
    float tile[4][kStreamColumns];
    for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * n + n0, width, 0.0f);
    for (int64_t kk = 0; kk < k; kk += 4) {
        const int64_t depth = std::min<int64_t>(4, k - kk);
        for (int64_t r = 0; r < depth; ++r) widen_row(b + (kk + r) * n + n0, tile[r], width, bfloat16);
        for (int64_t r = depth; r < 4; ++r) std::fill_n(tile[r], width, 0.0f);
        for (int64_t i = 0; i < m; ++i) {
            const float* ai = a + i * k + kk;
            const float a0 = ai[0], a1 = depth > 1 ? ai[1] : 0.0f, a2 = depth > 2 ? ai[2] : 0.0f, a3 = depth > 3 ? ai[3] : 0.0f;
            float* __restrict row = c + i * n + n0;
            for (int64_t j = 0; j < width; ++j) row[j] += a0 * tile[0][j] + a1 * tile[1][j] + a2 * tile[2][j] + a3 * tile[3][j];
        }
    }
}

}  // namespace

// stream_rows_sweep with 16-bit B widened in registers, eight columns at a time: C[:, :] +=
// A[:, k0:k1] · B[k0:k1, :], C rows n apart.
__attribute__((target("avx2,f16c,fma"))) static void sweep_16bit_avx2(int64_t m, int64_t n, int64_t k, int64_t k0, int64_t k1,
                                                                const float* a, const uint16_t* b, bool bfloat16,
                                                                float* c) {
    const auto widen8 = [bfloat16](const uint16_t* p) {
        const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        return bfloat16 ? _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(bits), 16)) : _mm256_cvtph_ps(bits);
    };
    const auto widen1 = [bfloat16](uint16_t v) {
        float f;
        if (bfloat16) bfloat16_to_float(&v, &f, 1);
        else half_to_float(&v, &f, 1);
        return f;
    };
    for (int64_t kk = k0; kk < k1; kk += 4) {
        const int64_t depth = std::min<int64_t>(4, k1 - kk);
        const uint16_t* rows[4];
        for (int64_t r = 0; r < 4; ++r) rows[r] = b + (kk + std::min(r, depth - 1)) * n;
        for (int64_t i = 0; i < m; ++i) {
            const float* ai = a + i * k + kk;
            const float w[4] = {ai[0], depth > 1 ? ai[1] : 0.0f, depth > 2 ? ai[2] : 0.0f, depth > 3 ? ai[3] : 0.0f};
            const __m256 a0 = _mm256_set1_ps(w[0]), a1 = _mm256_set1_ps(w[1]), a2 = _mm256_set1_ps(w[2]), a3 = _mm256_set1_ps(w[3]);
            float* row = c + i * n;
            int64_t j = 0;
            for (; j + 8 <= n; j += 8) {
                __m256 acc = _mm256_loadu_ps(row + j);
                acc = _mm256_fmadd_ps(a0, widen8(rows[0] + j), acc);
                acc = _mm256_fmadd_ps(a1, widen8(rows[1] + j), acc);
                acc = _mm256_fmadd_ps(a2, widen8(rows[2] + j), acc);
                acc = _mm256_fmadd_ps(a3, widen8(rows[3] + j), acc);
                _mm256_storeu_ps(row + j, acc);
            }
            for (; j < n; ++j)
                row[j] += w[0] * widen1(rows[0][j]) + w[1] * widen1(rows[1][j]) + w[2] * widen1(rows[2][j]) +
                          w[3] * widen1(rows[3][j]);
        }
    }
}

// The 16-bit form of stream_rows_parallel: contiguous ranges of B's rows per thread, partial
// results summed. False where it does not apply (no AVX2/F16C, C too large for L2, too little
// work to share).
static bool rows_16bit_parallel(int64_t m, int64_t n, int64_t k, const float* a, const uint16_t* b, bool bfloat16, float* c) {
    static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c") && __builtin_cpu_supports("fma");
    return avx2 && split_weight_rows(m, n, k, 0.0f, c, n, [&](int64_t k0, int64_t k1, float* partial) {
               sweep_16bit_avx2(m, n, k, k0, k1, a, b, bfloat16, partial);
           });
}

void gemm_rows_16bit_weights(int64_t m, int64_t n, int64_t k, const float* a, const uint16_t* b, bool bfloat16,
                             float* c) {
    if (rows_16bit_parallel(m, n, k, a, b, bfloat16, c)) return;
    const int64_t blocks = (n + kStreamColumns - 1) / kStreamColumns;
    // Small products stay on the calling thread: a block is k·512 multiply-adds per row.
    const int64_t grain = std::max<int64_t>(1, kParallelGemmWork / std::max<int64_t>(1, k * kStreamColumns * kStreamRows));
    parallel_for(blocks, grain, [&](int64_t begin, int64_t end) {
        for (int64_t block = begin; block < end; ++block) {
            const int64_t n0 = block * kStreamColumns;
            rows_16bit_block(m, n, k, a, b, bfloat16, c, n0, std::min(kStreamColumns, n - n0));
        }
    });
}

std::string blas_description() {
    std::string config = openblas_get_config();
    while (!config.empty() && config.back() == ' ') config.pop_back();
    std::string kernels = openblas_get_corename();
    if (const auto coretype = better_coretype())
        kernels += ", generic for this CPU: OPENBLAS_CORETYPE=" + *coretype + " would be faster";
    return config + " (kernels: " + kernels + ")";
}

void sgemm_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    // Weights larger than the caches, met by a few rows: streamed (see stream_rows_gemm).
    single_threaded_openblas();
    if (m == 1 && !trans_a && !trans_b) {
        // A row times B at any size: OpenBLAS's gemv streams B itself, faster than our loop for
        // large weights, and for small ones it skips the packing of B that its gemm does at
        // every call (a third of a tiny MLP's time at batch 1).
        cblas_sgemv(CblasRowMajor, CblasTrans, static_cast<blasint>(k), static_cast<blasint>(n), alpha, b,
                    static_cast<blasint>(ldb), a, 1, beta, c, 1);
        return;
    }
    if (!trans_a && !trans_b && m <= kStreamRows && k * n >= (int64_t{1} << 18)) {
        stream_rows_gemm(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    if (m == 1 && trans_b) {
        // One row times Bᵀ (a classifier's Gemm at batch 1, weights [n, k]): each output is a
        // dot product with a row of B, which gemv streams at the memory's rate; OpenBLAS's gemm
        // read ResNet-50's 8 MB head at a third of it.
        cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<blasint>(n), static_cast<blasint>(k), alpha, b,
                    static_cast<blasint>(ldb), a, trans_a ? static_cast<blasint>(lda) : 1, beta, c, 1);
        return;
    }
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    // A streamed product (few rows) is bound by reading B: worth sharing from a smaller size.
    const bool streamed = !trans_a && !trans_b && m <= kStreamRows;
    if (streamed && k * n >= (int64_t{1} << 18) && stream_rows_parallel(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
        return;
    // A row times Bᵀ is streamed too (sgemm_serial's gemv), shared by blocks of B's rows.
    const int64_t work = streamed || (m == 1 && trans_b) ? k * n * kStreamRows : m * n * k;
    const int64_t tasks = std::min<int64_t>(pool_thread_count(), work / kParallelGemmWork);
    if (tasks <= 1) {
        sgemm_serial(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    const GemmGrid grid = choose_gemm_grid(m, n, tasks);
    parallel_for(grid.blocks(), 1, [&](int64_t begin, int64_t end) {
        for (int64_t b_index = begin; b_index < end; ++b_index) {
            const int64_t row = b_index / grid.col_blocks * grid.block_rows;
            const int64_t col = b_index % grid.col_blocks * grid.block_cols;
            const int64_t rows = std::min(grid.block_rows, m - row), cols = std::min(grid.block_cols, n - col);
            // Rows of op(A) are columns of A when it is transposed; columns of op(B) are rows of B.
            sgemm_serial(trans_a, trans_b, rows, cols, k, alpha, trans_a ? a + row : a + row * lda, lda,
                         trans_b ? b + col * ldb : b + col, ldb, beta, c + row * ldc + col, ldc);
        }
    });
}

}  // namespace infer::cpu
