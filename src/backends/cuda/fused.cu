// The fused family (core/ops/table_fused.cpp) on the GPU, so that fused graphs keep every node
// there. FusedMatMul: a few rows through skinny_gemm.hpp's kernel (bias and any activation in
// it), else cuBLASLt's bias (+ReLU) epilogue, else a cuBLAS product and one kernel for bias and
// activation (AddLayerNormalization is in fused_add_layer_norm.cu).
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
#include "backends/cuda/packed.cuh"
#include "backends/cuda/skinny_gemm.hpp"

#include "core/ops/attention_layout.hpp"

#include <algorithm>

namespace infer::cuda {

namespace {

// Bias and activation in place over rows of `cols` values: a thread per V neighbouring columns
// (one 16-byte access where the row width and the pointers allow), its bias loaded once, going
// down the rows (blockIdx.y). The activation is a template parameter. Written per element, with
// the activation chosen in the loop and a 64-bit modulo for the bias, this took 1.07 ms for
// one of DistilBERT's 65 536 × 3 072 f16 GELUs on an H100, twice the product before it.
template <class T, int V, Activation A>
__global__ void bias_activation_kernel(T* y, const T* bias, int64_t rows, int64_t row_packs) {
    const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (c >= row_packs) return;
    Pack<T, V> b{};
    if (bias) b = reinterpret_cast<const Pack<T, V>*>(bias)[c];
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        Pack<T, V>& slot = reinterpret_cast<Pack<T, V>*>(y)[r * row_packs + c];
        Pack<T, V> values = slot;
#pragma unroll
        for (int j = 0; j < V; ++j) {
            float v = load_float(values.v[j]);
            if (bias) v += load_float(b.v[j]);
            values.v[j] = store<T>(static_cast<Compute<T>>(activate(v, A)));
        }
        slot = values;
    }
}

template <class T, int V>
void launch_bias_activation(const Launch& l, T* y, const T* bias, int64_t rows, int64_t cols, Activation activation) {
    const int64_t row_packs = cols / V;
    const int threads = static_cast<int>(std::clamp<int64_t>((row_packs + 31) / 32 * 32, 32, 256));
    // Enough blocks down the rows to fill the GPU many times over; each thread then takes
    // rows / grid.y rows.
    const dim3 grid(static_cast<unsigned>((row_packs + threads - 1) / threads),
                    static_cast<unsigned>(std::min<int64_t>(rows, 4096)));
    const auto go = [&](auto kernel) {
        kernel<<<grid, threads, 0, l.handle()>>>(y, bias, rows, row_packs);
        l.check_launch("bias_activation_kernel");
    };
    switch (activation) {
        case Activation::none: return go(bias_activation_kernel<T, V, Activation::none>);
        case Activation::relu: return go(bias_activation_kernel<T, V, Activation::relu>);
        case Activation::gelu: return go(bias_activation_kernel<T, V, Activation::gelu>);
        case Activation::gelu_tanh: return go(bias_activation_kernel<T, V, Activation::gelu_tanh>);
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
        constexpr int V = kPackWidth<T>;
        T* out = static_cast<T*>(l.out(0));
        const T* bias = has_bias ? static_cast<const T*>(l.in(2)) : nullptr;
        if (n % V == 0 && is_aligned(out, sizeof(T) * V) && (!bias || is_aligned(bias, sizeof(T) * V)))
            launch_bias_activation<T, V>(l, out, bias, rows, n, activation);
        else
            launch_bias_activation<T, 1>(l, out, bias, rows, n, activation);
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
    const Tensor& out = l.ctx.output(0);
    if (out.numel() == 0) return;
    const DType type = l.ctx.input(0).dtype();
    const detail::AttentionLayout a = detail::attention_layout(l.ctx);
    const float scale = l.ctx.attrs().get_float("scale", 1.0f);
    const int64_t batch = a.batch, heads = a.heads, sq = a.sq, sk = a.sk, d = a.d, dv = a.dv, ev = out.shape()[2];
    BiasStrides bs;
    if (l.ctx.has_input(3)) {
        const std::vector<int64_t> s = broadcast_strides(l.ctx.input(3).shape(), Shape({batch, heads, sq, sk}));
        bs = {s[0], s[1], s[2], s[3]};
    }
    const size_t element = dtype_size(type);
    const char* pq = static_cast<const char*>(l.in(0));
    const char* pk = a.packed ? pq + a.k_offset * element : static_cast<const char*>(l.in(1));
    const char* pv = a.packed ? pq + a.v_offset * element : static_cast<const char*>(l.in(2));
    if (d == dv && flash_attention(l, {type, pq, pk, pv, l.ctx.has_input(3) ? l.in(3) : nullptr, l.out(0), batch, heads,
                                       sq, sk, d, a.q_row, bs, scale}))
        return;
    char* scores = static_cast<char*>(l.ctx.workspace(static_cast<size_t>(batch * heads * sq * sk) * element));
    char* po = static_cast<char*>(l.out(0));
    // Two strided levels (batch, head) and cuBLAS strides one: loop over the shorter and let
    // one strided-batched product cover the longer. Looping over a batch of 256 cost 512
    // products per layer (DistilBERT on an H200: Attention half the run at batch 256).
    const bool by_head = heads <= batch;
    const int64_t loops = by_head ? heads : batch, count = by_head ? batch : heads;
    for (int64_t i = 0; i < loops; ++i) {
        const int64_t b = by_head ? 0 : i, h = by_head ? i : 0;
        const int64_t q_step = by_head ? sq * a.q_row : d, k_step = by_head ? sk * a.k_row : d;
        const int64_t s_step = by_head ? heads * sq * sk : sq * sk;
        const GemmOperand qh{pq + (b * sq * a.q_row + h * d) * element, a.q_row, q_step, false};
        const GemmOperand kh{pk + (b * sk * a.k_row + h * d) * element, a.k_row, k_step, true};
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
        const int64_t v_step = by_head ? sk * a.v_row : dv, o_step = by_head ? sq * ev : dv;
        const GemmOperand p{scores + ((b * heads + h) * sq * sk) * element, sk, p_step, false};
        const GemmOperand vh{pv + (b * sk * a.v_row + h * dv) * element, a.v_row, v_step, false};
        gemm_row_major(l, type, sq, dv, sk, 1.0f, p, vh, 0.0f, po + (b * sq * ev + h * dv) * element, ev, o_step,
                       count);
    }
}

// The fused kernel needs no scores; should it decline at run time (operands not aligned), the
// workspace grows on demand.
size_t attention_scores_bytes(const NodeSignature& node) {
    static const Attributes none;
    const Shape& q = node.input_shapes.at(0);
    const bool present = node.inputs_present.size() > 2 && node.inputs_present[1] && node.inputs_present[2];
    const detail::AttentionLayout a = detail::attention_layout(node.attributes ? *node.attributes : none, q,
                                                               present ? node.input_shapes.at(1) : q,
                                                               present ? node.input_shapes.at(2) : q);
    if (flash_attention_covers(node.kernel_dtype, a.d, a.dv)) return 0;
    return static_cast<size_t>(a.batch * a.heads * a.sq * a.sk) * dtype_size(node.kernel_dtype);
}

}  // namespace

void register_fused_kernels(KernelRegistrar& r) {
    r.add("FusedMatMul", kFloatTypes, run_fused_matmul);
    r.add("Attention", kFloatTypes, run_attention, attention_scores_bytes);
}

}  // namespace infer::cuda
