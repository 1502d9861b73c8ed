// DistilBertModel from its checkpoint: word + position embeddings (no token types), LayerNorm,
// post-norm layers with their own names (q_lin, sa_layer_norm, ffn.lin1, ...).
#include "core/models/encoder_builders.hpp"
#include "core/models/transformer_blocks.hpp"

namespace infer::detail {

EncoderGraph build_distilbert(GraphBuilder& b, HfCheckpoint& checkpoint) {
    checkpoint.use_prefix_of({"", "distilbert."}, "embeddings.word_embeddings.weight");
    const int64_t hidden = checkpoint.config_int("dim");
    TransformerBlocks blocks(b, checkpoint);

    EncoderGraph graph;
    const Value ids = b.input("input_ids", DType::i64, {kDynamic, kDynamic});
    graph.attention_mask = b.input("attention_mask", DType::i64, {kDynamic, kDynamic});
    const Value words = b.op1(
        "Gather", {blocks.weight("embeddings.word_embeddings.weight", {checkpoint.config_int("vocab_size"), hidden}), ids});
    const Value position_table = blocks.weight("embeddings.position_embeddings.weight",
                                               {checkpoint.config_int("max_position_embeddings"), hidden});
    const Value positions =
        b.op1("Slice", {position_table, b.constant_i64({0}), blocks.sequence_length(ids), b.constant_i64({0})});
    // Every LayerNorm of DistilBERT has eps=1e-12, fixed in its code rather than in config.json.
    constexpr double kEpsilon = 1e-12;
    Value x = blocks.layer_norm(b.add(words, positions), "embeddings.LayerNorm", hidden, kEpsilon);

    const Value bias = blocks.padding_bias(graph.attention_mask);
    const PostNormNames names{"transformer.layer.", "attention.q_lin", "attention.k_lin", "attention.v_lin",
                              "attention.out_lin", "sa_layer_norm", "ffn.lin1", "ffn.lin2", "output_layer_norm"};
    x = blocks.post_norm_layers(x, bias, names,
                                {checkpoint.config_int("n_layers"), hidden, checkpoint.config_int("n_heads"),
                                 checkpoint.config_int("hidden_dim"), kEpsilon,
                                 checkpoint.config_string("activation", "gelu")});
    graph.last_hidden_state = x;
    return graph;
}

}  // namespace infer::detail
