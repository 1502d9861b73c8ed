#include "backends/cpu/kernels/half_boundary.hpp"

#include "backends/cpu/kernels/half_convert.hpp"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

namespace infer::cpu {

namespace {

// Per-thread f32 buffers, kept between calls so a steady run does not allocate. Not taken from
// ctx.workspace(), which the wrapped kernel itself may claim (and so invalidate).
class Scratch {
public:
    Tensor next(const Shape& shape) {
        if (used_ == blocks_.size()) blocks_.emplace_back();
        std::vector<float>& block = blocks_[used_++];
        const size_t count = static_cast<size_t>(shape.numel());
        if (block.size() < count) block.resize(count);
        auto buffer = std::make_shared<Buffer>(block.data(), count * sizeof(float), Device::CPU,
                                               Buffer::Deleter{}, Buffer::Flags{true, false});
        return Tensor(std::move(buffer), DType::f32, shape);
    }
    void reset() { used_ = 0; }

private:
    std::vector<std::vector<float>> blocks_;
    size_t used_ = 0;
};

void to_float(const Tensor& src, Tensor& dst) { widen_to_float(src, dst.data<float>()); }

void from_float(const Tensor& src, Tensor& dst) {
    auto* bits = static_cast<uint16_t*>(dst.raw_data());
    const size_t count = static_cast<size_t>(dst.numel());
    if (dst.dtype() == DType::f16)
        float_to_half(src.data<float>(), bits, count);
    else
        float_to_bfloat16(src.data<float>(), bits, count);
}

}  // namespace

namespace {

// The f32 kernel between conversions. Weights are converted on every run too, not prepacked
// in f32: an f16/bf16 session on the CPU is chosen to halve the weights' memory, and f32
// copies of them would undo that.
class F32ComputeKernel final : public CompiledKernel {
public:
    F32ComputeKernel(NodeSignature f32_node, std::unique_ptr<CompiledKernel> f32_kernel)
        : node_(std::move(f32_node)), kernel_(std::move(f32_kernel)) {}

    size_t workspace_bytes() const override { return kernel_->workspace_bytes(); }

    void run(KernelContext& ctx) const override {
        thread_local Scratch scratch;
        scratch.reset();
        std::vector<Tensor> inputs;
        inputs.reserve(ctx.num_inputs());
        for (size_t i = 0; i < ctx.num_inputs(); ++i) {
            const Tensor& t = ctx.input(i);
            if (t.defined() && is_16bit_float(t.dtype())) {
                inputs.push_back(scratch.next(t.shape()));
                to_float(t, inputs.back());
            } else {
                inputs.push_back(t);
            }
        }
        std::vector<Tensor> outputs;
        outputs.reserve(ctx.num_outputs());
        for (size_t i = 0; i < ctx.num_outputs(); ++i) {
            const Tensor& t = ctx.output(i);
            outputs.push_back(is_16bit_float(t.dtype()) ? scratch.next(t.shape()) : t);
        }
        KernelContext inner(node_, inputs, outputs, ctx.stream(), ctx.device(),
                            [&ctx](size_t bytes) { return ctx.workspace(bytes); });
        kernel_->run(inner);
        for (size_t i = 0; i < ctx.num_outputs(); ++i)
            if (is_16bit_float(ctx.output(i).dtype())) from_float(outputs[i], ctx.output(i));
    }

private:
    NodeSignature node_;
    std::unique_ptr<CompiledKernel> kernel_;
};

}  // namespace

void narrow_from_float(const float* values, Tensor& t) {
    auto* bits = static_cast<uint16_t*>(t.raw_data());
    const auto count = static_cast<size_t>(t.numel());
    if (t.dtype() == DType::bf16) float_to_bfloat16(values, bits, count);
    else float_to_half(values, bits, count);
}

void widen_to_float(const Tensor& t, float* out) {
    const auto count = static_cast<size_t>(t.numel());
    if (t.dtype() == DType::f32) {
        std::copy_n(t.data<float>(), count, out);
        return;
    }
    const auto* bits = static_cast<const uint16_t*>(t.raw_data());
    if (t.dtype() == DType::bf16)
        bfloat16_to_float(bits, out, count);
    else
        half_to_float(bits, out, count);
}

KernelFactory with_f32_compute(KernelFactory f32_factory) {
    return [factory = std::move(f32_factory)](const CompileContext& c) -> std::unique_ptr<CompiledKernel> {
        NodeSignature node = c.node();
        node.kernel_dtype = DType::f32;
        for (DType& t : node.input_dtypes)
            if (is_16bit_float(t)) t = DType::f32;
        for (DType& t : node.output_dtypes)
            if (is_16bit_float(t)) t = DType::f32;
        // The f32 kernel sees no constants: their 16-bit values are not its inputs' values.
        auto kernel = factory(CompileContext(node, c.device(), {}, nullptr));
        return std::make_unique<F32ComputeKernel>(std::move(node), std::move(kernel));
    };
}

KernelFactory with_f32_compute(const Kernel& f32_kernel) {
    return with_f32_compute(
        KernelFactory([f32_kernel](const CompileContext&) { return std::make_unique<FunctionKernel>(f32_kernel); }));
}

void add_floating(KernelRegistry& registry, const std::string& op, const Kernel& f32_kernel) {
    registry.add(op, DType::f32, f32_kernel);
    add_f32_compute(registry, op);
}

void add_f32_compute(KernelRegistry& registry, const std::string& op) {
    const KernelFactory converted = with_f32_compute(*registry.find(op, DType::f32));
    for (DType t : {DType::f16, DType::bf16}) registry.add_compiled(op, t, converted);
}

}  // namespace infer::cpu
