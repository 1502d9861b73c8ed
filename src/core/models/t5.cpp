// T5ForConditionalGeneration from its checkpoint, for generation: an encoder graph run once per
// call, and a decoder step graph with the self-attention key/value cache (see
// decoder_builders.hpp), as transformers' T5 computes them:
//  - pre-norm layers with T5's LayerNorm (x / sqrt(mean(x²) + eps) · weight, no mean, no bias),
//    Linears without biases, a ReLU or gated-GELU feed-forward;
//  - attention scores not scaled by 1/sqrt(d): the query weights are multiplied by sqrt(d) here
//    so that the standard scaled attention (and its fusion) computes the same scores;
//  - a relative position bias: each of the first layer's attention heads has a table over 32
//    buckets of the key's offset from the query (exact up to 8 or 16, then logarithmic up to
//    128), bidirectional in the encoder, only backwards in the decoder, shared by every layer;
//  - the decoder's cross-attention keys and values depend only on the encoder's output, so the
//    encoder graph computes them for every layer, once per call;
//  - a tied head scales the last hidden state by d_model^-0.5 before the shared embedding.
#include "core/models/decoder_builders.hpp"
#include "core/models/transformer_blocks.hpp"

#include <infer/error.hpp>

#include <cmath>
#include <limits>

namespace infer::detail {

namespace {

struct T5Sizes {
    int64_t model, kv, inner, ff, heads, encoder_layers, decoder_layers, vocabulary, buckets, max_distance;
    double epsilon;
    bool gated;
    std::string activation;
    bool tied;
};

T5Sizes read_sizes(const HfCheckpoint& checkpoint) {
    T5Sizes s{};
    s.model = checkpoint.config_int("d_model");
    s.kv = checkpoint.config_int("d_kv");
    s.heads = checkpoint.config_int("num_heads");
    s.inner = s.kv * s.heads;
    s.ff = checkpoint.config_int("d_ff");
    s.encoder_layers = checkpoint.config_int("num_layers");
    s.decoder_layers = checkpoint.config_int("num_decoder_layers", s.encoder_layers);
    s.vocabulary = checkpoint.config_int("vocab_size");
    s.buckets = checkpoint.config_int("relative_attention_num_buckets", 32);
    s.max_distance = checkpoint.config_int("relative_attention_max_distance", 128);
    s.epsilon = checkpoint.config_float("layer_norm_epsilon", 1e-6);
    s.tied = checkpoint.config().value("tie_word_embeddings", true);
    // "relu", "gated-gelu" (T5 v1.1: gelu_new), "gated-silu", ...
    const std::string projection = checkpoint.config_string("feed_forward_proj", "relu");
    s.gated = projection.rfind("gated-", 0) == 0;
    s.activation = s.gated ? projection.substr(6) : projection;
    if (s.activation == "gelu" && s.gated) s.activation = "gelu_new";  // as transformers maps it
    if (s.activation != "relu" && s.activation != "gelu_new" && s.activation != "gelu")
        throw Unsupported(checkpoint.folder().string() + ": T5 feed_forward_proj '" + projection + "' is not supported");
    return s;
}

class T5Builder {
public:
    T5Builder(GraphBuilder& b, HfCheckpoint& checkpoint, const T5Sizes& s) : b_(b), c_(checkpoint), s_(s), blocks_(b, checkpoint) {}

    Value i64_scalar(int64_t v) { return b_.constant(Tensor::from_vector(std::vector<int64_t>{v}, Shape{})); }
    Value f32_scalar(float v) { return blocks_.scalar(v); }

    // T5's LayerNorm: no mean subtracted, no bias.
    Value norm(Value x, const std::string& name) {
        const Value mean_square = b_.op1("ReduceMean", {b_.mul(x, x), b_.constant_i64({-1})}, {{"keepdims", int64_t{1}}});
        const Value rms = b_.op1("Sqrt", {b_.add(mean_square, f32_scalar(static_cast<float>(s_.epsilon)))});
        return b_.mul(b_.div(x, rms), blocks_.weight(name + ".weight", {s_.model}));
    }

