// GPT2Model and GPT2LMHeadModel from their checkpoints, in two forms:
//  - the whole sequence at once, as transformers' forward() computes it without a key/value
//    cache (build_gpt2): token + position embeddings, pre-norm layers (ln_1, causal
//    self-attention, residual; ln_2, MLP, residual), ln_f; the language-model head is the token
//    embedding matrix again (tied), giving logits;
//  - one step of generation with the key/value cache (build_gpt2_decoder_step): the same layers
//    over the step's tokens, each layer's keys and values written into its cache in place
//    (TensorScatter) and attended to there, logits of the last position only.
//
// c_attn holds q, k and v side by side; each third becomes its own MatMul + Add, the shape the
// attention fusion recognises (and the same arithmetic as one product split afterwards).
#include "core/models/decoder_builders.hpp"
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

struct Gpt2Sizes {
    int64_t hidden, heads, vocabulary, inner, layers, positions;
    double epsilon;
    std::string activation;
};

Gpt2Sizes read_sizes(HfCheckpoint& checkpoint) {
    checkpoint.use_prefix_of({"", "transformer."}, "wte.weight");
    for (const char* variant : {"scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn", "add_cross_attention"})
        if (checkpoint.config().value(variant, false))
            throw Unsupported(checkpoint.folder().string() + ": GPT-2 with " + variant + " is not supported");
    const int64_t hidden = checkpoint.config_int("n_embd");
    return {hidden,
            checkpoint.config_int("n_head"),
            checkpoint.config_int("vocab_size"),
            checkpoint.config_int("n_inner", 4 * hidden),
            checkpoint.config_int("n_layer"),
            checkpoint.config_int("n_positions"),
            checkpoint.config_float("layer_norm_epsilon", 1e-5),
            checkpoint.config_string("activation_function", "gelu_new")};
}

// Layer i on x; `attend(q, k, v)` gives the merged heads of the attention over the step's
// projections (the cache, if any, is the caller's business).
template <class Attend>
Value layer(TransformerBlocks& blocks, Value x, int64_t i, const Gpt2Sizes& s, Attend attend) {
    GraphBuilder& b = blocks.builder();
    const std::string at = "h." + std::to_string(i) + ".";
    const Value normed = blocks.layer_norm(x, at + "ln_1", s.hidden, s.epsilon);
    const auto projection = [&](int64_t part) { return blocks.conv1d(normed, at + "attn.c_attn", s.hidden, s.hidden, part, 3); };
    const Value attended = attend(projection(0), projection(1), projection(2));
    x = b.add(x, blocks.conv1d(attended, at + "attn.c_proj", s.hidden, s.hidden));
    const Value expanded = blocks.activation(
        blocks.conv1d(blocks.layer_norm(x, at + "ln_2", s.hidden, s.epsilon), at + "mlp.c_fc", s.hidden, s.inner), s.activation);
    return b.add(x, blocks.conv1d(expanded, at + "mlp.c_proj", s.inner, s.hidden));
}

Value language_model_head(GraphBuilder& b, HfCheckpoint& checkpoint, Value hidden_states, const Gpt2Sizes& s) {
    if (!checkpoint.config().value("tie_word_embeddings", true))
        throw Unsupported(checkpoint.folder().string() + ": GPT-2 with an untied language-model head is not supported");
    return b.matmul(hidden_states, b.constant(checkpoint.linear_weight("wte.weight", s.hidden, s.vocabulary), "lm_head.weight"));
}

}  // namespace

