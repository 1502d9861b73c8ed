// The fused family (core/ops/table_fused.cpp) on the GPU, so that fused graphs keep every node
// there. FusedMatMul: a few rows through skinny_gemm.hpp's kernel (bias and any activation in
// it), else cuBLASLt's bias (+ReLU) epilogue, else a cuBLAS product and one kernel for bias and
// activation. AddLayerNormalization: the sum and the normalization in one kernel.
// Attention: f16 and bf16 with the common head sizes through the fused kernel of
// flash_attention.cu; otherwise (f32, other head sizes) per-head strided-batched products
// through cuBLAS with one bias + softmax kernel in between, in f32 inside.
#include "backends/cuda/activation.cuh"
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/copy.hpp"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/flash_attention.hpp"
#include "backends/cuda/gemm.hpp"
#include "backends/cuda/gemm_lt.hpp"
#include "backends/cuda/skinny_gemm.hpp"

#include <algorithm>

namespace infer::cuda {

namespace {

template <class T>
__global__ void bias_activation_kernel(T* y, const T* bias, int64_t rows, int64_t cols, Activation activation) {
    INFER_GRID_STRIDE(i, rows * cols) {
        float v = load_float(y[i]);
        if (bias) v += load_float(bias[i % cols]);
        y[i] = store<T>(static_cast<Compute<T>>(activate(v, activation)));
    }
}

void run_fused_matmul(const Launch& l) {
    const Tensor& a = l.ctx.input(0);
    const Tensor& b = l.ctx.input(1);
    if (a.dtype() != b.dtype()) l.unsupported("inputs " + a.describe() + " and " + b.describe());
    const int64_t k = b.shape()[0], n = b.shape()[1];
    const Tensor& y = l.ctx.output(0);
    if (y.numel() == 0) return;
    const int64_t rows = y.numel() / n;
    const Activation activation = activation_named(l, l.ctx.attrs().get_string("activation", ""));
    const bool has_bias = l.ctx.has_input(2);
    if (k == 0) {
        INFER_CUDA_CHECK(cudaMemsetAsync(l.out(0), 0, y.nbytes(), l.handle()), l.where());
    } else {
        if (skinny_gemm(l, {a.dtype(), l.in(0), k, l.in(1), n, false, has_bias ? l.in(2) : nullptr, l.out(0), n, rows, n, k,
                            1.0f, activation}))
            return;
        const GemmOperand a_operand{l.in(0), k, 0, false};
        const GemmOperand b_operand{l.in(1), n, 0, false};
        if (has_bias && (activation == Activation::none || activation == Activation::relu) &&
            gemm_bias_epilogue(l, a.dtype(), rows, n, k, 1.0f, a_operand, b_operand, l.in(2), l.out(0),
                               activation == Activation::relu ? GemmEpilogue::bias_relu : GemmEpilogue::bias))
            return;
        gemm_row_major(l, a.dtype(), rows, n, k, 1.0f, a_operand, b_operand, 0.0f, l.out(0), n, 0, 1);
    }
    if (!has_bias && activation == Activation::none) return;
    dispatch_float(a.dtype(), l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        bias_activation_kernel<<<grid_for(rows * n), kBlock, 0, l.handle()>>>(
            static_cast<T*>(l.out(0)), has_bias ? static_cast<const T*>(l.in(2)) : nullptr, rows, n, activation);
        l.check_launch("bias_activation_kernel");
    });
}

// One block per row: sum = x + skip (each may repeat over leading rows: x_rows, skip_rows),
// kept in the output row (or the sum output) while mean and variance are reduced in f32. X,
// scale, bias and the sum are of type T; Skip (S) and Y (Y) may be f16/bf16 beside an f32 T
// (fold_norm_casts.cpp).
template <class T, class S = T, class Y = T>
__global__ void add_layer_norm_kernel(const T* x, const S* skip, const T* scale, const T* bias, Y* y, T* sum_out,
                                      int64_t rows, int64_t cols, int64_t x_rows, int64_t skip_rows,
                                      float epsilon) {
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T* a = x + (row % x_rows) * cols;
        const S* s = skip + (row % skip_rows) * cols;
        Y* out = y + row * cols;
        T* kept = sum_out ? sum_out + row * cols : nullptr;
        float total = 0.0f;
        for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) total += load_float(a[i]) + load_float(s[i]);
        const float mean = block_reduce(total, SumOp{}, scratch) / static_cast<float>(cols);
        float squares = 0.0f;
        for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
            const float d = load_float(a[i]) + load_float(s[i]) - mean;
            squares += d * d;
        }
        const float inv_std = rsqrtf(block_reduce(squares, SumOp{}, scratch) / static_cast<float>(cols) + epsilon);
        for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
            const float v = load_float(a[i]) + load_float(s[i]);
            if (kept) kept[i] = store<T>(static_cast<Compute<T>>(v));
            float normalized = (v - mean) * inv_std * load_float(scale[i]);
            if (bias) normalized += load_float(bias[i]);
            out[i] = store<Y>(static_cast<Compute<Y>>(normalized));
        }
    }
}

