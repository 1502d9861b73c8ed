#pragma once
// Decoders built for generation: one step of the model over the step's tokens with a key/value
// cache the caller owns. The step graph's interface (what Generator binds):
//   inputs   input_ids [batch, T] i64, position_ids [batch, T] i64, attention_mask [batch, L] i64
//            (1 for cache slots that hold real tokens, this step's included), write_indices
//            [batch] i64 (the slot of the step's first token), past_<cache> [batch, L, width]
//            for each name in `caches`, of `cache_type`; logit_bias [vocabulary] f32 (0 where a
//            token may come, -inf where it may not yet);
//   outputs  logits [batch, vocabulary] f32 of each row's last token; next_token [batch] i64,
//            the most likely token after logit_bias (greedy search chooses on the device, and
//            only ids cross to the host); present_<cache>: the past cache with the step's rows
//            written (the same buffer when bound in place).
// Decoder-only models (GPT-2) also take position_ids [batch, T] i64. Encoder-decoder models (T5)
// have no positions (their bias is relative) and take the encoder graph's outputs instead:
// encoder_attention_mask [batch, S] and cross_key.i / cross_value.i [batch, S, width] f32.
#include <infer/dtype.hpp>
#include <infer/graph.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace infer::detail {

struct DecoderStepGraph {
    std::optional<Graph> graph;  // set once built
    std::vector<std::string> caches;  // "key.0", "value.0", ...
    DType cache_type = DType::f32;
    int64_t layers = 0, width = 0, vocabulary = 0, max_positions = 0;
    int64_t eos_token = -1, bos_token = -1, pad_token = -1;  // -1: the configuration has none
    bool encoder_decoder = false;
    int64_t start_token = -1;  // encoder-decoder: the decoder's first input (decoder_start_token_id)
};

// An encoder-decoder model: the encoder graph (inputs input_ids, attention_mask [batch, S];
// outputs cross_key.i / cross_value.i for every decoder layer) and the decoder step.
struct EncoderDecoderGraphs {
    std::optional<Graph> encoder;
    DecoderStepGraph decoder;
};

// decoder_step.cpp: the layer cache `name` [batch, L, width] as a step input, the step's keys or
// values `update` written into it at write_indices (in place when the caller binds the output to
// the input), and what attention reads: the whole cache, in f32.
Value cached_step_values(GraphBuilder& b, DecoderStepGraph& step, Value update, const std::string& name, Value write_indices,
                         int64_t width);
// The step's outputs after the head: logits, and next_token from logits and the logit_bias input.
void add_step_outputs(GraphBuilder& b, Value logits);

// GPT2LMHeadModel from a Hugging Face folder (config.json + safetensors). Throws Unsupported for
// another model type or a checkpoint without the language-model head, ModelError for a bad folder.
DecoderStepGraph build_gpt2_decoder_step(const std::filesystem::path& folder, DType cache_type);
// T5ForConditionalGeneration (t5.cpp): ReLU or gated-GELU feed-forward, tied or separate head.
EncoderDecoderGraphs build_t5_for_generation(const std::filesystem::path& folder, DType cache_type);

}  // namespace infer::detail
