// TransformerBlocks: the standard-op forms PyTorch's exporter writes for transformers' layers.
#include "core/models/transformer_blocks.hpp"

#include <infer/error.hpp>

#include <cmath>
#include <limits>

namespace infer::detail {

Value TransformerBlocks::scalar(float value) { return b_.constant(Tensor::from_vector(std::vector<float>{value}, Shape{})); }

Value TransformerBlocks::weight(const std::string& name, const std::vector<int64_t>& expected) {
    return b_.constant(checkpoint_.weight(name, expected), name);
}

Value TransformerBlocks::linear(Value x, const std::string& name, int64_t in, int64_t out) {
    const Value w = b_.constant(checkpoint_.linear_weight(name + ".weight", in, out), name + ".weight");
    const Value product = b_.matmul(x, w);
    if (!checkpoint_.has(name + ".bias")) return product;
    return b_.add(product, weight(name + ".bias", {out}));
}

Value TransformerBlocks::conv1d(Value x, const std::string& name, int64_t in, int64_t out, int64_t part,
                                int64_t parts) {
    Tensor w = checkpoint_.weight(name + ".weight", {in, out * parts});
    Tensor bias = checkpoint_.weight(name + ".bias", {out * parts});
    if (parts > 1) {
        w = w.slice(1, part * out, (part + 1) * out);
        bias = bias.slice(0, part * out, (part + 1) * out);
    }
    const std::string suffix = parts > 1 ? "." + std::to_string(part) : "";
    return b_.add(b_.matmul(x, b_.constant(w, name + ".weight" + suffix)), b_.constant(bias, name + ".bias" + suffix));
}

Value TransformerBlocks::layer_norm(Value x, const std::string& name, int64_t width, double epsilon) {
    return b_.layer_norm(x, weight(name + ".weight", {width}), weight(name + ".bias", {width}), -1,
                         static_cast<float>(epsilon));
}

Value TransformerBlocks::activation(Value x, const std::string& name) {
    if (name == "gelu") return b_.gelu(x);
    if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast")
        return b_.op1("Gelu", {x}, {{"approximate", std::string("tanh")}});
    if (name == "relu") return b_.relu(x);
    throw Unsupported(checkpoint_.folder().string() + ": activation '" + name + "' is not supported");
}

Value TransformerBlocks::attend_mask(Value attention_mask) {
    return b_.cast(b_.op1("Unsqueeze", {attention_mask, b_.constant_i64({1, 2})}), DType::boolean);
}

Value TransformerBlocks::padding_bias(Value attention_mask) {
    return b_.op1("Where", {attend_mask(attention_mask), scalar(0.0f), scalar(std::numeric_limits<float>::lowest())});
}

Value TransformerBlocks::i64_scalar(int64_t value) {
    return b_.constant(Tensor::from_vector(std::vector<int64_t>{value}, Shape{}));
}

Value TransformerBlocks::positions_along(Value x, int64_t axis) {
    const Value length = b_.op1("Gather", {b_.op1("Shape", {x}), i64_scalar(axis)}, {{"axis", int64_t{0}}});
    return b_.op1("Range", {i64_scalar(0), length, i64_scalar(1)});
}

Value TransformerBlocks::cached_causal_bias(Value ids, Value attention_mask, Value write_indices) {
    // Slot of each query: write_indices[b] + t, [batch, T, 1]; slots of the keys: [1, 1, L].
    const Value queries = b_.op1("Unsqueeze", {b_.add(b_.op1("Unsqueeze", {write_indices, b_.constant_i64({1})}),
                                                      positions_along(ids, 1)),
                                               b_.constant_i64({2})});
    const Value keys = b_.op1("Unsqueeze", {positions_along(attention_mask, 1), b_.constant_i64({0, 1})});
    const Value filled = b_.cast(b_.op1("Unsqueeze", {attention_mask, b_.constant_i64({1})}), DType::boolean);
    const Value allowed = b_.op1("And", {b_.op1("LessOrEqual", {keys, queries}), filled});
    const Value bias = b_.op1("Where", {allowed, scalar(0.0f), scalar(std::numeric_limits<float>::lowest())});
    return b_.op1("Unsqueeze", {bias, b_.constant_i64({1})});
}

Value TransformerBlocks::causal_padding_bias(Value ids, Value attention_mask) {
    const Value positions = positions_along(ids, 1);
    const Value queries = b_.op1("Unsqueeze", {positions, b_.constant_i64({1})});  // [sequence, 1]
    const Value keys = b_.op1("Unsqueeze", {positions, b_.constant_i64({0})});     // [1, sequence]
    const Value allowed = b_.op1("And", {b_.op1("LessOrEqual", {keys, queries}), attend_mask(attention_mask)});
    return b_.op1("Where", {allowed, scalar(0.0f), scalar(std::numeric_limits<float>::lowest())});
}

Value TransformerBlocks::split_heads(Value x, int64_t heads, int64_t depth, const std::vector<int64_t>& perm) {
    // 0 keeps the batch and sequence dimensions as they come (ONNX Reshape without allowzero).
    return b_.transpose(b_.reshape(x, {0, 0, heads, depth}), perm);
}

Value TransformerBlocks::self_attention(Value x, Value bias, const std::string& query, const std::string& key,
                                        const std::string& value, int64_t hidden, int64_t heads) {
    return attention(linear(x, query, hidden, hidden), linear(x, key, hidden, hidden), linear(x, value, hidden, hidden),
                     bias, hidden, heads);
}

Value TransformerBlocks::attention(Value query, Value key, Value value, Value bias, int64_t hidden, int64_t heads) {
    if (heads <= 0 || hidden % heads != 0)
        throw ModelError(checkpoint_.folder().string() + ": a width of " + std::to_string(hidden) +
                         " does not split into " + std::to_string(heads) + " attention heads");
    const int64_t depth = hidden / heads;
    const Value q = split_heads(query, heads, depth, {0, 2, 1, 3});
    const Value k = split_heads(key, heads, depth, {0, 2, 3, 1});
    const Value v = split_heads(value, heads, depth, {0, 2, 1, 3});
    Value scores = b_.mul(b_.matmul(q, k), scalar(static_cast<float>(1.0 / std::sqrt(static_cast<double>(depth)))));
    if (bias.present()) scores = b_.add(scores, bias);
    const Value context = b_.matmul(b_.softmax(scores, -1), v);
    return b_.reshape(b_.transpose(context, {0, 2, 1, 3}), {0, 0, hidden});
}

Value TransformerBlocks::post_norm_layers(Value x, Value bias, const PostNormNames& names, const PostNormSizes& sizes) {
    const int64_t hidden = sizes.hidden, intermediate = sizes.intermediate;
    for (int64_t i = 0; i < sizes.layers; ++i) {
        const std::string at = names.prefix + std::to_string(i) + ".";
        const Value attended = self_attention(x, bias, at + names.query, at + names.key, at + names.value, hidden, sizes.heads);
        const Value projected = linear(attended, at + names.attention_output, hidden, hidden);
        const Value normed = layer_norm(b_.add(projected, x), at + names.attention_norm, hidden, sizes.epsilon);
        const Value expanded = activation(linear(normed, at + names.intermediate, hidden, intermediate), sizes.activation);
        const Value contracted = linear(expanded, at + names.output, intermediate, hidden);
        x = layer_norm(b_.add(contracted, normed), at + names.output_norm, hidden, sizes.epsilon);
    }
    return x;
}

Value TransformerBlocks::sequence_length(Value ids) {
    return b_.op1("Gather", {b_.op1("Shape", {ids}), b_.constant_i64({1})}, {{"axis", int64_t{0}}});
}

}  // namespace infer::detail
