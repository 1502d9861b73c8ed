// Conv in bf16 where the CPU has AVX512_BF16: per image, group and chunk of output positions
// (conv_columns.hpp), the columns (2-D: gathered from the image's phases, convolution_taps.hpp;
// else im2col in bf16, or the input itself for a 1x1 kernel) packed into pairs of rows and
// multiplied by the weight
// on the bf16 product kernel (packed_float_gemm.hpp: vdpbf16ps, or AMX tiles where usable),
// which reads each output channel's weights in place as its row of A: twice the f32 kernel's work per instruction, and the input and weight
// never widened. Each tile gets its channel's bias (and FusedConv's residual and ReLU) and is
// narrowed to bf16 as it is written.
// Depthwise convolutions and CPUs without AVX512_BF16 keep the kernel registered before (f32 at
// the boundary).
#include "backends/cpu/kernels/conv_columns.hpp"
#include "backends/cpu/kernels/convolution_taps.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <memory>
#include <vector>

namespace infer::cpu {

namespace {

class Bf16Conv final : public CompiledKernel {
public:
    Bf16Conv(const CompileContext& c, std::unique_ptr<CompiledKernel> fallback)
        : group_(c.node().attributes->get_int("group", 1)),
          activation_(ConvActivation::of(*c.node().attributes)),
          kernel_(bf16_gemm_kernel()),
          fallback_(std::move(fallback)) {}

    size_t workspace_bytes() const override { return fallback_->workspace_bytes(); }