EncoderGraph build_gpt2(GraphBuilder& b, HfCheckpoint& checkpoint) {
    const Gpt2Sizes s = read_sizes(checkpoint);
    TransformerBlocks blocks(b, checkpoint);

    EncoderGraph graph;
    const Value ids = b.input("input_ids", DType::i64, {kDynamic, kDynamic});
    graph.attention_mask = b.input("attention_mask", DType::i64, {kDynamic, kDynamic});
    const Value tokens = b.op1("Gather", {blocks.weight("wte.weight", {s.vocabulary, s.hidden}), ids});
    const Value position_table = blocks.weight("wpe.weight", {s.positions, s.hidden});
    const Value positions =
        b.op1("Slice", {position_table, b.constant_i64({0}), blocks.sequence_length(ids), b.constant_i64({0})});
    Value x = b.add(tokens, positions);

    const Value bias = blocks.causal_padding_bias(ids, graph.attention_mask);
    for (int64_t i = 0; i < s.layers; ++i)
        x = layer(blocks, x, i, s, [&](Value q, Value k, Value v) { return blocks.attention(q, k, v, bias, s.hidden, s.heads); });
    graph.last_hidden_state = blocks.layer_norm(x, "ln_f", s.hidden, s.epsilon);
    if (is_language_model(checkpoint)) graph.logits = language_model_head(b, checkpoint, graph.last_hidden_state, s);
    return graph;
}

DecoderStepGraph build_gpt2_decoder_step(const std::filesystem::path& folder, DType cache_type) {
    HfCheckpoint checkpoint(folder);
    if (checkpoint.model_type() != "gpt2")
        throw Unsupported(folder.string() + ": generation is built for model_type 'gpt2', this is '" + checkpoint.model_type() + "'");
    if (!is_language_model(checkpoint))
        throw Unsupported(folder.string() + ": generation needs a language model (GPT2LMHeadModel), this checkpoint has no head");
    const Gpt2Sizes s = read_sizes(checkpoint);
    GraphBuilder b(folder.filename().empty() ? folder.parent_path().filename().string() : folder.filename().string());
    TransformerBlocks blocks(b, checkpoint);

    const Value ids = b.input("input_ids", DType::i64, {kDynamic, kDynamic});
    const Value position_ids = b.input("position_ids", DType::i64, {kDynamic, kDynamic});
    const Value attention_mask = b.input("attention_mask", DType::i64, {kDynamic, kDynamic});
    const Value write_indices = b.input("write_indices", DType::i64, {kDynamic});
    const Value tokens = b.op1("Gather", {blocks.weight("wte.weight", {s.vocabulary, s.hidden}), ids});
    Value x = b.add(tokens, b.op1("Gather", {blocks.weight("wpe.weight", {s.positions, s.hidden}), position_ids}));

    DecoderStepGraph step;
    step.layers = s.layers;
    step.width = s.hidden;
    step.vocabulary = s.vocabulary;
    step.max_positions = s.positions;
    step.cache_type = cache_type;
    const Value bias = blocks.cached_causal_bias(ids, attention_mask, write_indices);
    // The step's keys or values written into the layer's cache [batch, L, hidden], which the
    // attention then reads whole (the bias hides the empty and padded slots).
    const auto cached = [&](Value update, const std::string& name) {
        return cached_step_values(b, step, update, name, write_indices, s.hidden);
    };
    for (int64_t i = 0; i < s.layers; ++i)
        x = layer(blocks, x, i, s, [&](Value q, Value k, Value v) {
            const std::string index = std::to_string(i);
            return blocks.attention(q, cached(k, "key." + index), cached(v, "value." + index), bias, s.hidden, s.heads);
        });
    // Only the last position's logits are needed to choose the next token.
    const Value last = b.op1("Gather", {x, b.constant(Tensor::from_vector(std::vector<int64_t>{-1}, Shape{}))}, {{"axis", int64_t{1}}});
    add_step_outputs(b, language_model_head(b, checkpoint, blocks.layer_norm(last, "ln_f", s.hidden, s.epsilon), s));

    const auto token = [&](const char* key) { return checkpoint.config().value(key, nlohmann::json()).is_number_integer()
                                                          ? checkpoint.config()[key].get<int64_t>() : int64_t{-1}; };
    step.eos_token = token("eos_token_id");
    step.bos_token = token("bos_token_id");
    step.pad_token = token("pad_token_id");
    step.graph = b.build();
    return step;
}

}  // namespace infer::detail
