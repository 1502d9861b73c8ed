#pragma once
// Text generation with a Hugging Face folder: a decoder-only language model (GPT-2) or an
// encoder-decoder one (T5). The prompt is run once (prefill: through the decoder, or through
// the encoder, whose cross-attention keys and values every step then reads), then one token per
// step, each step attending to a key/value
// cache that lives on the session's device in buffers allocated once per call and updated in
// place (no concatenation, no host round trip for the cache). Greedy search chooses the next
// tokens on the device (ArgMax in the step graph), so only their ids come back to the host; a
// repetition penalty, sampling and beam search bring the last position's logits to the host.
//
//   auto generator = infer::Generator::from_folder("gpt2/", {.device = infer::Device::CUDA,
//                                                            .precision = infer::Precision::f16});
//   infer::Generation out = generator.generate({{464, 2068, 7586}}, {.max_new_tokens = 32});
//   // out.tokens[0]: the new tokens; out.stats: prefill time, decode tokens per second
//
// Prompts of different lengths run as one batch (left-padded for GPT-2, each sequence's positions
// counting its own tokens only; right-padded into T5's encoder), as Hugging Face's generate() does. Greedy search and beam search follow
// generate()'s algorithms, so the same model gives the same tokens.
#include <infer/session.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace infer {

struct GenerationOptions {
    size_t max_new_tokens = 32;
    // > 1: beam search (generate()'s: 2·beams candidates per step, finished hypotheses scored
    // by sum of log-probabilities / generated length^length_penalty, early_stopping=False).
    size_t num_beams = 1;
    float length_penalty = 1.0f;
    // Sampling instead of the most likely token: temperature, then top-k, then top-p (nucleus)
    // restrict the distribution, then a token is drawn with a generator seeded by `seed`.
    bool do_sample = false;
    float temperature = 1.0f;
    size_t top_k = 0;     // 0: no limit
    float top_p = 1.0f;   // 1: no limit
    uint64_t seed = 0;
    // > 1 makes tokens already in the sequence (prompt included) less likely (CTRL's penalty:
    // a positive logit divided by it, a negative one multiplied).
    float repetition_penalty = 1.0f;
    // A sequence ends after any of these; empty: the model's end-of-text token, if it has one.
    std::vector<int64_t> stop_tokens;
    // The stop tokens cannot be chosen before this many new tokens (generate()'s min_new_tokens;
    // = max_new_tokens makes every sequence full length, as benchmarks want).
    size_t min_new_tokens = 0;
    // When set, one steady decode step (the second, or the last when there are fewer) runs
    // profiled and its breakdown lands here: what a step's time goes to on its device. That
    // step is timed mark by mark, not replayed from a captured graph, so it is slower than the
    // others; time speed with this unset.
    RunProfile* step_profile = nullptr;
};

struct GenerationStats {
    size_t batch = 0;           // prompts
    size_t prompt_tokens = 0;   // the longest prompt (what prefill ran over)
    size_t steps = 0;           // decode steps after the prefill
    double prefill_ms = 0;      // the prompt pass, including its first token's choice
    double decode_ms = 0;       // every later step
    double choose_ms = 0;       // of prefill_ms + decode_ms, the host's work on the logits: penalties,
                                // choosing tokens, beam bookkeeping (the rest: the step runs)
    // New tokens per second over the decode steps, summed over the batch's sequences.
    double decode_tokens_per_s() const;
};

struct Generation {
    // Per prompt, the new tokens: up to max_new_tokens, ending with a stop token when one came.
    std::vector<std::vector<int64_t>> tokens;
    GenerationStats stats;
};

// Called with (prompt index, token) as each token is chosen (greedy and sampling only: beam
// search knows its tokens at the end).
using TokenCallback = std::function<void(size_t sequence, int64_t token)>;

class Generator {
public:
    // GPT2LMHeadModel or T5ForConditionalGeneration (ReLU or gated-GELU, tied or separate head)
    // from a Hugging Face folder (config.json, model.safetensors). The cache is kept in the
    // session's precision (f32, f16 or bf16); a T5 encoder runs in a session of its own. Throws ModelError for a bad folder,
    // Unsupported for another architecture, DeviceError for an unusable device.
    static Generator from_folder(const std::string& folder, SessionOptions options = {});

    // Continues each prompt (token ids, at least one each). Thread-safe: every call has its own
    // cache. Throws InvalidArgument for empty prompts, ids outside the vocabulary, or a prompt
    // plus max_new_tokens longer than the model's positions; OutOfMemory when the cache does
    // not fit the device.
    Generation generate(const std::vector<std::vector<int64_t>>& prompts, const GenerationOptions& options = {},
                        const TokenCallback& on_token = {}) const;

    int64_t vocabulary_size() const;
    int64_t max_positions() const;                // prompt + new tokens at most (GPT-2's table)
    std::optional<int64_t> end_of_text() const;   // the configuration's eos_token_id
    const Session& session() const;

private:
    struct Impl;
    explicit Generator(std::shared_ptr<const Impl> impl);
    std::shared_ptr<const Impl> impl_;
};

}  // namespace infer