    Value linear(Value x, const std::string& name, int64_t in, int64_t out, float scale = 1.0f) {
        Tensor w = c_.linear_weight(name + ".weight", in, out);
        if (scale != 1.0f) {
            Tensor scaled = Tensor::empty(DType::f32, w.shape());
            const float* from = w.data<float>();
            float* to = scaled.data<float>();
            for (int64_t i = 0; i < w.numel(); ++i) to[i] = from[i] * scale;
            w = scaled;
        }
        return b_.matmul(x, b_.constant(w, name + ".weight"));
    }

    // Queries pre-multiplied by sqrt(d_kv) (see the file's comment).
    Value query(Value x, const std::string& attention) {
        return linear(x, attention + ".q", s_.model, s_.inner, static_cast<float>(std::sqrt(static_cast<double>(s_.kv))));
    }

    Value feed_forward(Value x, const std::string& layer) {
        const std::string at = layer + ".DenseReluDense.";
        const Value normed = norm(x, layer + ".layer_norm");
        Value hidden;
        if (s_.gated)
            hidden = b_.mul(blocks_.activation(linear(normed, at + "wi_0", s_.model, s_.ff), s_.activation),
                            linear(normed, at + "wi_1", s_.model, s_.ff));
        else
            hidden = blocks_.activation(linear(normed, at + "wi", s_.model, s_.ff), s_.activation);
        return b_.add(x, linear(hidden, at + "wo", s_.ff, s_.model));
    }

    // The bucket of each relative position (key - query, i64), as transformers' T5Attention.
    Value buckets(Value relative, bool bidirectional) {
        int64_t buckets = s_.buckets;
        Value offset;
        Value distance;
        if (bidirectional) {
            buckets /= 2;
            offset = b_.mul(b_.cast(b_.op1("Greater", {relative, i64_scalar(0)}), DType::i64), i64_scalar(buckets));
            distance = b_.op1("Abs", {relative});
        } else {
            distance = b_.op1("Neg", {b_.op1("Min", {relative, i64_scalar(0)})});
        }
        const int64_t exact = buckets / 2;
        // exact + log(distance / exact) / log(max_distance / exact) · (buckets - exact), truncated;
        // distance is raised to 1 first so that the log is finite where `exact` is chosen anyway.
        const Value ratio = b_.div(b_.cast(b_.op1("Max", {distance, i64_scalar(1)}), DType::f32), f32_scalar(static_cast<float>(exact)));
        const Value scaled = b_.mul(b_.div(b_.op1("Log", {ratio}), f32_scalar(static_cast<float>(
                                                                        std::log(static_cast<double>(s_.max_distance) / static_cast<double>(exact))))),
                                    f32_scalar(static_cast<float>(buckets - exact)));
        const Value large = b_.op1("Min", {b_.add(b_.cast(scaled, DType::i64), i64_scalar(exact)), i64_scalar(buckets - 1)});
        const Value bucket = b_.op1("Where", {b_.op1("Less", {distance, i64_scalar(exact)}), distance, large});
        return offset.present() ? b_.add(bucket, offset) : bucket;
    }

    // The position bias [.., heads, queries, keys] from relative positions [.., queries, keys].
    // `batched`: relative is [batch, q, k] (the decoder's, from its write positions), else [q, k].
    Value position_bias(Value relative, bool bidirectional, bool batched, const std::string& table) {
        const Value values = b_.op1("Gather", {blocks_.weight(table, {s_.buckets, s_.heads}), buckets(relative, bidirectional)});
        // [.., q, k, heads] → [.., heads, q, k]
        return batched ? b_.transpose(values, {0, 3, 1, 2}) : b_.transpose(values, {2, 0, 1});
    }

