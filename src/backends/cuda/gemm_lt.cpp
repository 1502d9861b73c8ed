// Gemm + bias (+ an addend as C) through cuBLASLt's bias epilogue. Like the cuBLAS path, the row-major Y = A·B is
// the column-major Yᵀ = Bᵀ·Aᵀ; cuBLASLt's bias runs along the rows of its column-major output,
// which are the columns of our row-major Y, so a bias of length n is added to every row of Y.
//
// Descriptors are initialized on the stack (no allocation); what costs is the choice of
// algorithm, which is cached per problem: shape, types, transposes and pointer alignments (the
// heuristic picks kernels for the alignments it is told about). The heuristic's first choice is
// not always the fastest, so the first time a large problem comes, outside a graph capture, its
// first few candidates are timed on the stream and the fastest is kept (kTunedMultiplyAdds says
// which are large). INFER_GEMM_TUNING=off keeps the heuristic's first choice for all.
#include "backends/cuda/gemm_lt.hpp"

#include "core/log.hpp"

#include <cublasLt.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>

namespace infer::cuda {

namespace {

// cuBLASLt assumes 256-byte aligned matrices unless told otherwise; tensor views can start
// anywhere a whole element does.
uint32_t alignment_of(const void* pointer) {
    const auto address = reinterpret_cast<uintptr_t>(pointer);
    if (address == 0) return 256;
    const uintptr_t lowest_bit = address & (~address + 1);
    return static_cast<uint32_t>(lowest_bit < 256 ? lowest_bit : 256);
}

// The heuristic has no preference for the bias's alignment, and some of its kernels read the
// bias 16 bytes at a time: a less aligned bias goes the cuBLAS way.
constexpr uint32_t kBiasAlignment = 16;

struct Problem {
    int device;
    cudaDataType_t type;
    cublasComputeType_t compute;
    int64_t m, n, k, lda, ldb;
    bool trans_a, trans_b;
    uint32_t align_a, align_b, align_y, align_bias;
    size_t workspace_bytes;
    GemmEpilogue epilogue;
    uint32_t align_addend;  // 0: no addend (beta 0)

    auto tied() const {
        return std::tie(device, type, compute, m, n, k, lda, ldb, trans_a, trans_b, align_a,
                        align_b, align_y, align_bias, workspace_bytes, epilogue, align_addend);
    }
    bool operator<(const Problem& other) const { return tied() < other.tied(); }
};

// Empty when cuBLASLt has nothing for the problem, so that it is not asked again. Problems
// differ by row count, which follows the batch: past kMaxProblems the cache starts over rather
// than grow with the variety of inputs (a heuristic call costs microseconds).
class AlgorithmCache {
public:
    bool find(const Problem& p, std::optional<cublasLtMatmulAlgo_t>& algo) const {
        std::lock_guard lock(mutex_);
        auto it = algorithms_.find(p);
        if (it == algorithms_.end()) return false;
        algo = it->second;
        return true;
    }
    void store(const Problem& p, const std::optional<cublasLtMatmulAlgo_t>& algo) {
        std::lock_guard lock(mutex_);
        if (algorithms_.size() >= kMaxProblems) algorithms_.clear();
        algorithms_[p] = algo;
    }

private:
    static constexpr size_t kMaxProblems = 4096;
    mutable std::mutex mutex_;
    std::map<Problem, std::optional<cublasLtMatmulAlgo_t>> algorithms_;
};

AlgorithmCache& algorithm_cache() {
    static AlgorithmCache cache;
    return cache;
}

template <typename T>
void set(const Launch& l, cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
         const T& value) {
    INFER_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)),
                       l.where());
}

template <typename T>
void set(const Launch& l, cublasLtMatmulPreference_t pref,
         cublasLtMatmulPreferenceAttributes_t attribute, const T& value) {
    INFER_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, attribute, &value, sizeof(value)),
                       l.where());
}

// The column-major layout of a row-major operand as stored: rows × cols of the transposed
// view, before cuBLASLt's own transpose.
void init_layout(const Launch& l, cublasLtMatrixLayoutOpaque_t& layout, cudaDataType_t type,
                 int64_t rows, int64_t cols, int64_t ld) {
    INFER_CUBLAS_CHECK(cublasLtMatrixLayoutInit(&layout, type, static_cast<uint64_t>(rows),
                                                static_cast<uint64_t>(cols), ld),
                       l.where());
}

std::string sizes(int64_t m, int64_t n, int64_t k) {
    return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k);
}

