#pragma once
// Beam search as Hugging Face generate() does it (transformers 5, early_stopping=False), per
// prompt, on the host: each step keeps the 2·beams best continuations over all beams, continues
// the best `beams` that did not just finish, and keeps the best `beams` finished hypotheses,
// scored by their summed log-probabilities / (generated length)^length_penalty. A prompt stops
// improving when its best running beam can no longer beat its worst finished one; the search
// ends when no prompt can improve or every candidate is finished (the length limit).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace infer::detail {

class BeamSearch {
public:
    BeamSearch(size_t prompts, size_t beams, size_t vocabulary, size_t max_new_tokens, float length_penalty,
               std::vector<int64_t> stop_tokens);

    // One step: log_probs [prompts·beams, vocabulary] (processed log-softmax of the logits) of
    // the running beams, prompt-major. Returns false when the search is over.
    bool step(const float* log_probs);
    // After a step: for each running row, the row of the previous step it continues (the cache
    // rows to move there), and the token it adds.
    const std::vector<size_t>& sources() const { return sources_; }
    const std::vector<int64_t>& next_tokens() const { return next_tokens_; }
    // The best finished hypothesis of each prompt (its new tokens).
    std::vector<std::vector<int64_t>> best() const;

private:
    struct Hypothesis {
        std::vector<int64_t> tokens;
        float score;
        bool finished = false;
    };
    struct Prompt {
        std::vector<Hypothesis> running, done;
        bool can_improve = true;
    };
    bool is_stop(int64_t token) const;

    size_t beams_, vocabulary_, max_new_tokens_, candidates_;
    float length_penalty_;
    std::vector<int64_t> stop_tokens_;
    std::vector<Prompt> prompts_;
    size_t generated_ = 0;
    std::vector<size_t> sources_;
    std::vector<int64_t> next_tokens_;
};

}  // namespace infer::detail
