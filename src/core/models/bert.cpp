// BertModel (BERT, MiniLM and other sentence-transformers encoders) and RobertaModel from their
// checkpoints, as transformers' forward() computes them: word + token type + position
// embeddings, LayerNorm, post-norm layers; the pooler is left out (last_hidden_state is the
// output, as in the ONNX export).
#include "core/models/encoder_builders.hpp"
#include "core/models/transformer_blocks.hpp"

#include <infer/error.hpp>

namespace infer::detail {

namespace {

// RoBERTa numbers the real tokens from padding_idx + 1 and gives padding the position
// padding_idx: cumsum(ids != pad) * (ids != pad) + pad, as create_position_ids_from_input_ids.
Value roberta_positions(GraphBuilder& b, Value ids, int64_t padding_idx) {
    const Value pad = b.constant(Tensor::from_vector(std::vector<int64_t>{padding_idx}, Shape{}));
    const Value real = b.cast(b.op1("Not", {b.op1("Equal", {ids, pad})}), DType::i64);
    const Value counted = b.op1("CumSum", {real, b.constant(Tensor::from_vector(std::vector<int64_t>{1}, Shape{}))});
    return b.add(b.mul(counted, real), pad);
}

}  // namespace

EncoderGraph build_bert(GraphBuilder& b, HfCheckpoint& checkpoint) {
    const std::string type = checkpoint.model_type();
    const bool roberta = type == "roberta" || type == "xlm-roberta";
    checkpoint.use_prefix_of({"", "bert.", "roberta.", "model."}, "embeddings.word_embeddings.weight");
    if (const auto kind = checkpoint.config_string("position_embedding_type", "absolute"); kind != "absolute")
        throw Unsupported(checkpoint.folder().string() + ": position_embedding_type '" + kind + "' is not supported");
    const int64_t hidden = checkpoint.config_int("hidden_size");
    const int64_t vocabulary = checkpoint.config_int("vocab_size");
    const int64_t positions = checkpoint.config_int("max_position_embeddings");
    const int64_t token_types = checkpoint.config_int("type_vocab_size", 2);
    const double epsilon = checkpoint.config_float("layer_norm_eps", 1e-12);
    TransformerBlocks blocks(b, checkpoint);

    EncoderGraph graph;
    const Value ids = b.input("input_ids", DType::i64, {kDynamic, kDynamic});
    graph.attention_mask = b.input("attention_mask", DType::i64, {kDynamic, kDynamic});
    Value embedded = b.op1("Gather", {blocks.weight("embeddings.word_embeddings.weight", {vocabulary, hidden}), ids});
    if (token_types > 0) {
        const Value types = b.input("token_type_ids", DType::i64, {kDynamic, kDynamic});
        const Value table = blocks.weight("embeddings.token_type_embeddings.weight", {token_types, hidden});
        embedded = b.add(embedded, b.op1("Gather", {table, types}));
    }
    const Value position_table = blocks.weight("embeddings.position_embeddings.weight", {positions, hidden});
    if (roberta) {
        const int64_t padding_idx = checkpoint.config_int("pad_token_id", 1);
        embedded = b.add(embedded, b.op1("Gather", {position_table, roberta_positions(b, ids, padding_idx)}));
    } else {
        // Positions 0 .. sequence-1: the table's first rows, broadcast over the batch.
        const Value first_rows = b.op1("Slice", {position_table, b.constant_i64({0}), blocks.sequence_length(ids),
                                                 b.constant_i64({0})});
        embedded = b.add(embedded, first_rows);
    }
    Value x = blocks.layer_norm(embedded, "embeddings.LayerNorm", hidden, epsilon);

    const Value bias = blocks.padding_bias(graph.attention_mask);
    const PostNormNames names{"encoder.layer.", "attention.self.query", "attention.self.key", "attention.self.value",
                              "attention.output.dense", "attention.output.LayerNorm", "intermediate.dense",
                              "output.dense", "output.LayerNorm"};
    x = blocks.post_norm_layers(x, bias, names,
                                {checkpoint.config_int("num_hidden_layers"), hidden,
                                 checkpoint.config_int("num_attention_heads"), checkpoint.config_int("intermediate_size"),
                                 epsilon, checkpoint.config_string("hidden_act", "gelu")});
    graph.last_hidden_state = x;
    return graph;
}

}  // namespace infer::detail
