#include "backends/cpu/kernels/half_weight_product.hpp"

#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/half_convert.hpp"

#include <algorithm>
#include <memory>
#include <vector>

namespace infer::cpu {

namespace {

// Below this many weight elements the weight stays in cache and the boundary conversion is as fast.
constexpr int64_t kStreamedWeight = int64_t{1} << 18;

class StreamedHalfProduct final : public CompiledKernel {
public:
    StreamedHalfProduct(std::unique_ptr<CompiledKernel> boundary, ProductEpilogue epilogue)
        : boundary_(std::move(boundary)), epilogue_(epilogue) {}

    size_t workspace_bytes() const override { return boundary_->workspace_bytes(); }

    void run(KernelContext& ctx) const override {
        const Tensor& a = ctx.input(0);
        const Tensor& b = ctx.input(1);
        Tensor& out = ctx.output(0);
        const bool streamable = b.rank() == 2 && a.rank() >= 1 && a.dtype() == b.dtype() && out.dtype() == a.dtype() &&
                                a.shape()[a.rank() - 1] == b.shape()[0] && b.numel() >= kStreamedWeight;
        const int64_t k = b.rank() == 2 ? b.shape()[0] : 0, n = b.rank() == 2 ? b.shape()[1] : 0;
        const int64_t rows = streamable && k > 0 ? a.numel() / k : 0;
        if (!streamable || rows == 0 || rows > kStreamRows || out.numel() != rows * n) {
            boundary_->run(ctx);
            return;
        }
        thread_local std::vector<float> a32, y, bias;
        a32.resize(static_cast<size_t>(a.numel()));
        y.resize(static_cast<size_t>(rows * n));
        widen_to_float(a, a32.data());
        gemm_rows_16bit_weights(rows, n, k, a32.data(), static_cast<const uint16_t*>(b.raw_data()), b.dtype() == DType::bf16,
                                y.data());
        if (epilogue_) {
            const float* bias_values = nullptr;
            if (ctx.has_input(2)) {
                bias.resize(static_cast<size_t>(ctx.input(2).numel()));
                widen_to_float(ctx.input(2), bias.data());
                bias_values = bias.data();
            }
            epilogue_(ctx, bias_values, y.data(), rows, n);
        }
        auto* bits = static_cast<uint16_t*>(out.raw_data());
        if (out.dtype() == DType::bf16)
            float_to_bfloat16(y.data(), bits, y.size());
        else
            float_to_half(y.data(), bits, y.size());
    }

private:
    std::unique_ptr<CompiledKernel> boundary_;
    ProductEpilogue epilogue_;
};

}  // namespace

void add_16bit_weight_product(KernelRegistry& registry, const std::string& op, ProductEpilogue epilogue) {
    const KernelFactory boundary = with_f32_compute(*registry.find(op, DType::f32));
    const KernelFactory streamed = [boundary, epilogue](const CompileContext& c) -> std::unique_ptr<CompiledKernel> {
        return std::make_unique<StreamedHalfProduct>(boundary(c), epilogue);
    };
    for (DType t : {DType::f16, DType::bf16}) registry.add_compiled(op, t, streamed);
}

}  // namespace infer::cpu
