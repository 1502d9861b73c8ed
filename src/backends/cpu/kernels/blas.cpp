#include "backends/cpu/kernels/blas.hpp"

#include "backends/cpu/kernels/gemm_grid.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "core/log.hpp"

#include <cblas.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
#include <string>

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

}  // namespace

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
    single_threaded_openblas();
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
                static_cast<blasint>(m), static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c, static_cast<blasint>(ldc));
}

void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
           int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    const int64_t tasks = std::min<int64_t>(pool_thread_count(), m * n * k / kParallelGemmWork);
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
