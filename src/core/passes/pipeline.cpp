#include "core/passes/pipeline.hpp"

#include "core/log.hpp"
#include "core/ops/op_schema.hpp"

#include <chrono>

namespace infer::detail {

DType PassContext::activation_dtype() const {
    switch (precision) {
        case Precision::f16: return DType::f16;
        case Precision::bf16: return DType::bf16;
        case Precision::int8:
            return target.kernels().find("QuantizedMatMul", DType::f16) != nullptr ? DType::f16 : DType::f32;
        default: return DType::f32;
    }
}

bool PassContext::target_runs(std::string_view op) const {
    const OpSchema* schema = find_op(op);
    if (!schema) return false;
    const DType dtype = schema->traits.precision != PrecisionClass::keeps_f32 ? activation_dtype() : DType::f32;
    return target.kernels().find(std::string(op), dtype) != nullptr;
}

bool PassContext::target_supports(const GraphIR& graph, const NodeIR& node) const {
    NodeSignature signature;
    signature.op = node.op;
    signature.name = node.name;
    const auto dtype = [&](int value) { return value >= 0 ? graph.values[value].type.dtype : DType::f32; };
    signature.kernel_dtype = dtype(node.inputs.empty() ? -1 : node.inputs[0]);
    // Shapes as far as the graph knows them (dims may be dynamic, or the shape empty when
    // unknown): a backend may decline by them, e.g. CUDA's ChannelsLastConv by its filter's shape.
    for (int input : node.inputs) {
        signature.input_dtypes.push_back(dtype(input));
        signature.inputs_present.push_back(input >= 0);
        const auto& shape = input >= 0 ? graph.values[input].type.shape : std::nullopt;
        signature.input_shapes.push_back(shape ? *shape : Shape());
    }
    for (int output : node.outputs) signature.output_dtypes.push_back(dtype(output));
    signature.attributes = &node.attributes;
    return target.supports(signature);
}

const std::vector<NamedPass>& session_passes() {
    static const std::vector<NamedPass> passes{
        // First: the MatMuls it takes must not be fused with their bias before it sees them.
        {"integer_qdq_products", integer_qdq_products},
        {"fuse_integer_dequantize", fuse_integer_dequantize},
        {"fuse_gelu", fuse_gelu},
        {"fuse_silu", fuse_silu},
        {"fuse_rms_norm", fuse_rms_norm},
        {"fuse_attention", fuse_attention},
        {"fuse_matmul_epilogue", fuse_matmul_epilogue},
        // After it: the projections it gave their biases become one product.
        {"fuse_qkv", fuse_qkv},
        // Before both passes after it, which take Conv nodes with nothing between them and their Relu.
        {"fold_conv_affine", fold_conv_affine},
        // Before the conv epilogue fusion, which would take its convolutions as FusedConv.
        {"quantize_convolutions", quantize_convolutions},
        {"fuse_conv_epilogue", fuse_conv_epilogue},
        {"fuse_add_layer_norm", fuse_add_layer_norm},
        {"quantize_products", quantize_products},
        {"lower_precision", lower_precision_pass},
        // After every pass that makes QLinearConv or QuantizedAdd, and after the lowering, which
        // leaves f32 only the convolutions that stay f32.
        {"channels_last", channels_last},
        {"fold_norm_casts", fold_norm_casts},
    };
    return passes;
}

std::shared_ptr<const GraphIR> run_pipeline(const GraphIR& graph, const PassContext& context) {
    Rewriter rewriter(std::shared_ptr<const GraphIR>(std::shared_ptr<void>(), &graph));
    // Timed at debug level: the passes are part of a session's cold start.
    const bool timed = logger().should_log(spdlog::level::debug);
    for (const NamedPass& pass : session_passes()) {
        const auto started = std::chrono::steady_clock::now();
        pass.run(rewriter, context);
        rewriter.commit();
        if (timed)
            logger().debug("pass {}: {:.1f} ms", pass.name,
                           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
    }
    return rewriter.result();
}

}  // namespace infer::detail