// Candidates timed per problem, and runs per candidate (after one untimed).
constexpr int kCandidates = 8, kTimedRuns = 3;

// Products smaller than this many multiply-adds keep the heuristic's first choice. Timing paid
// off only at large ones (DistilBERT's products at batch 512: 10.06 ms with the timed choice,
// 10.44 with the first); at batch 1 and sequence 128 (128 rows, at most 0.3 G multiply-adds) the
// timed choices ran no faster end to end (f16 batch 1 0.266-0.269 ms with them, 0.264-0.265
// without, H100), while timing them took 70-100 ms of an f16 session's first run.
constexpr double kTunedMultiplyAdds = double(int64_t{1} << 30);

bool tuning_enabled() {
    static const bool enabled = [] {
        const char* setting = std::getenv("INFER_GEMM_TUNING");
        return !(setting && (std::strcmp(setting, "off") == 0 || std::strcmp(setting, "0") == 0));
    }();
    return enabled;
}

// One product as cuBLASLt sees it, ready to run with any algorithm.
struct LtCall {
    cublasLtHandle_t handle;
    cublasLtMatmulDesc_t desc;
    const void *alpha, *beta, *a, *b, *c;
    cublasLtMatrixLayout_t a_layout, b_layout, y_layout;
    void* y;
    void* workspace;
    size_t workspace_bytes;
    cudaStream_t stream;

    cublasStatus_t run(const cublasLtMatmulAlgo_t& algo) const {
        return cublasLtMatmul(handle, desc, alpha, a, a_layout, b, b_layout, beta, c, y_layout, y, y_layout, &algo,
                              workspace, workspace_bytes, stream);
    }
};

// The fastest of the candidates on the stream, timed with events; the first when timing is not
// possible. Each run writes the same Y (a C that is Y itself is excluded by the caller: it would
// accumulate), so the product's result is unchanged by the trials.
cublasLtMatmulAlgo_t fastest(const LtCall& call, const cublasLtMatmulHeuristicResult_t* results, int count) {
    cudaEvent_t start = nullptr, stop = nullptr;
    if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
        cudaGetLastError();
        if (start) cudaEventDestroy(start);
        return results[0].algo;
    }
    int best = 0;
    float best_ms = -1, first_ms = -1;  // none timed yet
    for (int i = 0; i < count; ++i) {
        if (results[i].state != CUBLAS_STATUS_SUCCESS || call.run(results[i].algo) != CUBLAS_STATUS_SUCCESS) continue;
        cudaEventRecord(start, call.stream);
        bool ran = true;
        for (int r = 0; r < kTimedRuns && ran; ++r) ran = call.run(results[i].algo) == CUBLAS_STATUS_SUCCESS;
        cudaEventRecord(stop, call.stream);
        float ms = 0;
        if (!ran || cudaEventSynchronize(stop) != cudaSuccess || cudaEventElapsedTime(&ms, start, stop) != cudaSuccess)
            continue;
        if (i == 0) first_ms = ms;
        if (best_ms < 0 || ms < best_ms) {
            best = i;
            best_ms = ms;
        }
    }
    // What tuning buys (the heuristic's first choice against the fastest) and costs is in the
    // debug log: it is part of an f16 session's first run.
    const auto us_a_run = [](float ms) { return ms < 0 ? std::nan("") : ms * 1000.0 / kTimedRuns; };
    detail::logger().debug("cuBLASLt tuning: {} candidates, first {:.1f} us, fastest #{} {:.1f} us a run", count,
                           us_a_run(first_ms), best, us_a_run(best_ms));
    cudaGetLastError();  // a candidate that failed to run leaves nothing to report
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return results[best].algo;
}

bool capturing(cudaStream_t stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    return cudaStreamIsCapturing(stream, &status) != cudaSuccess || status != cudaStreamCaptureStatusNone;
}

}  // namespace

