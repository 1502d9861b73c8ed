#include "backends/cpu/kernels/half_boundary.hpp"

#include "backends/cpu/kernels/half_convert.hpp"

#include <memory>
#include <utility>
#include <vector>

namespace infer::cpu {

namespace {

bool is_16bit_float(DType t) { return t == DType::f16 || t == DType::bf16; }

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

void to_float(const Tensor& src, Tensor& dst) {
    const auto* bits = static_cast<const uint16_t*>(src.raw_data());
    const size_t count = static_cast<size_t>(src.numel());
    if (src.dtype() == DType::f16)
        half_to_float(bits, dst.data<float>(), count);
    else
        bfloat16_to_float(bits, dst.data<float>(), count);
}

void from_float(const Tensor& src, Tensor& dst) {
    auto* bits = static_cast<uint16_t*>(dst.raw_data());
    const size_t count = static_cast<size_t>(dst.numel());
    if (dst.dtype() == DType::f16)
        float_to_half(src.data<float>(), bits, count);
    else
        float_to_bfloat16(src.data<float>(), bits, count);
}

}  // namespace

Kernel with_f32_compute(Kernel f32_kernel) {
    return [kernel = std::move(f32_kernel)](KernelContext& ctx) {
        thread_local Scratch scratch;
        scratch.reset();
        NodeSignature node;
        node.op = ctx.op();
        node.name = ctx.node_name();
        node.kernel_dtype = DType::f32;
        node.attributes = &ctx.attrs();
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
            node.input_dtypes.push_back(inputs.back().dtype());
        }
        std::vector<Tensor> outputs;
        outputs.reserve(ctx.num_outputs());
        for (size_t i = 0; i < ctx.num_outputs(); ++i) {
            const Tensor& t = ctx.output(i);
            outputs.push_back(is_16bit_float(t.dtype()) ? scratch.next(t.shape()) : t);
            node.output_dtypes.push_back(outputs.back().dtype());
        }
        KernelContext inner(node, inputs, outputs, ctx.stream(), ctx.device(),
                            [&ctx](size_t bytes) { return ctx.workspace(bytes); });
        kernel(inner);
        for (size_t i = 0; i < ctx.num_outputs(); ++i)
            if (is_16bit_float(ctx.output(i).dtype())) from_float(outputs[i], ctx.output(i));
    };
}

void add_floating(KernelRegistry& registry, const std::string& op, const Kernel& f32_kernel) {
    registry.add(op, DType::f32, f32_kernel);
    const Kernel converted = with_f32_compute(f32_kernel);
    registry.add(op, {DType::f16, DType::bf16}, converted);
}

}  // namespace infer::cpu