    Value positions(Value x, int64_t axis) {
        const Value length = b_.op1("Gather", {b_.op1("Shape", {x}), i64_scalar(axis)}, {{"axis", int64_t{0}}});
        return b_.op1("Range", {i64_scalar(0), length, i64_scalar(1)});
    }

    Value unsqueeze(Value x, std::vector<int64_t> axes) { return b_.op1("Unsqueeze", {x, b_.constant_i64(axes)}); }
    Value masked(Value allowed) {
        return b_.op1("Where", {allowed, f32_scalar(0.0f), f32_scalar(std::numeric_limits<float>::lowest())});
    }

private:
    GraphBuilder& b_;
    HfCheckpoint& c_;
    const T5Sizes& s_;

public:
    TransformerBlocks blocks_;
};

std::string graph_name(const std::filesystem::path& folder) {
    return folder.filename().empty() ? folder.parent_path().filename().string() : folder.filename().string();
}

}  // namespace

EncoderDecoderGraphs build_t5_for_generation(const std::filesystem::path& folder, DType cache_type) {
    HfCheckpoint checkpoint(folder);
    if (checkpoint.model_type() != "t5")
        throw Unsupported(folder.string() + ": expected model_type 't5', this is '" + checkpoint.model_type() + "'");
    const T5Sizes s = read_sizes(checkpoint);
    if (!checkpoint.has("lm_head.weight") && !s.tied)
        throw Unsupported(folder.string() + ": a T5 checkpoint without its language-model head (lm_head.weight)");
    EncoderDecoderGraphs graphs;

    {  // The encoder, and every decoder layer's cross-attention keys and values.
        GraphBuilder b(graph_name(folder) + "-encoder");
        T5Builder t5(b, checkpoint, s);
        const Value ids = b.input("input_ids", DType::i64, {kDynamic, kDynamic});
        const Value mask = b.input("attention_mask", DType::i64, {kDynamic, kDynamic});
        Value x = b.op1("Gather", {t5.blocks_.weight("shared.weight", {s.vocabulary, s.model}), ids});
        const Value sequence = t5.positions(ids, 1);
        const Value relative = b.sub(t5.unsqueeze(sequence, {0}), t5.unsqueeze(sequence, {1}));  // [q, k]: key - query
        const Value bias = b.add(t5.position_bias(relative, true, false, "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"),
                                 t5.blocks_.padding_bias(mask));  // [1 or batch, heads, q, k]
        for (int64_t i = 0; i < s.encoder_layers; ++i) {
            const std::string at = "encoder.block." + std::to_string(i) + ".layer.";
            const std::string attention = at + "0.SelfAttention";
            const Value normed = t5.norm(x, at + "0.layer_norm");
            const Value attended =
                t5.blocks_.attention(t5.query(normed, attention), t5.linear(normed, attention + ".k", s.model, s.inner),
                                     t5.linear(normed, attention + ".v", s.model, s.inner), bias, s.inner, s.heads);
            x = b.add(x, t5.linear(attended, attention + ".o", s.inner, s.model));
            x = t5.feed_forward(x, at + "1");
        }
        const Value encoded = t5.norm(x, "encoder.final_layer_norm");
        for (int64_t i = 0; i < s.decoder_layers; ++i) {
            const std::string attention = "decoder.block." + std::to_string(i) + ".layer.1.EncDecAttention";
            b.output("cross_key." + std::to_string(i), t5.linear(encoded, attention + ".k", s.model, s.inner));
            b.output("cross_value." + std::to_string(i), t5.linear(encoded, attention + ".v", s.model, s.inner));
        }
        graphs.encoder = b.build();
    }

    DecoderStepGraph& step = graphs.decoder;
    step.encoder_decoder = true;
    step.layers = s.decoder_layers;
    step.width = s.inner;
    step.vocabulary = s.vocabulary;
    step.max_positions = std::numeric_limits<int32_t>::max();  // relative positions: no table to run out of
    step.cache_type = cache_type;
    {
        GraphBuilder b(graph_name(folder) + "-decoder-step");
        T5Builder t5(b, checkpoint, s);
        const Value ids = b.input("input_ids", DType::i64, {kDynamic, kDynamic});
        const Value filled = b.input("attention_mask", DType::i64, {kDynamic, kDynamic});
        const Value write_indices = b.input("write_indices", DType::i64, {kDynamic});
        const Value encoder_mask = b.input("encoder_attention_mask", DType::i64, {kDynamic, kDynamic});
        Value x = b.op1("Gather", {t5.blocks_.weight("shared.weight", {s.vocabulary, s.model}), ids});

        // Slots of the step's queries [batch, T, 1] and of the cache's keys [1, 1, L].
        const Value queries = t5.unsqueeze(b.add(t5.unsqueeze(write_indices, {1}), t5.positions(ids, 1)), {2});
        const Value keys = t5.unsqueeze(t5.positions(filled, 1), {0, 1});
        const Value visible = b.op1("And", {b.op1("LessOrEqual", {keys, queries}), b.cast(t5.unsqueeze(filled, {1}), DType::boolean)});
        const Value self_bias = b.add(
            t5.position_bias(b.sub(keys, queries), false, true, "decoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"),
            t5.unsqueeze(t5.masked(visible), {1}));  // [batch, heads, T, L]
        const Value cross_bias = t5.blocks_.padding_bias(encoder_mask);

        const auto cached = [&](Value update, const std::string& name) {
            return cached_step_values(b, step, update, name, write_indices, s.inner);
        };
        for (int64_t i = 0; i < s.decoder_layers; ++i) {
            const std::string index = std::to_string(i);
            const std::string at = "decoder.block." + index + ".layer.";
            const std::string self = at + "0.SelfAttention", cross = at + "1.EncDecAttention";
            Value normed = t5.norm(x, at + "0.layer_norm");
            Value attended = t5.blocks_.attention(t5.query(normed, self), cached(t5.linear(normed, self + ".k", s.model, s.inner), "key." + index),
                                                  cached(t5.linear(normed, self + ".v", s.model, s.inner), "value." + index), self_bias,
                                                  s.inner, s.heads);
            x = b.add(x, t5.linear(attended, self + ".o", s.inner, s.model));
            normed = t5.norm(x, at + "1.layer_norm");
            const Value cross_key = b.input("cross_key." + index, DType::f32, {kDynamic, kDynamic, s.inner});
            const Value cross_value = b.input("cross_value." + index, DType::f32, {kDynamic, kDynamic, s.inner});
            attended = t5.blocks_.attention(t5.query(normed, cross), cross_key, cross_value, cross_bias, s.inner, s.heads);
            x = b.add(x, t5.linear(attended, cross + ".o", s.inner, s.model));
            x = t5.feed_forward(x, at + "2");
        }
        const Value last = b.op1("Gather", {x, b.constant(Tensor::from_vector(std::vector<int64_t>{-1}, Shape{}))}, {{"axis", int64_t{1}}});
        Value hidden = t5.norm(last, "decoder.final_layer_norm");
        Value logits;
        if (s.tied) {
            hidden = b.mul(hidden, t5.f32_scalar(static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.model)))));
            logits = b.matmul(hidden, b.constant(checkpoint.linear_weight("shared.weight", s.model, s.vocabulary), "lm_head.weight"));
        } else {
            logits = t5.linear(hidden, "lm_head", s.model, s.vocabulary);
        }
        add_step_outputs(b, logits);
        step.graph = b.build();
    }

    const auto token = [&](const char* key) {
        const auto& config = checkpoint.config();
        return config.contains(key) && config[key].is_number_integer() ? config[key].get<int64_t>() : int64_t{-1};
    };
    step.eos_token = token("eos_token_id");
    step.pad_token = token("pad_token_id");
    step.start_token = token("decoder_start_token_id") >= 0 ? token("decoder_start_token_id") : std::max<int64_t>(step.pad_token, 0);
    return graphs;
}

}  // namespace infer::detail
