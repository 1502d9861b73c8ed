// The fused family (core/ops/table_fused.cpp): FusedMatMul, AddLayerNormalization, Attention,
// composed from the BLAS product and the normalization rows. f16/bf16 convert at the boundary,
// but for FusedMatMul's few-row products, which stream 16-bit weights (half_weight_product.hpp).
#include "backends/cpu/kernels/attention_head.hpp"
#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/broadcast.hpp"
#include "backends/cpu/kernels/gelu_rows.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/half_convert.hpp"
#include "backends/cpu/kernels/half_weight_product.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_normalization.hpp"
#include "backends/cpu/kernels/packed_weight_product.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/register.hpp"
#include "backends/cpu/kernels/strided_copy.hpp"
#include "core/ops/attention_layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace infer::cpu {

namespace {

// The bias and activation of FusedMatMul, in one pass over the product's rows y [rows, n].
void fused_matmul_epilogue(const KernelContext& ctx, const float* bias, float* y, int64_t rows, int64_t n) {
    const RowActivation activation = row_activation_named(ctx.attrs().get_string("activation", ""));
    parallel_for(rows, grain_for(n), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            float* row = y + r * n;
            if (bias)
                for (int64_t j = 0; j < n; ++j) row[j] += bias[j];
            activate_row(row, n, activation);
        }
    });
}

// activation(A·B + bias) with B a [K, N] weight: one product over every row of A, then the
// bias and activation in one pass while the rows are still in cache.
void fused_matmul_kernel(KernelContext& ctx) {
    require_same_dtype(ctx, 0, 1);
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& out = ctx.output(0);
    const int64_t k = b.shape()[0], n = b.shape()[1];
    const int64_t rows = n == 0 ? 0 : out.numel() / n;
    if (out.numel() == 0) return;
    float* y = out.data<float>();
    if (k == 0)
        std::memset(y, 0, out.nbytes());
    else
        sgemm(false, false, rows, n, k, 1.0f, a.data<float>(), k, b.data<float>(), n, 0.0f, y, n);
    fused_matmul_epilogue(ctx, ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr, y, rows, n);
}

// `count` values of a float tensor from element `offset` on, as f32, on the calling thread.
void widen_span(const Tensor& t, int64_t offset, int64_t count, float* out) {
    const auto* bits = static_cast<const uint16_t*>(t.raw_data()) + offset;
    if (t.dtype() == DType::bf16)
        bfloat16_to_float_serial(bits, out, static_cast<size_t>(count));
    else
        half_to_float_serial(bits, out, static_cast<size_t>(count));
}

// `count` f32 values rounded into a 16-bit tensor from element `offset` on, on the calling thread.
void narrow_span(const float* values, Tensor& t, int64_t offset, int64_t count) {
    auto* bits = static_cast<uint16_t*>(t.raw_data()) + offset;
    if (t.dtype() == DType::bf16)
        float_to_bfloat16_serial(values, bits, static_cast<size_t>(count));
    else
        float_to_half_serial(values, bits, static_cast<size_t>(count));
}

// Y = LayerNorm(X + Skip) over the last axis; Sum = X + Skip when asked for. After the f16/bf16
// lowering Skip may arrive, and Y may be written, in the low type (fold_norm_casts.cpp); with
// low_y_dtype the second output is Y narrowed instead of the sum.
void add_layer_norm_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& skip_in = ctx.input(1);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    if (x.dtype() != DType::f32) unsupported(ctx, "X of dtype " + std::string(dtype_name(x.dtype())));
    const Shape& shape = y.shape();
    const int64_t length = shape[shape.rank() - 1], rows = y.numel() / length;
    const bool narrow = ctx.attrs().has("low_y_dtype") && ctx.num_outputs() > 1 && ctx.output(1).defined();
    const bool keep_sum = !narrow && ctx.num_outputs() > 1 && ctx.output(1).defined();
    const bool low_skip = skip_in.dtype() != DType::f32, low_y = y.dtype() != DType::f32;
    const float* scale = ctx.input(2).data<float>();
    const float* bias = ctx.has_input(3) ? ctx.input(3).data<float>() : nullptr;
    const float epsilon = ctx.attrs().get_float("epsilon", 1e-5f);
    float* sum_out = keep_sum ? ctx.output(1).data<float>() : nullptr;
    if (x.shape() == shape && skip_in.shape() == shape) {
        // Each task widens, sums, normalizes and narrows its rows while they are in cache. A
        // pass over the whole tensor per step, each handed to the pool, made the low-type form
        // 2.3× the f32 one (MiniLM bf16 at batch 8 on 2 Zen 4 cores: 5.2 against 2.25 ms).
        const float* px = x.data<float>();
        const float* ps = low_skip ? nullptr : skip_in.data<float>();
        float* py = low_y ? nullptr : y.data<float>();
        parallel_for(rows, grain_for(length), [&](int64_t begin, int64_t end) {
            std::vector<float> buffer(static_cast<size_t>(3 * length));  // Skip widened, the sum, Y before narrowing
            for (int64_t r = begin; r < end; ++r) {
                const int64_t at = r * length;
                const float* skip_row = ps ? ps + at : buffer.data();
                if (!ps) widen_span(skip_in, at, length, buffer.data());
                float* sum_row = sum_out ? sum_out + at : buffer.data() + length;
                for (int64_t j = 0; j < length; ++j) sum_row[j] = px[at + j] + skip_row[j];
                float* y_row = py ? py + at : buffer.data() + 2 * length;
                layer_norm_row(sum_row, y_row, length, scale, bias, epsilon);
                if (low_y) narrow_span(y_row, y, at, length);
                if (narrow) narrow_span(y_row, ctx.output(1), at, length);
            }
        });
        return;
    }
    // X or Skip broadcast along leading axes: whole-tensor steps. Scratch for the sum (when it
    // is not an output), Skip broadcast, Skip widened and Y before narrowing.
    const auto count = static_cast<size_t>(y.numel());
    auto* scratch = static_cast<float*>(ctx.workspace(sizeof(float) * (2 * count + (low_skip ? skip_in.numel() : 0) +
                                                                       (low_y ? count : 0))));
    float* widened = scratch + 2 * count;
    float* y_f32 = low_y ? widened + (low_skip ? skip_in.numel() : 0) : y.data<float>();
    if (low_skip) widen_to_float(skip_in, widened);
    float* sum = keep_sum ? sum_out : scratch;
    float* broadcast = scratch + count;
    broadcast_copy(sum, shape, x.data<float>(), x.shape(), sizeof(float));
    broadcast_copy(broadcast, shape, low_skip ? widened : skip_in.data<float>(), skip_in.shape(), sizeof(float));
    for (size_t i = 0; i < count; ++i) sum[i] += broadcast[i];
    layer_norm_rows(sum, y_f32, rows, length, scale, bias, epsilon, nullptr, nullptr);
    if (low_y) narrow_from_float(y_f32, y);
    if (narrow) narrow_from_float(y_f32, ctx.output(1));
}