// Rows of `input` that repeat over the output's leading rows: the input's shape must be the
// output's trailing dims (after leading 1s), as with a position embedding of [1, S, E].
int64_t repeating_rows(const Launch& l, const Shape& input, const Shape& out) {
    if (input.rank() > out.rank()) l.unsupported("operand " + input.to_string() + " is deeper than " + out.to_string());
    int64_t numel = 1;
    bool leading = true;
    for (size_t i = 0; i < input.rank(); ++i) {
        const int64_t dim = input[i], full = out[out.rank() - input.rank() + i];
        if (leading && dim == 1 && full != 1) continue;
        leading = false;
        if (dim != full) l.unsupported("operand " + input.to_string() + " broadcasts to " + out.to_string() + " inside rows");
        numel *= dim;
    }
    return std::max<int64_t>(1, numel / out[out.rank() - 1]);
}

void run_add_layer_norm(const Launch& l) {
    const Tensor& y = l.ctx.output(0);
    if (y.numel() == 0) return;
    const Shape& shape = y.shape();
    const int64_t cols = shape[shape.rank() - 1], rows = y.numel() / cols;
    const int64_t x_rows = repeating_rows(l, l.ctx.input(0).shape(), shape);
    const int64_t skip_rows = repeating_rows(l, l.ctx.input(1).shape(), shape);
    const bool keep_sum = l.ctx.num_outputs() > 1 && l.ctx.output(1).defined();
    const int threads = static_cast<int>(std::clamp<int64_t>((cols + 31) / 32 * 32, 32, 256));
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 20));
    const DType x_type = l.ctx.input(0).dtype(), skip_type = l.ctx.input(1).dtype();
    const auto launch = [&](auto x_tag, auto skip_tag, auto y_tag) {
        using T = typename decltype(x_tag)::type;
        using S = typename decltype(skip_tag)::type;
        using Y = typename decltype(y_tag)::type;
        add_layer_norm_kernel<<<blocks, threads, 0, l.handle()>>>(
            static_cast<const T*>(l.in(0)), static_cast<const S*>(l.in(1)), static_cast<const T*>(l.in(2)),
            l.ctx.has_input(3) ? static_cast<const T*>(l.in(3)) : nullptr, static_cast<Y*>(l.out(0)),
            keep_sum ? static_cast<T*>(l.out(1)) : nullptr, rows, cols, x_rows, skip_rows,
            l.ctx.attrs().get_float("epsilon", 1e-5f));
        l.check_launch("add_layer_norm_kernel");
    };
    if (skip_type == x_type && y.dtype() == x_type) {
        dispatch_float(x_type, l, [&](auto tag) { launch(tag, tag, tag); });
        return;
    }
    // The folded form: f32 X and sum, Skip and Y each f32 or the low type.
    if (x_type != DType::f32) l.unsupported("X " + l.ctx.input(0).describe() + " beside Skip " + l.ctx.input(1).describe());
    dispatch_float(skip_type, l, [&](auto skip_tag) {
        dispatch_float(y.dtype(), l, [&](auto y_tag) { launch(Tag<float>{}, skip_tag, y_tag); });
    });
}

// One block per score row (b, h, i): + bias, softmax in f32, probabilities written in place.
template <class T>
__global__ void bias_softmax_kernel(T* scores, const T* bias, BiasStrides bs, int64_t heads, int64_t sq,
                                    int64_t sk) {
    __shared__ float scratch[32];
    const int64_t row = blockIdx.x;  // over B · H · Sq
    const int64_t i = row % sq, h = (row / sq) % heads, b = row / (sq * heads);
    T* s = scores + row * sk;
    const T* bias_row = bias ? bias + b * bs.batch + h * bs.head + i * bs.query : nullptr;
    float max = MaxOp::identity;
    for (int64_t j = threadIdx.x; j < sk; j += blockDim.x) {
        float v = load_float(s[j]);
        if (bias_row) v += load_float(bias_row[j * bs.key]);
        max = fmaxf(max, v);
    }
    max = block_reduce(max, MaxOp{}, scratch);
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < sk; j += blockDim.x) {
        float v = load_float(s[j]);
        if (bias_row) v += load_float(bias_row[j * bs.key]);
        sum += expf(v - max);
    }
    const float inverse = 1.0f / block_reduce(sum, SumOp{}, scratch);
    for (int64_t j = threadIdx.x; j < sk; j += blockDim.x) {
        float v = load_float(s[j]);
        if (bias_row) v += load_float(bias_row[j * bs.key]);
        s[j] = store<T>(static_cast<Compute<T>>(expf(v - max) * inverse));
    }
}

