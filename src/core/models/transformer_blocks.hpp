#pragma once
// The pieces every transformer builder uses, emitted as the standard ONNX ops in the shapes that
// PyTorch's exporter produces (MatMul + Add for a Linear, Reshape/Transpose head splits, scaled
// scores + mask, Softmax, head merge), so that the session's fusion passes turn them into
// FusedMatMul, Attention and AddLayerNormalization exactly as they do for an imported model.
#include "core/models/hf_checkpoint.hpp"

#include <infer/graph.hpp>

#include <string>

namespace infer::detail {

// The weights of a stack of post-norm encoder layers (BERT's, DistilBERT's) by their names in
// transformers: layer i's are prefix + i + "." + the module's name.
struct PostNormNames {
    std::string prefix;  // "encoder.layer."
    std::string query, key, value, attention_output, attention_norm, intermediate, output, output_norm;
};

struct PostNormSizes {
    int64_t layers = 0, hidden = 0, heads = 0, intermediate = 0;
    double epsilon = 1e-12;
    std::string activation = "gelu";
};

class TransformerBlocks {
public:
    TransformerBlocks(GraphBuilder& builder, const HfCheckpoint& checkpoint) : b_(builder), checkpoint_(checkpoint) {}

    GraphBuilder& builder() { return b_; }
    Value scalar(float value);
    // The checkpoint's tensor `name` as a constant of the graph.
    Value weight(const std::string& name, const std::vector<int64_t>& expected = {});
    // x · Wᵀ + b for the Linear `name` (name.weight [out, in], name.bias [out]).
    Value linear(Value x, const std::string& name, int64_t in, int64_t out);
    // x · W + b for GPT-2's Conv1D `name` (name.weight [in, out], stored the other way round),
    // or for its columns [part·out, (part+1)·out) when `parts` > 1 (c_attn holds q, k and v).
    Value conv1d(Value x, const std::string& name, int64_t in, int64_t out, int64_t part = 0, int64_t parts = 1);
    // LayerNormalization over the last axis with name.weight and name.bias.
    Value layer_norm(Value x, const std::string& name, int64_t width, double epsilon);
    // transformers' activation by its config name: gelu, gelu_new (tanh approximation), relu.
    Value activation(Value x, const std::string& name);
    // An attention mask [batch, sequence] (1: attend, 0: padding) as the additive bias of the
    // scores, [batch, 1, 1, sequence]: 0 where attending, the lowest f32 where not.
    Value padding_bias(Value attention_mask);
    // The same for a decoder, [batch, 1, sequence, sequence]: a position attends to the earlier
    // and its own positions that are not padding.
    Value causal_padding_bias(Value ids, Value attention_mask);
    // The same for one step of a decoder with a key/value cache of capacity L: `ids` [batch, T]
    // are the step's tokens, written to cache slots write_indices[b] + 0..T-1, and
    // `attention_mask` [batch, L] marks the slots holding real tokens. A token attends to the
    // slots up to its own that the mask marks: [batch, 1, T, L].
    Value cached_causal_bias(Value ids, Value attention_mask, Value write_indices);
    // Multi-head scaled dot-product self-attention of x [batch, sequence, hidden] with the
    // query, key and value Linears named; `bias` (optional) is added to the scores. Returns the
    // merged heads [batch, sequence, hidden], before the output projection.
    Value self_attention(Value x, Value bias, const std::string& query, const std::string& key,
                         const std::string& value, int64_t hidden, int64_t heads);
    // The same from the projections q, k, v [batch, sequence, hidden].
    Value attention(Value q, Value k, Value v, Value bias, int64_t hidden, int64_t heads);
    // `sizes.layers` times x → LayerNorm(x + attention(x)) → LayerNorm(· + FFN(·)), the original
    // transformer's layer; `bias` is added to every layer's attention scores.
    Value post_norm_layers(Value x, Value bias, const PostNormNames& names, const PostNormSizes& sizes);
    // The sequence length of ids [batch, sequence] as a 1-D i64 tensor [1], for slicing tables.
    Value sequence_length(Value ids);

private:
    Value i64_scalar(int64_t value);
    // Range(0, dims[axis] of x) as a 1-D i64 tensor.
    Value positions_along(Value x, int64_t axis);
    Value attend_mask(Value attention_mask);  // [batch, 1, 1, sequence] bool
    Value split_heads(Value x, int64_t heads, int64_t depth, const std::vector<int64_t>& perm);
    GraphBuilder& b_;
    const HfCheckpoint& checkpoint_;
};

}  // namespace infer::detail
