// GPT2Model and GPT2LMHeadModel from their checkpoints, as transformers' forward() computes the
// whole sequence without a key/value cache: token + position embeddings, pre-norm layers (ln_1,
// causal self-attention, residual; ln_2, MLP, residual), ln_f; the language-model head is the
// token embedding matrix again (tied), giving logits.
//
// c_attn holds q, k and v side by side; each third becomes its own MatMul + Add, the shape the
// attention fusion recognises (and the same arithmetic as one product split afterwards).
#include "core/models/encoder_builders.hpp"
#include "core/models/transformer_blocks.hpp"

#include <infer/error.hpp>

#include <algorithm>

namespace infer::detail {

namespace {

bool is_language_model(const HfCheckpoint& checkpoint) {
    const auto& config = checkpoint.config();
    if (!config.contains("architectures") || !config["architectures"].is_array()) return false;
    const auto& names = config["architectures"];
    return std::any_of(names.begin(), names.end(),
                       [](const nlohmann::json& name) { return name.is_string() && name.get<std::string>() == "GPT2LMHeadModel"; });
}

}  // namespace

EncoderGraph build_gpt2(GraphBuilder& b, HfCheckpoint& checkpoint) {
    checkpoint.use_prefix_of({"", "transformer."}, "wte.weight");
    for (const char* variant : {"scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "add_cross_attention"})
        if (checkpoint.config().value(variant, false))
            throw Unsupported(checkpoint.folder().string() + ": GPT-2 with " + variant + " is not supported");
    const int64_t hidden = checkpoint.config_int("n_embd");
    const int64_t heads = checkpoint.config_int("n_head");
    const int64_t vocabulary = checkpoint.config_int("vocab_size");
    const int64_t inner = checkpoint.config_int("n_inner", 4 * hidden);
    const double epsilon = checkpoint.config_float("layer_norm_epsilon", 1e-5);
    const std::string activation = checkpoint.config_string("activation_function", "gelu_new");
    TransformerBlocks blocks(b, checkpoint);

    EncoderGraph graph;
    const Value ids = b.input("input_ids", DType::i64, {kDynamic, kDynamic});
    graph.attention_mask = b.input("attention_mask", DType::i64, {kDynamic, kDynamic});
    const Value tokens = b.op1("Gather", {blocks.weight("wte.weight", {vocabulary, hidden}), ids});
    const Value position_table = blocks.weight("wpe.weight", {checkpoint.config_int("n_positions"), hidden});
    const Value positions =
        b.op1("Slice", {position_table, b.constant_i64({0}), blocks.sequence_length(ids), b.constant_i64({0})});
    Value x = b.add(tokens, positions);

    const Value bias = blocks.causal_padding_bias(ids, graph.attention_mask);
    const int64_t layers = checkpoint.config_int("n_layer");
    for (int64_t i = 0; i < layers; ++i) {
        const std::string at = "h." + std::to_string(i) + ".";
        const Value normed = blocks.layer_norm(x, at + "ln_1", hidden, epsilon);
        const auto projection = [&](int64_t part) { return blocks.conv1d(normed, at + "attn.c_attn", hidden, hidden, part, 3); };
        const Value attended = blocks.attention(projection(0), projection(1), projection(2), bias, hidden, heads);
        x = b.add(x, blocks.conv1d(attended, at + "attn.c_proj", hidden, hidden));
        const Value expanded =
            blocks.activation(blocks.conv1d(blocks.layer_norm(x, at + "ln_2", hidden, epsilon), at + "mlp.c_fc", hidden, inner),
                              activation);
        x = b.add(x, blocks.conv1d(expanded, at + "mlp.c_proj", inner, hidden));
    }
    graph.last_hidden_state = blocks.layer_norm(x, "ln_f", hidden, epsilon);
    if (is_language_model(checkpoint)) {
        if (!checkpoint.config().value("tie_word_embeddings", true))
            throw Unsupported(checkpoint.folder().string() + ": GPT-2 with an untied language-model head is not supported");
        graph.logits = b.matmul(graph.last_hidden_state,
                                b.constant(checkpoint.linear_weight("wte.weight", hidden, vocabulary), "lm_head.weight"));
    }
    return graph;
}

}  // namespace infer::detail
