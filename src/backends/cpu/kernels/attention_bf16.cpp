// Attention in bf16 where the CPU has AMX: both per-head products on AMX tiles (the bf16 product
// kernel, packed_float_gemm.hpp) straight from the bf16 Q, K and V, instead of widening all three
// to f32 and narrowing the output at the kernel's boundary. Per batch and head:
//   S = scale · Q·Kᵀ   Kᵀ packed from K's rows, whose pairs along the head are side by side;
//   P = softmax(S + bias) in f32, then rounded to bf16 (the probabilities' 8 bits of mantissa
//       are what a bf16 session computes in anyway);
//   O = P·V            V packed a pair of keys at a time; O narrowed to bf16 per tile.
// Elsewhere (no AMX, other dtypes, a decode step's few queries, heads narrower than 64) the
// kernel registered before runs: the f32 kernel (attention_head.hpp) between widened inputs and
// a narrowed output. With vdpbf16ps instead of AMX (AVX512_BF16 alone, a Zen 5), packing each
// head's K and V cost more than the twice-as-fast products gave back: DistilBERT at batch 8
// spent 17.9–18.3 ms in Attention widened against 21.6–24.9 here (2 Zen 5 cores, alternating
// builds); on an AMX Xeon this kernel was the faster one (26.6 against 29.9 ms).
#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/broadcast.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/half_convert.hpp"
#include "backends/cpu/kernels/neural_normalization.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/register.hpp"
#include "core/ops/attention_layout.hpp"

#include <memory>
#include <vector>

namespace infer::cpu {

namespace {

// The narrowest head this kernel takes (see register_bf16_attention_kernel).
constexpr int64_t kAmxMinHeadDim = 64;

class Bf16Attention final : public CompiledKernel {
public:
    explicit Bf16Attention(const CompileContext& c)
        : heads_(c.node().attributes->get_int("num_heads", 1)),
          scale_(c.node().attributes->get_float("scale", 1.0f)),
          kernel_(bf16_gemm_kernel()) {}

