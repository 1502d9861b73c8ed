// MatMul (with NumPy batch broadcasting) and Gemm through cuBLAS. cuBLAS is column-major; a
// row-major C = A·B is computed as the column-major Cᵀ = Bᵀ·Aᵀ, which is the same memory.
#include "backends/cuda/gemm.hpp"

#include "backends/cuda/copy.hpp"
#include "backends/cuda/gemm_lt.hpp"
#include "backends/cuda/skinny_gemm.hpp"

#include <infer/shape.hpp>

#include <algorithm>
#include <climits>
#include <numeric>
#include <vector>

namespace infer::cuda {

cudaDataType_t blas_data_type(const Launch& l, DType type) {
    switch (type) {
        case DType::f32: return CUDA_R_32F;
        case DType::f16: return CUDA_R_16F;
        case DType::bf16: return CUDA_R_16BF;
        default: l.unsupported("matrix product in " + std::string(dtype_name(type)));
    }
}

cublasComputeType_t blas_compute_type(const Launch& l, DType type) {
    return type == DType::f32 && l.ctx.allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                    : CUBLAS_COMPUTE_32F;
}

namespace {

cublasOperation_t operation(bool transposed) { return transposed ? CUBLAS_OP_T : CUBLAS_OP_N; }

int as_int(const Launch& l, int64_t value, const char* what) {
    if (value < 0 || value > INT_MAX)
        l.unsupported(std::string(what) + " " + std::to_string(value) + " exceeds cuBLAS's int range");
    return static_cast<int>(value);
}

std::string sizes(int64_t m, int64_t n, int64_t k, int64_t batch) {
    return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
           " batch=" + std::to_string(batch);
}

int64_t product(const std::vector<int64_t>& dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

// Batched product with a different, arbitrary matrix per batch entry (broadcast batch dims
// that no single stride describes): the pointer arrays go to the device through scratch.
void gemm_pointer_batched(const Launch& l, DType type, int64_t m, int64_t n, int64_t k,
                          const std::vector<const void*>& a, int64_t lda,
                          const std::vector<const void*>& b, int64_t ldb,
                          const std::vector<void*>& c, int64_t ldc) {
    const size_t batch = c.size();
    std::vector<const void*> pointers;
    pointers.reserve(3 * batch);
    pointers.insert(pointers.end(), b.begin(), b.end());
    pointers.insert(pointers.end(), a.begin(), a.end());
    pointers.insert(pointers.end(), c.begin(), c.end());
    const size_t bytes = pointers.size() * sizeof(void*);
    auto** device_pointers = static_cast<const void**>(l.ctx.workspace(bytes));
    // From pageable memory the copy has consumed the source when it returns.
    INFER_CUDA_CHECK(cudaMemcpyAsync(device_pointers, pointers.data(), bytes,
                                     cudaMemcpyHostToDevice, l.handle()),
                     l.where() + ", " + std::to_string(bytes) + " bytes of GEMM pointers");
    const cudaDataType_t t = blas_data_type(l, type);
    const float alpha = 1.0f, beta = 0.0f;
    const int batch_count = as_int(l, static_cast<int64_t>(batch), "batch");
    INFER_CUBLAS_CHECK(
        cublasGemmBatchedEx(l.stream.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, as_int(l, n, "n"),
                            as_int(l, m, "m"), as_int(l, k, "k"), &alpha, device_pointers, t,
                            as_int(l, ldb, "ldb"), device_pointers + batch, t,
                            as_int(l, lda, "lda"), &beta,
                            const_cast<void**>(device_pointers + 2 * batch), t,
                            as_int(l, ldc, "ldc"), batch_count, blas_compute_type(l, type),
                            CUBLAS_GEMM_DEFAULT),
        l.where() + ", " + sizes(m, n, k, static_cast<int64_t>(batch)));
}

// The element offset of each output batch entry's matrix in an operand whose batch dims
// (right-aligned, 1 where broadcast) are `dims`.
std::vector<int64_t> batch_offsets(const std::vector<int64_t>& dims, const Shape& out_batch,
                                   int64_t matrix_size) {
    const Shape shape(dims);
    std::vector<int64_t> strides(out_batch.rank(), 0);
    const std::vector<int64_t> dense = shape.contiguous_strides();
    const size_t shift = out_batch.rank() - shape.rank();
    for (size_t d = 0; d < shape.rank(); ++d)
        strides[shift + d] = shape[d] == 1 ? 0 : dense[d] * matrix_size;
    const int64_t count = out_batch.numel();
    std::vector<int64_t> offsets(static_cast<size_t>(count), 0);
    for (int64_t i = 0; i < count; ++i) {
        int64_t rest = i;
        for (size_t d = out_batch.rank(); d-- > 0;) {
            offsets[static_cast<size_t>(i)] += (rest % out_batch[d]) * strides[d];
            rest /= out_batch[d];
        }
    }
    return offsets;
}

// The common stride of offsets[i] = i · stride, if there is one.
bool uniform_stride(const std::vector<int64_t>& offsets, int64_t& stride) {
    stride = offsets.size() > 1 ? offsets[1] - offsets[0] : 0;
    for (size_t i = 0; i < offsets.size(); ++i)
        if (offsets[i] != static_cast<int64_t>(i) * stride) return false;
    return true;
}

void run_matmul(const Launch& l) {
    const Tensor& a = l.ctx.input(0);
    const Tensor& b = l.ctx.input(1);
    if (a.dtype() != b.dtype()) l.unsupported("inputs " + a.describe() + " and " + b.describe());
    const bool a_vector = a.rank() == 1, b_vector = b.rank() == 1;
    const std::vector<int64_t>& ad = a.shape().dims();
    const std::vector<int64_t>& bd = b.shape().dims();
    const int64_t m = a_vector ? 1 : ad[ad.size() - 2];
    const int64_t k = ad.back();
    const int64_t n = b_vector ? 1 : bd.back();
    const std::vector<int64_t> a_batch(ad.begin(), ad.end() - (a_vector ? 1 : 2));
    const std::vector<int64_t> b_batch(bd.begin(), bd.end() - (b_vector ? 1 : 2));
    const Shape out_batch = Shape::broadcast(Shape(a_batch), Shape(b_batch));
    const int64_t batch = out_batch.numel();
    void* c = l.out(0);
    if (k == 0) {  // an empty sum: zeros
        INFER_CUDA_CHECK(cudaMemsetAsync(c, 0, l.ctx.output(0).nbytes(), l.handle()), l.where());
        return;
    }
    const DType type = a.dtype();
    // One matrix B for every batch entry: fold A's batch into its rows, one large product.
    if (product(b_batch) == 1) {
        gemm_row_major(l, type, batch * m, n, k, 1.0f, {l.in(0), k, 0}, {l.in(1), n, 0}, 0.0f, c,
                       n, 0, 1);
        return;
    }
    const std::vector<int64_t> a_offsets = batch_offsets(a_batch, out_batch, m * k);
    const std::vector<int64_t> b_offsets = batch_offsets(b_batch, out_batch, k * n);
    int64_t stride_a = 0, stride_b = 0;
    if (uniform_stride(a_offsets, stride_a) && uniform_stride(b_offsets, stride_b)) {
        gemm_row_major(l, type, m, n, k, 1.0f, {l.in(0), k, stride_a}, {l.in(1), n, stride_b},
                       0.0f, c, n, m * n, batch);
        return;
    }
    const size_t element_size = dtype_size(type);
    std::vector<const void*> a_pointers, b_pointers;
    std::vector<void*> c_pointers;
    for (int64_t i = 0; i < batch; ++i) {
        const auto s = static_cast<size_t>(i);
        a_pointers.push_back(static_cast<const char*>(l.in(0)) + a_offsets[s] * element_size);
        b_pointers.push_back(static_cast<const char*>(l.in(1)) + b_offsets[s] * element_size);
        c_pointers.push_back(static_cast<char*>(c) + i * m * n * element_size);
    }
    gemm_pointer_batched(l, type, m, n, k, a_pointers, k, b_pointers, n, c_pointers, n);
}

// C holds one value per output column, the same for every row: [n], [1, n] (or a scalar when
// n is 1).
bool is_bias_row(const Tensor& c, int64_t n) {
    return c.numel() == n && (c.rank() == 0 || c.shape().dims().back() == n);
}

void run_gemm(const Launch& l) {
    const Tensor& a = l.ctx.input(0);
    const Tensor& b = l.ctx.input(1);
    const auto& attrs = l.ctx.attrs();
    const bool trans_a = attrs.get_int("transA", 0) != 0;
    const bool trans_b = attrs.get_int("transB", 0) != 0;
    const float alpha = attrs.get_float("alpha", 1.0f);
    float beta = attrs.get_float("beta", 1.0f);
    if (a.dtype() != b.dtype()) l.unsupported("inputs " + a.describe() + " and " + b.describe());
    const int64_t m = trans_a ? a.shape()[1] : a.shape()[0];
    const int64_t k = trans_a ? a.shape()[0] : a.shape()[1];
    const Shape& out = l.ctx.output(0).shape();
    const int64_t n = out[1];
    void* y = l.out(0);
    const GemmOperand a_operand{l.in(0), a.shape()[1], 0, trans_a};
    const GemmOperand b_operand{l.in(1), b.shape()[1], 0, trans_b};
    if (l.ctx.has_input(2) && beta != 0.0f) {
        const Tensor& bias = l.ctx.input(2);
        if (bias.dtype() != a.dtype()) l.unsupported("C " + bias.describe());
        // The common case, a linear layer's bias: one kernel for product and bias (ours for a
        // few rows, else cuBLASLt's bias epilogue).
        if (beta == 1.0f && k > 0 && is_bias_row(bias, n)) {
            if (!trans_a && skinny_gemm(l, {a.dtype(), l.in(0), k, l.in(1), b.shape()[1], trans_b, l.in(2), y, n, m, n, k,
                                            alpha, Activation::none}))
                return;
            if (gemm_bias_epilogue(l, a.dtype(), m, n, k, alpha, a_operand, b_operand, l.in(2), y)) return;
        }
        // C broadcast into Y first; the product then accumulates onto it with beta.
        launch_strided_copy(l, dtype_size(a.dtype()), y, out.contiguous_strides(), l.in(2),
                            broadcast_strides(bias.shape(), out), out.dims());
    } else {
        beta = 0.0f;
    }
    if (k == 0) {
        // cuBLAS may return early on k == 0; the result is beta·C.
        if (beta == 0.0f)
            INFER_CUDA_CHECK(cudaMemsetAsync(y, 0, l.ctx.output(0).nbytes(), l.handle()), l.where());
        else if (beta != 1.0f)
            l.unsupported("k = 0 with beta other than 0 or 1");
        return;
    }
    gemm_row_major(l, a.dtype(), m, n, k, alpha, a_operand, b_operand, beta, y, n, 0, 1);
}

}  // namespace

void gemm_row_major(const Launch& l, DType type, int64_t m, int64_t n, int64_t k, float alpha,
                    const GemmOperand& a, const GemmOperand& b, float beta, void* c, int64_t ldc,
                    int64_t stride_c, int64_t batch) {
    if (batch == 1 && beta == 0.0f && !a.transposed &&
        skinny_gemm(l, {type, a.data, a.ld, b.data, b.ld, b.transposed, nullptr, c, ldc, m, n, k, alpha, Activation::none}))
        return;
    const cudaDataType_t t = blas_data_type(l, type);
    // f32 accumulation for every storage type; alpha and beta are then f32 too.
    INFER_CUBLAS_CHECK(
        cublasGemmStridedBatchedEx(l.stream.cublas(), operation(b.transposed),
                                   operation(a.transposed), as_int(l, n, "n"), as_int(l, m, "m"),
                                   as_int(l, k, "k"), &alpha, b.data, t, as_int(l, b.ld, "ldb"),
                                   b.stride, a.data, t, as_int(l, a.ld, "lda"), a.stride, &beta,
                                   c, t, as_int(l, ldc, "ldc"), stride_c,
                                   as_int(l, batch, "batch"), blas_compute_type(l, type),
                                   CUBLAS_GEMM_DEFAULT),
        l.where() + ", " + sizes(m, n, k, batch));
}

namespace {
// Workspace: pointer arrays for batched products whose operands cannot be strided uniformly.
size_t matmul_pointer_arrays(const NodeSignature& node) {
    int64_t batch = 1;
    for (const Shape& s : node.input_shapes)
        if (s.rank() > 2) batch = std::max(batch, s.numel() / (s.dims()[s.rank() - 1] * s.dims()[s.rank() - 2]));
    return static_cast<size_t>(3 * batch) * sizeof(void*);
}
}  // namespace

void register_gemm_kernels(KernelRegistrar& r) {
    r.add("MatMul", kFloatTypes, run_matmul, matmul_pointer_arrays);
    r.add("Gemm", kFloatTypes, run_gemm);
}

}  // namespace infer::cuda