void run_attention(const Launch& l) {
    const Tensor &q = l.ctx.input(0), &k = l.ctx.input(1), &v = l.ctx.input(2);
    const Tensor& out = l.ctx.output(0);
    if (out.numel() == 0) return;
    const DType type = q.dtype();
    const int64_t heads = l.ctx.attrs().get_int("num_heads", 1);
    const float scale = l.ctx.attrs().get_float("scale", 1.0f);
    const int64_t batch = q.shape()[0], sq = q.shape()[1], sk = k.shape()[1];
    const int64_t eq = q.shape()[2], ev = v.shape()[2], d = eq / heads, dv = ev / heads;
    BiasStrides bs;
    if (l.ctx.has_input(3)) {
        const std::vector<int64_t> s = broadcast_strides(l.ctx.input(3).shape(), Shape({batch, heads, sq, sk}));
        bs = {s[0], s[1], s[2], s[3]};
    }
    if (d == dv && flash_attention(l, {type, l.in(0), l.in(1), l.in(2), l.ctx.has_input(3) ? l.in(3) : nullptr,
                                       l.out(0), batch, heads, sq, sk, d, bs, scale}))
        return;
    const size_t element = dtype_size(type);
    char* scores = static_cast<char*>(l.ctx.workspace(static_cast<size_t>(batch * heads * sq * sk) * element));
    const char* pq = static_cast<const char*>(l.in(0));
    const char* pk = static_cast<const char*>(l.in(1));
    const char* pv = static_cast<const char*>(l.in(2));
    char* po = static_cast<char*>(l.out(0));
    // Two strided levels (batch, head) and cuBLAS strides one: loop over the shorter and let
    // one strided-batched product cover the longer. Looping over a batch of 256 cost 512
    // products per layer (DistilBERT on an H200: Attention half the run at batch 256).
    const bool by_head = heads <= batch;
    const int64_t loops = by_head ? heads : batch, count = by_head ? batch : heads;
    for (int64_t i = 0; i < loops; ++i) {
        const int64_t b = by_head ? 0 : i, h = by_head ? i : 0;
        const int64_t q_step = by_head ? sq * eq : d, k_step = by_head ? sk * eq : d;
        const int64_t s_step = by_head ? heads * sq * sk : sq * sk;
        const GemmOperand qh{pq + (b * sq * eq + h * d) * element, eq, q_step, false};
        const GemmOperand kh{pk + (b * sk * eq + h * d) * element, eq, k_step, true};
        gemm_row_major(l, type, sq, sk, d, scale, qh, kh, 0.0f, scores + ((b * heads + h) * sq * sk) * element, sk,
                       s_step, count);
    }
    const int threads = static_cast<int>(std::clamp<int64_t>((sk + 31) / 32 * 32, 32, 256));
    dispatch_float(type, l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        bias_softmax_kernel<<<static_cast<unsigned>(batch * heads * sq), threads, 0, l.handle()>>>(
            reinterpret_cast<T*>(scores), l.ctx.has_input(3) ? static_cast<const T*>(l.in(3)) : nullptr, bs, heads,
            sq, sk);
        l.check_launch("bias_softmax_kernel");
    });
    for (int64_t i = 0; i < loops; ++i) {
        const int64_t b = by_head ? 0 : i, h = by_head ? i : 0;
        const int64_t p_step = by_head ? heads * sq * sk : sq * sk;
        const int64_t v_step = by_head ? sk * ev : dv, o_step = by_head ? sq * ev : dv;
        const GemmOperand p{scores + ((b * heads + h) * sq * sk) * element, sk, p_step, false};
        const GemmOperand vh{pv + (b * sk * ev + h * dv) * element, ev, v_step, false};
        gemm_row_major(l, type, sq, dv, sk, 1.0f, p, vh, 0.0f, po + (b * sq * ev + h * dv) * element, ev, o_step,
                       count);
    }
}

// The fused kernel needs no scores; should it decline at run time (operands not aligned), the
// workspace grows on demand.
size_t attention_scores_bytes(const NodeSignature& node) {
    const Shape &q = node.input_shapes.at(0), &k = node.input_shapes.at(1), &v = node.input_shapes.at(2);
    const int64_t heads = node.attributes ? node.attributes->get_int("num_heads", 1) : 1;
    if (flash_attention_covers(node.kernel_dtype, q[2] / heads, v[2] / heads)) return 0;
    return static_cast<size_t>(q[0] * heads * q[1] * k[1]) * dtype_size(node.kernel_dtype);
}

}  // namespace

void register_fused_kernels(KernelRegistrar& r) {
    r.add("FusedMatMul", kFloatTypes, run_fused_matmul);
    r.add("AddLayerNormalization", kFloatTypes, run_add_layer_norm);
    r.add("Attention", kFloatTypes, run_attention, attention_scores_bytes);
}

}  // namespace infer::cuda
