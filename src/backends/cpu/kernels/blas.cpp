#include "backends/cpu/kernels/blas.hpp"

#include "backends/cpu/kernels/parallel.hpp"

#include <cblas.h>

#include <algorithm>
#include <mutex>

namespace infer::cpu {

namespace {

void single_threaded_openblas() {
    static std::once_flag once;
    std::call_once(once, [] { openblas_set_num_threads(1); });
}

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

}  // namespace

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
    // Blocks of the longer side, multiples of 16 so that every block keeps whole SIMD panels.
    const bool by_rows = m >= n;
    const int64_t extent = by_rows ? m : n;
    const int64_t block = round_up((extent + tasks - 1) / tasks, 16);
    const int64_t blocks = (extent + block - 1) / block;
    parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            const int64_t start = i * block, size = std::min(block, extent - start);
            if (by_rows)  // rows of op(A) are columns of A when it is transposed
                sgemm_serial(trans_a, trans_b, size, n, k, alpha, trans_a ? a + start : a + start * lda, lda, b,
                             ldb, beta, c + start * ldc, ldc);
            else  // columns of op(B) are rows of B when it is transposed
                sgemm_serial(trans_a, trans_b, m, size, k, alpha, a, lda, trans_b ? b + start * ldb : b + start,
                             ldb, beta, c + start, ldc);
        }
    });
}

}  // namespace infer::cpu