    void run(KernelContext& ctx) const override {
        Tensor& out = ctx.output(0);
        if (out.numel() == 0) return;
        const detail::AttentionLayout a = detail::attention_layout(ctx);
        const int64_t batch = a.batch, sq = a.sq, sk = a.sk, d = a.d, dv = a.dv, ev = out.shape()[2];
        const PackedFloatLayout keys = packed_float_layout(kernel_, d, sk);
        const PackedFloatLayout values = packed_float_layout(kernel_, sk, dv);
        // Per head: scores (f32), probabilities (bf16), then packed Kᵀ and V (bf16).
        const int64_t score_floats = sq * sk;
        const int64_t bf16_values = sq * sk + packed_elements(keys) + packed_elements(values);
        const int64_t per_head_bytes = (4 * score_floats + 2 * bf16_values + 63) / 64 * 64;
        const bool has_bias = ctx.has_input(3);
        const int64_t bias_count = has_bias ? ctx.input(3).numel() : 0;
        auto* memory = static_cast<char*>(ctx.workspace(static_cast<size_t>(batch * heads_ * per_head_bytes + 4 * bias_count)));
        // The bias in f32 (a bf16 one widened once per run), with its strides as [B, H, Sq, Sk].
        const float* bias = nullptr;
        std::vector<int64_t> bs(4, 0);
        if (has_bias) {
            const Tensor& b = ctx.input(3);
            bs = broadcast_strides(b.shape(), Shape({batch, heads_, sq, sk}));
            if (b.dtype() == DType::f32) {
                bias = b.data<float>();
            } else {
                auto* widened = reinterpret_cast<float*>(memory + batch * heads_ * per_head_bytes);
                widen_to_float(b, widened);
                bias = widened;
            }
        }
        const auto* pq = static_cast<const uint16_t*>(ctx.input(0).raw_data());
        const auto* pk = a.packed ? pq + a.k_offset : static_cast<const uint16_t*>(ctx.input(1).raw_data());
        const auto* pv = a.packed ? pq + a.v_offset : static_cast<const uint16_t*>(ctx.input(2).raw_data());
        auto* po = static_cast<uint16_t*>(out.raw_data());
        parallel_for(batch * heads_, 1, [&](int64_t begin, int64_t end) {
            for (int64_t bh = begin; bh < end; ++bh) {
                const int64_t b = bh / heads_, h = bh % heads_;
                auto* scores = reinterpret_cast<float*>(memory + bh * per_head_bytes);
                auto* probabilities = reinterpret_cast<uint16_t*>(scores + score_floats);
                uint16_t* keys_packed = probabilities + sq * sk;
                uint16_t* values_packed = keys_packed + packed_elements(keys);
                pack_bf16_pairs(keys, pk + b * sk * a.k_row + h * d, a.k_row, true, keys_packed);
                TileWriter to_scores{scores, false, sk};
                to_scores.scale = scale_;
                gemm_packed_float(keys, keys_packed, pq + b * sq * a.q_row + h * d, a.q_row, sq, &TileWriter::tile,
                                  &to_scores);
                biased_softmax_rows(scores, sq, sk, bias ? bias + b * bs[0] + h * bs[1] : nullptr, bs[2], bs[3]);
                float_to_bfloat16(scores, probabilities, static_cast<size_t>(sq * sk));
                pack_bf16_pairs(values, pv + b * sk * a.v_row + h * dv, a.v_row, false, values_packed);
                TileWriter to_out{po + b * sq * ev + h * dv, true, ev};
                gemm_packed_float(values, values_packed, probabilities, sk, sq, &TileWriter::tile, &to_out);
            }
        });
    }

private:
    int64_t heads_;
    float scale_;
    FloatGemmKernel kernel_;  // avx512_bf16 or amx_bf16
};

}  // namespace

void register_bf16_attention_kernel(KernelRegistry& registry) {
    const KernelFactory previous = *registry.find("Attention", DType::bf16);
    registry.add_compiled("Attention", DType::bf16, [previous](const CompileContext& c) -> std::unique_ptr<CompiledKernel> {
        const NodeSignature& node = c.node();
        bool all_bf16 = node.input_dtypes[0] == DType::bf16 && node.output_dtypes[0] == DType::bf16;
        for (size_t i = 1; i < 3; ++i)  // K and V, unless packed into input 0
            all_bf16 = all_bf16 && (!node.inputs_present[i] || node.input_dtypes[i] == DType::bf16);
        const bool bias_ok = node.input_dtypes.size() < 4 || !node.inputs_present[3] ||
                             node.input_dtypes[3] == DType::bf16 || node.input_dtypes[3] == DType::f32;
        // A decode step's few queries: packing K and V would cost as much as the products, and
        // widening them (the kernel before) measured faster (GPT-2 small, batch 8: 600 against
        // 400 tokens/s).
        const bool few_queries = node.input_shapes[0].rank() == 3 && node.input_shapes[0][1] <= kStreamRows;
        // Heads of fewer than 64 dimensions: a Q·Kᵀ of one tile step could not pay for packing
        // each head's K and V (MiniLM's 32, batch 8, 2 cores of an AMX Xeon: 12.2–14.1 ms in
        // Attention here against 8.2–9.3 widened; DistilBERT's 64: 19.3–19.9 against 23.8–24.3).
        const Shape& q = node.input_shapes[0];
        const bool narrow_heads =
            q.rank() == 3 && q[2] > 0 && detail::attention_layout(*node.attributes, q, q, q).d < kAmxMinHeadDim;
        // Only on AMX (see the top of this file).
        if (all_bf16 && bias_ok && !few_queries && !narrow_heads && bf16_gemm_kernel() == FloatGemmKernel::amx_bf16)
            return std::make_unique<Bf16Attention>(c);
        return previous(c);
    });
}

}  // namespace infer::cpu
