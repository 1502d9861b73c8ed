#include "core/generation/beam_search.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace infer::detail {

namespace {
constexpr float kExcluded = -1.0e9f;  // generate()'s "never pick this" score, added in f32 as it does

// Indices of the k largest of `scores`, largest first (earlier index first among equal ones).
std::vector<size_t> top(const std::vector<float>& scores, size_t k) {
    std::vector<size_t> order(scores.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                      [&](size_t a, size_t b) { return scores[a] > scores[b] || (scores[a] == scores[b] && a < b); });
    order.resize(k);
    return order;
}
}  // namespace

BeamSearch::BeamSearch(size_t prompts, size_t beams, size_t vocabulary, size_t max_new_tokens, float length_penalty,
                       std::vector<int64_t> stop_tokens)
    : beams_(beams), vocabulary_(vocabulary), max_new_tokens_(max_new_tokens),
      candidates_(std::max<size_t>(2, 1 + stop_tokens.size()) * beams), length_penalty_(length_penalty),
      stop_tokens_(std::move(stop_tokens)), prompts_(prompts) {
    for (Prompt& p : prompts_) {
        // Only the first beam starts live: the others would repeat its continuations.
        p.running.assign(beams, Hypothesis{{}, kExcluded});
        p.running[0].score = 0;
        p.done.assign(beams, Hypothesis{{}, kExcluded});
    }
}

bool BeamSearch::is_stop(int64_t token) const {
    return std::find(stop_tokens_.begin(), stop_tokens_.end(), token) != stop_tokens_.end();
}

bool BeamSearch::step(const float* log_probs) {
    ++generated_;
    const bool at_limit = generated_ >= max_new_tokens_;
    sources_.assign(prompts_.size() * beams_, 0);
    next_tokens_.assign(prompts_.size() * beams_, 0);
    bool every_candidate_stops = true, any_can_improve = false;
    for (size_t p = 0; p < prompts_.size(); ++p) {
        Prompt& prompt = prompts_[p];
        std::vector<float> accumulated(beams_ * vocabulary_);
        for (size_t b = 0; b < beams_; ++b)
            for (size_t v = 0; v < vocabulary_; ++v)
                accumulated[b * vocabulary_ + v] = log_probs[(p * beams_ + b) * vocabulary_ + v] + prompt.running[b].score;
        const std::vector<size_t> picked = top(accumulated, candidates_);

        std::vector<Hypothesis> candidates;
        std::vector<size_t> from;
        std::vector<bool> stops;
        for (size_t index : picked) {
            const size_t beam = index / vocabulary_;
            const auto token = static_cast<int64_t>(index % vocabulary_);
            Hypothesis h{prompt.running[beam].tokens, accumulated[index]};
            h.tokens.push_back(token);
            candidates.push_back(std::move(h));
            from.push_back(beam);
            stops.push_back(at_limit || is_stop(token));
            every_candidate_stops = every_candidate_stops && stops.back();
        }

        // The best candidates that go on.
        std::vector<float> going_on(candidates.size());
        for (size_t c = 0; c < candidates.size(); ++c) going_on[c] = candidates[c].score + (stops[c] ? kExcluded : 0.0f);
        std::vector<Hypothesis> running;
        for (size_t r = 0; size_t c : top(going_on, beams_)) {
            running.push_back({candidates[c].tokens, going_on[c]});
            sources_[p * beams_ + r] = p * beams_ + from[c];
            next_tokens_[p * beams_ + r] = candidates[c].tokens.back();
            ++r;
        }

        // Candidates among the first `beams` that stopped join the finished ones, if better.
        std::vector<Hypothesis> merged = prompt.done;
        const auto penalty = static_cast<float>(std::pow(static_cast<double>(generated_), length_penalty_));
        for (size_t c = 0; c < candidates.size(); ++c) {
            const bool finished_now = stops[c] && c < beams_;
            float score = candidates[c].score / penalty;
            if (!prompt.can_improve) score += kExcluded;
            if (!finished_now) score += kExcluded;
            merged.push_back({candidates[c].tokens, score, finished_now});
        }
        std::vector<float> merged_scores;
        for (const Hypothesis& h : merged) merged_scores.push_back(h.score);
        std::vector<Hypothesis> done;
        for (size_t i : top(merged_scores, beams_)) done.push_back(merged[i]);
        prompt.done = std::move(done);
        prompt.running = std::move(running);

        // Could a running beam still beat the worst finished hypothesis?
        const float best_possible = prompt.running[0].score / penalty;
        float worst_finished = prompt.done[0].score;
        for (const Hypothesis& h : prompt.done) worst_finished = std::min(worst_finished, h.score);
        bool beaten_everywhere = true;
        for (const Hypothesis& h : prompt.done) beaten_everywhere = beaten_everywhere && !(best_possible > (h.finished ? worst_finished : kExcluded));
        prompt.can_improve = prompt.can_improve && !beaten_everywhere;
        any_can_improve = any_can_improve || prompt.can_improve;
    }
    return any_can_improve && !every_candidate_stops;
}

std::vector<std::vector<int64_t>> BeamSearch::best() const {
    std::vector<std::vector<int64_t>> result;
    for (const Prompt& p : prompts_) result.push_back(p.done[0].tokens);
    return result;
}

}  // namespace infer::detail