// Per batch and head: softmax(Q·Kᵀ·scale + bias)·V, reading the heads in place in the
// [B, S, H·D] layout (leading dimension H·D, or 3·H·D where Q, K and V come packed in one
// tensor) and writing them merged. Heads whose value width is a whole number of vectors, with
// 8 queries or more, run on the vector kernel (attention_head.hpp, scores kept in L1); the
// others (decode steps among them) on two sgemm calls each, through [Sq, Sk] scores per head.
void attention_kernel(KernelContext& ctx) {
    Tensor& out = ctx.output(0);
    if (out.numel() == 0) return;
    const detail::AttentionLayout a = detail::attention_layout(ctx);
    const int64_t batch = a.batch, heads = a.heads, sq = a.sq, sk = a.sk, d = a.d, dv = a.dv;
    const float scale = ctx.attrs().get_float("scale", 1.0f);
    const bool has_bias = ctx.has_input(3);
    // The bias's element strides as [B, H, Sq, Sk] (0 along the axes it broadcasts over).
    const std::vector<int64_t> bs =
        has_bias ? broadcast_strides(ctx.input(3).shape(), Shape({batch, heads, sq, sk})) : std::vector<int64_t>(4, 0);
    const float* bias = has_bias ? ctx.input(3).data<float>() : nullptr;
    const float* pq = ctx.input(0).data<float>();
    const float* pk = a.packed ? pq + a.k_offset : ctx.input(1).data<float>();
    const float* pv = a.packed ? pq + a.v_offset : ctx.input(2).data<float>();
    const int64_t ev = out.shape()[2];
    float* po = out.data<float>();
    const AttentionHeadKernel vector_head = sk > 0 ? attention_head_kernel(sq, dv) : nullptr;
    const size_t per_head = vector_head ? attention_head_scratch(sk, d) : static_cast<size_t>(sq * sk);
    auto* scratch = static_cast<float*>(ctx.workspace(sizeof(float) * static_cast<size_t>(batch * heads) * per_head));
    parallel_for(batch * heads, 1, [&](int64_t begin, int64_t end) {
        for (int64_t bh = begin; bh < end; ++bh) {
            const int64_t b = bh / heads, h = bh % heads;
            const float* q = pq + b * sq * a.q_row + h * d;
            const float* k = pk + b * sk * a.k_row + h * d;
            const float* v = pv + b * sk * a.v_row + h * dv;
            const float* head_bias = bias ? bias + b * bs[0] + h * bs[1] : nullptr;
            float* o = po + b * sq * ev + h * dv;
            float* s = scratch + static_cast<size_t>(bh) * per_head;
            if (vector_head) {
                vector_head({q, k, v, o, a.q_row, a.k_row, a.v_row, ev, sq, sk, d, dv, scale, head_bias, bs[2], bs[3]}, s);
                continue;
            }
            sgemm_serial(false, true, sq, sk, d, scale, q, a.q_row, k, a.k_row, 0.0f, s, sk);
            biased_softmax_rows(s, sq, sk, head_bias, bs[2], bs[3]);
            sgemm_serial(false, false, sq, dv, sk, 1.0f, s, sk, v, a.v_row, 0.0f, o, ev);
        }
    });
}

}  // namespace

void register_fused_kernels(KernelRegistry& r) {
    r.add("FusedMatMul", DType::f32, fused_matmul_kernel);
    add_16bit_weight_product(r, "FusedMatMul", fused_matmul_epilogue);
    add_packed_weight_product(r, "FusedMatMul");
    add_floating(r, "AddLayerNormalization", add_layer_norm_kernel);
    add_floating(r, "Attention", attention_kernel);
    register_bf16_attention_kernel(r);
    register_quantized_matmul_kernel(r);
    register_silu_kernel(r);
    register_quantized_add_kernel(r);
}

}  // namespace infer::cpu