bool gemm_bias_epilogue(const Launch& l, DType type, int64_t m, int64_t n, int64_t k, float alpha,
                        const GemmOperand& a, const GemmOperand& b, const void* bias, void* y,
                        GemmEpilogue epilogue, const void* addend) {
    const uint32_t align_bias = alignment_of(bias);
    if (align_bias < kBiasAlignment) return false;
    const uint32_t align_addend = addend ? alignment_of(addend) : 0;
    const cudaDataType_t t = blas_data_type(l, type);
    const cublasComputeType_t compute = blas_compute_type(l, type);
    const CudaStream::Workspace workspace = l.stream.blas_workspace();
    cublasLtHandle_t handle = l.stream.cublas_lt();

    // cuBLASLt's A is our B and its B our A (see the top of the file).
    cublasLtMatmulDescOpaque_t desc_storage;
    cublasLtMatmulDesc_t desc = &desc_storage;
    // Alpha (and beta) in f32, as the f32 accumulation; the bias has the output's type, which is
    // cuBLASLt's default for non-integer, non-fp8 outputs (CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE).
    INFER_CUBLAS_CHECK(cublasLtMatmulDescInit(desc, compute, CUDA_R_32F), l.where());
    set(l, desc, CUBLASLT_MATMUL_DESC_TRANSA,
        static_cast<int32_t>(b.transposed ? CUBLAS_OP_T : CUBLAS_OP_N));
    set(l, desc, CUBLASLT_MATMUL_DESC_TRANSB,
        static_cast<int32_t>(a.transposed ? CUBLAS_OP_T : CUBLAS_OP_N));
    set(l, desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
        static_cast<uint32_t>(epilogue == GemmEpilogue::bias_relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS));
    // Set before the heuristic too: it reads the pointer's alignment.
    set(l, desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);

    cublasLtMatrixLayoutOpaque_t b_layout, a_layout, y_layout;
    init_layout(l, b_layout, t, b.transposed ? k : n, b.transposed ? n : k, b.ld);
    init_layout(l, a_layout, t, a.transposed ? m : k, a.transposed ? k : m, a.ld);
    init_layout(l, y_layout, t, n, m, n);

    const float beta = addend ? 1.0f : 0.0f;
    const LtCall call{handle, desc, &alpha, &beta, b.data, a.data, addend ? addend : y,
                      &b_layout, &a_layout, &y_layout, y, workspace.data, workspace.bytes, l.handle()};
    const Problem problem{l.stream.device(), t, compute, m, n, k, a.ld, b.ld,
                          a.transposed, b.transposed, alignment_of(a.data), alignment_of(b.data),
                          alignment_of(y), align_bias, workspace.bytes, epilogue, align_addend};
    std::optional<cublasLtMatmulAlgo_t> algo;
    if (!algorithm_cache().find(problem, algo)) {
        cublasLtMatmulPreferenceOpaque_t pref_storage;
        cublasLtMatmulPreference_t pref = &pref_storage;
        INFER_CUBLAS_CHECK(cublasLtMatmulPreferenceInit(pref), l.where());
        set(l, pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
            static_cast<uint64_t>(workspace.bytes));
        // Our A is cuBLASLt's B and the reverse; C is the addend, else Y (beta 0, not read).
        set(l, pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, problem.align_b);
        set(l, pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, problem.align_a);
        set(l, pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, addend ? align_addend : problem.align_y);
        set(l, pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, problem.align_y);
        // Timed only where the trials cannot change the result (an addend in Y's own memory
        // would be added again at each) and the stream is not being captured into a graph.
        const bool tune = tuning_enabled() && addend != y && !capturing(l.handle()) &&
                          double(m) * double(n) * double(k) >= kTunedMultiplyAdds;
        cublasLtMatmulHeuristicResult_t results[kCandidates]{};
        int found = 0;
        const auto chosen_from = std::chrono::steady_clock::now();
        const cublasStatus_t status =
            cublasLtMatmulAlgoGetHeuristic(handle, desc, &b_layout, &a_layout, &y_layout, &y_layout,
                                           pref, tune ? kCandidates : 1, results, &found);
        if (status != CUBLAS_STATUS_NOT_SUPPORTED)
            INFER_CUBLAS_CHECK(status, l.where() + ", algorithm for " + sizes(m, n, k));
        if (status == CUBLAS_STATUS_SUCCESS && found > 0 && results[0].state == CUBLAS_STATUS_SUCCESS)
            algo = found > 1 ? fastest(call, results, found) : results[0].algo;
        algorithm_cache().store(problem, algo);
        detail::logger().debug("cuBLASLt algorithm for {}: chosen in {:.1f} ms", sizes(m, n, k),
                               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - chosen_from).count());
    }
    if (!algo) return false;

    const cublasStatus_t status = call.run(*algo);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED) {  // nothing was enqueued
        algorithm_cache().store(problem, std::nullopt);
        return false;
    }
    INFER_CUBLAS_CHECK(status, l.where() + ", " + sizes(m, n, k) + " with bias epilogue");
    return true;
}

}  // namespace infer::cuda
