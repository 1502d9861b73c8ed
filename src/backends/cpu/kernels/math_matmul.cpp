// MatMul (NumPy semantics, broadcast batch dimensions) and Gemm, through blas.hpp.
#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/half_weight_product.hpp"
#include "backends/cpu/kernels/broadcast.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/packed_weight_product.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"
#include "backends/cpu/kernels/strided_copy.hpp"

#include <algorithm>
#include <cstring>

namespace infer::cpu {

namespace {

void matmul_kernel(KernelContext& ctx) {
    require_same_dtype(ctx, 0, 1);
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& out = ctx.output(0);
    // 1-D operands are a row (left) or a column (right); the output simply lacks that axis,
    // which leaves its memory layout unchanged.
    std::vector<int64_t> a_dims = a.shape().dims(), b_dims = b.shape().dims();
    if (a_dims.size() == 1) a_dims.insert(a_dims.begin(), 1);
    if (b_dims.size() == 1) b_dims.push_back(1);
    const int64_t m = a_dims[a_dims.size() - 2], k = a_dims.back(), n = b_dims.back();
    const Shape a_batch(std::vector<int64_t>(a_dims.begin(), a_dims.end() - 2));
    const Shape b_batch(std::vector<int64_t>(b_dims.begin(), b_dims.end() - 2));
    const Shape batch = Shape::broadcast(a_batch, b_batch);
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* pc = out.data<float>();
    if (out.numel() == 0) return;
    if (k == 0) {
        std::memset(pc, 0, out.nbytes());
        return;
    }
    // B shared by every batch: the batches of A stack into one tall product.
    if (b_batch.numel() == 1) {
        sgemm(false, false, a_batch.numel() * m, n, k, 1.0f, pa, k, pb, n, 0.0f, pc, n);
        return;
    }
    std::vector<int64_t> a_strides = broadcast_strides(a_batch, batch);
    std::vector<int64_t> b_strides = broadcast_strides(b_batch, batch);
    for (auto& s : a_strides) s *= m * k;
    for (auto& s : b_strides) s *= k * n;
    const StridedRows<2> rows(batch.dims(), {a_strides, b_strides});
    const int64_t length = rows.row_length();
    const auto steps = rows.inner_strides();  // no structured binding: clang < 16 cannot capture one
    const int64_t step_a = steps[0], step_b = steps[1];
    // Many products (attention: batch × heads): one per task, each on one thread. Few: one
    // after the other, each split over the pool.
    const bool many = rows.rows() * length >= pool_thread_count();
    const auto multiply_rows = [&](int64_t begin, int64_t end) {
        rows.for_rows(begin, end, [&](int64_t o, const StridedRows<2>::Offsets& in) {
            for (int64_t i = 0; i < length; ++i)
                (many ? sgemm_serial : sgemm)(false, false, m, n, k, 1.0f, pa + in[0] + i * step_a, k,
                                              pb + in[1] + i * step_b, n, 0.0f, pc + (o + i) * m * n, n);
        });
    };
    if (many)
        parallel_for(rows.rows(), std::max<int64_t>(1, kParallelGemmWork / (m * n * k * length)), multiply_rows);
    else
        multiply_rows(0, rows.rows());
}

void gemm_kernel(KernelContext& ctx) {
    require_same_dtype(ctx, 0, 1);
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& out = ctx.output(0);
    const bool trans_a = ctx.attrs().get_int("transA", 0) != 0;
    const bool trans_b = ctx.attrs().get_int("transB", 0) != 0;
    const float alpha = ctx.attrs().get_float("alpha", 1.0f);
    float beta = ctx.attrs().get_float("beta", 1.0f);
    const int64_t m = out.shape()[0], n = out.shape()[1];
    const int64_t k = trans_a ? a.shape()[0] : a.shape()[1];
    float* pc = out.data<float>();
    if (out.numel() == 0) return;
    if (ctx.has_input(2) && beta != 0.0f) {
        const Tensor& c = ctx.input(2);
        if (c.dtype() != DType::f32)
            invalid_argument(ctx,
                             "C must be f32 like A, got " + std::string(dtype_name(c.dtype())));
        broadcast_copy(pc, out.shape(), c.data<float>(), c.shape(), sizeof(float));
    } else {
        beta = 0.0f;
        std::memset(pc, 0, out.nbytes());
    }
    if (k == 0) {
        for (int64_t i = 0; i < m * n; ++i) pc[i] *= beta;
        return;
    }
    sgemm(trans_a, trans_b, m, n, k, alpha, a.data<float>(), a.shape()[1], b.data<float>(),
          b.shape()[1], beta, pc, n);
}

}  // namespace

void register_math_matmul_kernels(KernelRegistry& r) {
    r.add("MatMul", DType::f32, matmul_kernel);
    add_16bit_weight_product(r, "MatMul", nullptr);
    add_packed_weight_product(r, "MatMul");
    add_floating(r, "Gemm", gemm_kernel);
}

}  // namespace infer::cpu
