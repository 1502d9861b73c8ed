#pragma once
// Choosing the next token from a row of logits on the host, with Hugging Face generate()'s
// processors and in its order: repetition penalty, then (sampling) temperature, top-k, top-p.
#include <infer/generate.hpp>

#include <cstdint>
#include <random>
#include <vector>

namespace infer::detail {

// CTRL's penalty on every token of `seen` (repeats count once): logit / penalty when positive,
// logit · penalty when not.
void apply_repetition_penalty(float* logits, size_t vocabulary, const std::vector<int64_t>& seen, float penalty);
// Makes the stop tokens impossible (-infinity): before min_new_tokens.
void forbid(float* logits, size_t vocabulary, const std::vector<int64_t>& tokens);
// The index of the largest logit, the first of equal ones (as torch.argmax).
int64_t most_likely(const float* logits, size_t vocabulary);
// logits → log-probabilities, in place, computed in double like a careful log_softmax.
void log_softmax(float* logits, size_t vocabulary);
// Temperature, top-k and top-p applied to `logits` (changed in place), then a draw from the
// resulting distribution.
int64_t sample(float* logits, size_t vocabulary, const GenerationOptions& options, std::mt19937_64& random);

}  // namespace infer::detail
