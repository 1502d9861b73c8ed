#pragma once
// The passes a session runs on its graph before planning, in one ordered list: fusions first
// (each only where the target backend has a kernel for the fused op), then the int8
// quantization and the f16/bf16 lowering (both at int8 on a backend whose int8 products take
// f16: PassContext::activation_dtype) and the casts it leaves around layer norms folded. Every
// pass works on a Rewriter, which keeps the graph's producer/consumer index.
#include "core/ir/graph_ir.hpp"
#include "core/passes/rewriter.hpp"

#include <infer/backend.hpp>
#include <infer/calibration.hpp>
#include <infer/session.hpp>

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace infer::detail {

// What every pass is told: the backend the session targets and the precision it runs at.
struct PassContext {
    const Backend& target;
    Precision precision;
    // f16: nodes of the fused graph to keep in f32, their f16 results having left f16's range.
    std::set<std::string> keep_f32 = {};
    // int8: calibrated activation ranges (static quantization), or null (dynamic).
    const Calibration* calibration = nullptr;
    // Keep every product of the graph apart (no fuse_qkv): calibration (calibration.cpp) names
    // the products as an int8 session, which keeps them apart, will see them.
    bool separate_products = false;

    // The dtype the lowering gives the ops that run low (their precision class is not
    // keeps_f32): f16 or bf16 at those precisions; at int8, f16 where the target's int8 products
    // take f16 activations (a QuantizedMatMul kernel for f16: the CUDA backend's, where an f32
    // int8 session spent more time in f32 attention and in moving f32 activations than in its
    // products), else f32; f32 otherwise.
    DType activation_dtype() const;
    // Whether the target has a kernel for `op` in the dtype it will run in after lowering (the
    // op's precision class decides), so that fusing never moves work off the target device.
    bool target_runs(std::string_view op) const;
    // Whether the target's supports() takes `node`, a node a pass is about to make in `graph`
    // (dtypes from the graph's values, kernel dtype that of input 0; shapes left out): for
    // forms of an op not every kernel of it runs.
    bool target_supports(const GraphIR& graph, const NodeIR& node) const;
};

using Pass = void (*)(Rewriter& rewriter, const PassContext& context);
struct NamedPass {
    std::string_view name;
    Pass run;
};

// The session pipeline, in order.
const std::vector<NamedPass>& session_passes();

// What a session plans from: `graph` after every pass (the graph itself, not copied, when no
// pass changed it). The result must not outlive `graph`.
std::shared_ptr<const GraphIR> run_pipeline(const GraphIR& graph, const PassContext& context);

// ---- the passes (one file each)
// MatMul of DequantizeLinear pairs (the QDQ format) to MatMulInteger (integer_qdq_products.cpp).
void integer_qdq_products(Rewriter& rewriter, const PassContext& context);
// GELU written out as Erf and arithmetic (fuse_gelu.cpp).
void fuse_gelu(Rewriter& rewriter, const PassContext& context);
// x · Sigmoid(x) to Silu (fuse_silu.cpp).
void fuse_silu(Rewriter& rewriter, const PassContext& context);
// Convolutions (8-bit and f32), their pools and 8-bit residual sums channel-last (channels_last.cpp).
void channels_last(Rewriter& rewriter, const PassContext& context);
// MatMulInteger → Cast → Mul by the scale (→ Add of a bias) to MatMulIntegerToFloat
// (fuse_integer_dequantize.cpp).
void fuse_integer_dequantize(Rewriter& rewriter, const PassContext& context);
// RMS normalization written out (T5's, LLaMA's) to RMSNormalization (fuse_rms_norm.cpp).
void fuse_rms_norm(Rewriter& rewriter, const PassContext& context);
// Scaled dot-product attention with its head split and merge (fuse_attention.cpp).
void fuse_attention(Rewriter& rewriter, const PassContext& context);
// MatMul by a weight, + bias, + Gelu/Relu (fuse_matmul.cpp).
void fuse_matmul_epilogue(Rewriter& rewriter, const PassContext& context);
// Q, K and V projections of one input to one product read in place by Attention (fuse_qkv.cpp).
void fuse_qkv(Rewriter& rewriter, const PassContext& context);
// Conv then Mul/Add by per-channel constants (a frozen batch norm) to one Conv (fold_conv_affine.cpp).
void fold_conv_affine(Rewriter& rewriter, const PassContext& context);
// Conv + residual Add + Relu (fuse_conv.cpp).
void fuse_conv_epilogue(Rewriter& rewriter, const PassContext& context);
// Residual Add + LayerNormalization (fuse_add_layer_norm.cpp).
void fuse_add_layer_norm(Rewriter& rewriter, const PassContext& context);
// Convolutions by a weight to integer convolutions at precision int8 (quantize_convolutions.cpp).
void quantize_convolutions(Rewriter& rewriter, const PassContext& context);
// Products by a weight to QuantizedMatMul at precision int8 (quantize_products.cpp).
void quantize_products(Rewriter& rewriter, const PassContext& context);
// Static int8: the range calibration recorded for the product named `recorded_as` (its input's),
// as the attributes a_low and a_high of `product`; nothing when dynamic or not calibrated.
void set_calibrated_range(NodeIR& product, const PassContext& context, const std::string& recorded_as);
// The nodes that pass would quantize (MatMul/FusedMatMul of an f32 A by a 2-D f32 constant).
std::vector<int> quantizable_products(const Rewriter& rewriter);
// f16/bf16 lowering to PassContext::activation_dtype (lower_precision.cpp).
void lower_precision_pass(Rewriter& rewriter, const PassContext& context);
// Then the Casts around each AddLayerNormalization folded into it (fold_norm_casts.cpp).
void fold_norm_casts(Rewriter& rewriter, const PassContext& context);

}  // namespace infer::detail
