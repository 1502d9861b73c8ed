#include "backends/cpu/kernels/packed_weight_product.hpp"

#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"

#include <memory>
#include <vector>

namespace infer::cpu {

namespace {

std::vector<float> widened(const Tensor& t) {
    std::vector<float> values(static_cast<size_t>(t.numel()));
    widen_to_float(t, values.data());
    return values;
}

class PackedWeightProduct final : public CompiledKernel {
public:
    PackedWeightProduct(const CompileContext& c, FloatGemmKernel kernel, bool fused) {
        const NodeSignature& node = c.node();
        const int64_t k = node.input_shapes[1][0], n = node.input_shapes[1][1];
        // Both f32 kernels read the weight from panels packed once per session, a second copy:
        // read in place, a tile's K steps are rows 4N bytes apart. avx2: BERT's 128 × 768 × 3072
        // product ran at 33–38 against 84–87 GFLOP/s packed on a Zen 3 core. avx512: 184 against
        // 289 GFLOP/s on 2 cores of an AMX Xeon, and packed was ahead on all eleven BERT and
        // MiniLM shapes there (1.01–1.57×; kernel-bench), as fast on a Zen 4.
        const bool f32_panels = kernel == FloatGemmKernel::avx2 || kernel == FloatGemmKernel::avx512;
        layout_ = f32_panels ? packed_f32_layout(kernel, k, n) : packed_float_layout(kernel, k, n);
        const PackedFloatLayout layout = layout_;
        if (f32_panels)
            weight_ = c.prepacked(1, "f32-panels", [layout](const Tensor& value) {
                return pack_f32_weight(layout, value.data<float>(), layout.n);
            });
        else if (layout.packed)
            weight_ = c.prepacked(1, "bf16-pairs", [layout](const Tensor& value) {
                return pack_float_weight(layout, static_cast<const uint16_t*>(value.raw_data()), layout.n);
            });
        else
            weight_ = *c.constant(1);
        has_bias_ = fused && node.inputs_present.size() > 2 && node.inputs_present[2];
        if (has_bias_ && c.constant(2)) bias_ = widened(*c.constant(2));
        if (fused) activation_ = row_activation_named(node.attributes->get_string("activation", ""));
    }

    size_t workspace_bytes() const override {
        return has_bias_ && bias_.empty() ? sizeof(float) * static_cast<size_t>(layout_.n) : 0;
    }

    void run(KernelContext& ctx) const override {
        Tensor& out = ctx.output(0);
        if (out.numel() == 0) return;
        const float* bias = bias_.empty() ? nullptr : bias_.data();
        if (has_bias_ && !bias) {  // a bias computed at run time
            auto* scratch = static_cast<float*>(ctx.workspace(workspace_bytes()));
            widen_to_float(ctx.input(2), scratch);
            bias = scratch;
        }
        TileWriter writer{out.raw_data(), out.dtype() == DType::bf16, layout_.n, bias, activation_};
        gemm_packed_float(layout_, weight_.raw_data(), ctx.input(0).raw_data(), layout_.k, out.numel() / layout_.n,
                          &TileWriter::tile, &writer);
    }

private:
    PackedFloatLayout layout_;
    Tensor weight_;
    bool has_bias_ = false;
    std::vector<float> bias_;  // a constant bias, widened once
    RowActivation activation_ = RowActivation::none;
};

// A 2-D constant weight whose K matches A's last axis, every operand of the kernel's dtype
// (the bias may be f32 in a bf16 node), a kernel of ours for that dtype on this CPU, and (f32)
// more rows than a decode step has.
bool packable(const CompileContext& c, DType dtype, FloatGemmKernel kernel, bool fused) {
    const NodeSignature& node = c.node();
    if (kernel == FloatGemmKernel::blas || !c.constant(1) || node.input_shapes.size() < 2) return false;
    const Shape &a = node.input_shapes[0], &b = node.input_shapes[1];
    if (b.rank() != 2 || a.rank() < 1 || a[a.rank() - 1] != b[0] || b[0] == 0 || b[1] == 0) return false;
    if (node.input_dtypes[0] != dtype || node.input_dtypes[1] != dtype || node.output_dtypes[0] != dtype) return false;
    // A decode step's few rows by an f32 weight read from memory: the BLAS path's split of the
    // weight's rows between threads streams it faster than the in-place tiles, which walk each
    // panel down K (GPT-2 small, batch 1: 56 against 30 tokens/s). The avx2 kernel's packed
    // panels lose to it only at one row (GPT-2's 768 × 50257 head on 2 Zen 3 cores: 6.2 against
    // 4.3 ms) and win from two (8 rows: 9.1 against 13.6 ms), as bf16's packed panels win at
    // every row count.
    const int64_t rows = a.numel() / b[0];
    if (dtype == DType::f32 && rows <= (kernel == FloatGemmKernel::avx2 ? 1 : kStreamRows)) return false;
    const bool bias = fused && node.inputs_present.size() > 2 && node.inputs_present[2];
    if (bias && ((node.input_dtypes[2] != dtype && node.input_dtypes[2] != DType::f32) ||
                 node.input_shapes[2].numel() != b[1]))
        return false;
    return true;
}

}  // namespace

void add_packed_weight_product(KernelRegistry& registry, const std::string& op) {
    const bool fused = op == "FusedMatMul";
    for (DType dtype : {DType::f32, DType::bf16}) {
        const KernelFactory previous = *registry.find(op, dtype);
        registry.add_compiled(op, dtype, [previous, dtype, fused](const CompileContext& c) -> std::unique_ptr<CompiledKernel> {
            const FloatGemmKernel kernel = dtype == DType::bf16 ? bf16_gemm_kernel() : f32_gemm_kernel();
            if (packable(c, dtype, kernel, fused)) return std::make_unique<PackedWeightProduct>(c, kernel, fused);
            return previous(c);
        });
    }
}

}  // namespace infer::cpu