    void run(KernelContext& ctx) const override {
        const Tensor& x = ctx.input(0);
        const Tensor& w = ctx.input(1);
        Tensor& y = ctx.output(0);
        const ConvGeometry g = conv_geometry(ctx, x.shape(), w.shape(), group_);
        if (y.numel() == 0) return;
        if (g.channels == 0 || (g.channels == 1 && group_ > 1)) {  // no taps, or depthwise
            fallback_->run(ctx);
            return;
        }
        const int64_t images = x.shape()[0], out_channels = w.shape()[0], group_out = out_channels / group_;
        const int64_t k = g.channels * g.taps;
        const bool direct = reads_input_directly(g);
        const int64_t chunk = column_chunk(g, sizeof(uint16_t));
        // One workspace: 2-D convolutions' row offsets and image phases (convolution_taps.hpp),
        // then the bias in f32.
        const bool taps = g.axes.size() == 2 && !direct;
        const TapPhases phases = taps ? TapPhases::of(g) : TapPhases{};
        const int64_t offset_count = taps ? k : 0, bias_floats = ctx.has_input(2) ? out_channels : 0;
        auto* offsets = static_cast<int64_t*>(ctx.workspace(static_cast<size_t>(8 * offset_count + 4 * bias_floats) +
                                                            phases.elements * sizeof(uint16_t)));
        float* bias = bias_floats ? reinterpret_cast<float*>(offsets + offset_count) : nullptr;
        auto* image_phases = reinterpret_cast<uint16_t*>(offsets + offset_count) + 2 * bias_floats;
        if (bias_floats) widen_to_float(ctx.input(2), bias);
        if (taps) phases.offsets(g, offsets);
        const auto* px = static_cast<const uint16_t*>(x.raw_data());
        const auto* pw = static_cast<const uint16_t*>(w.raw_data());
        auto* py = static_cast<uint16_t*>(y.raw_data());
        const auto* residual = ctx.has_input(3) ? static_cast<const uint16_t*>(ctx.input(3).raw_data()) : nullptr;
        if (taps) {
            // A chunk of output positions (in the phase layout) at a time, the chunks spread over
            // the threads: B's pairs packed straight from the image's phases, multiplied.
            const int64_t positions = phases.positions(g), chunks = (positions + chunk - 1) / chunk;
            for (int64_t n = 0; n < images; ++n)
                for (int64_t grp = 0; grp < group_; ++grp) {
                    phases.fill(px + (n * group_ + grp) * g.channels * g.input_size, g, image_phases);
                    const int64_t plane = (n * out_channels + grp * group_out) * g.positions;
                    parallel_for(chunks, 1, [&](int64_t first, int64_t last) {
                        thread_local std::vector<uint16_t> packed;  // one chunk
                        for (int64_t c = first; c < last; ++c) {
                            const int64_t p0 = c * chunk, p1 = std::min(positions, p0 + chunk);
                            const PackedFloatLayout layout = packed_float_layout(kernel_, k, p1 - p0);
                            packed.resize(static_cast<size_t>(packed_elements(layout)));
                            pack_bf16_pairs_gathered(layout, image_phases + p0, offsets, packed.data());
                            PhaseRowsWriter writer{{py + plane, true, g.positions, bias ? bias + grp * group_out : nullptr,
                                                    residual ? residual + plane : nullptr, activation_},
                                                   phases.width, g.axes[1].out, p0};
                            gemm_packed_float(layout, packed.data(), pw + grp * group_out * k, k, group_out,
                                              &PhaseRowsWriter::tile, &writer);
                        }
                    });
                }
            return;
        }
        const int64_t chunks = (g.positions + chunk - 1) / chunk;
        for (int64_t n = 0; n < images; ++n) {
            for (int64_t grp = 0; grp < group_; ++grp) {
                const uint16_t* in = px + (n * group_ + grp) * g.channels * g.input_size;
                const int64_t plane = (n * out_channels + grp * group_out) * g.positions;
                // A chunk of output positions at a time, the chunks spread over the threads: its
                // columns unfolded (or, 1x1, the input's), packed into pairs, multiplied.
                parallel_for(chunks, 1, [&](int64_t first, int64_t last) {
                    thread_local std::vector<uint16_t> columns, packed;  // one chunk each
                    for (int64_t c = first; c < last; ++c) {
                        const int64_t p0 = c * chunk, p1 = std::min(g.positions, p0 + chunk);
                        const PackedFloatLayout layout = packed_float_layout(kernel_, k, p1 - p0);
                        packed.resize(static_cast<size_t>(packed_elements(layout)));
                        if (direct) {
                            pack_bf16_pairs(layout, in + p0, g.positions, false, packed.data());
                        } else {
                            columns.resize(static_cast<size_t>(k * chunk));
                            im2col(in, g, p0, p1, columns.data());
                            pack_bf16_pairs(layout, columns.data(), p1 - p0, false, packed.data());
                        }
                        ChannelBiasWriter writer{py + plane + p0, true, g.positions, bias ? bias + grp * group_out : nullptr,
                                                 residual ? residual + plane + p0 : nullptr, activation_};
                        gemm_packed_float(layout, packed.data(), pw + grp * group_out * k, k, group_out,
                                          &ChannelBiasWriter::tile, &writer);
                    }
                });
            }
        }
    }

private:
    int64_t group_;
    ConvActivation activation_;
    FloatGemmKernel kernel_;  // avx512_bf16 or amx_bf16
    std::unique_ptr<CompiledKernel> fallback_;
};

}  // namespace

void register_bf16_conv_kernel(KernelRegistry& registry, const std::string& op) {
    const KernelFactory previous = *registry.find(op, DType::bf16);
    registry.add_compiled(op, DType::bf16, [previous](const CompileContext& c) -> std::unique_ptr<CompiledKernel> {
        const NodeSignature& node = c.node();
        const bool all_bf16 = node.input_dtypes[0] == DType::bf16 && node.input_dtypes[1] == DType::bf16 &&
                              node.output_dtypes[0] == DType::bf16;
        const bool bias_ok = node.input_dtypes.size() < 3 || !node.inputs_present[2] ||
                             node.input_dtypes[2] == DType::bf16 || node.input_dtypes[2] == DType::f32;
        const bool residual_ok = node.input_dtypes.size() < 4 || !node.inputs_present[3] ||
                                 node.input_dtypes[3] == DType::bf16;
        if (all_bf16 && bias_ok && residual_ok && bf16_gemm_kernel() != FloatGemmKernel::blas)
            return std::make_unique<Bf16Conv>(c, previous(c));
        return previous(c);
    });
}

}  // namespace infer::cpu
