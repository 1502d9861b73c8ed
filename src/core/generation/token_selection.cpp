#include "core/generation/token_selection.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>

namespace infer::detail {

void apply_repetition_penalty(float* logits, size_t vocabulary, const std::vector<int64_t>& seen, float penalty) {
    if (penalty == 1.0f) return;
    for (int64_t token : std::set<int64_t>(seen.begin(), seen.end())) {
        if (token < 0 || static_cast<size_t>(token) >= vocabulary) continue;
        float& logit = logits[token];
        logit = logit < 0 ? logit * penalty : logit / penalty;
    }
}

void forbid(float* logits, size_t vocabulary, const std::vector<int64_t>& tokens) {
    for (int64_t token : tokens)
        if (token >= 0 && static_cast<size_t>(token) < vocabulary) logits[token] = -std::numeric_limits<float>::infinity();
}

int64_t most_likely(const float* logits, size_t vocabulary) {
    return std::max_element(logits, logits + vocabulary) - logits;
}

void log_softmax(float* logits, size_t vocabulary) {
    const float largest = *std::max_element(logits, logits + vocabulary);
    double sum = 0;
    for (size_t i = 0; i < vocabulary; ++i) sum += std::exp(static_cast<double>(logits[i]) - largest);
    const double shift = largest + std::log(sum);
    for (size_t i = 0; i < vocabulary; ++i) logits[i] = static_cast<float>(logits[i] - shift);
}

int64_t sample(float* logits, size_t vocabulary, const GenerationOptions& options, std::mt19937_64& random) {
    constexpr float kRemoved = -std::numeric_limits<float>::infinity();
    if (options.temperature != 1.0f)
        for (size_t i = 0; i < vocabulary; ++i) logits[i] /= options.temperature;
    if (options.top_k > 0 && options.top_k < vocabulary) {
        // Ties with the k-th largest logit stay, as in generate()'s top-k.
        std::vector<float> sorted(logits, logits + vocabulary);
        std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(options.top_k - 1), sorted.end(),
                         std::greater<float>());
        const float kth = sorted[options.top_k - 1];
        for (size_t i = 0; i < vocabulary; ++i)
            if (logits[i] < kth) logits[i] = kRemoved;
    }
    std::vector<double> probabilities(vocabulary);
    const float largest = *std::max_element(logits, logits + vocabulary);
    double sum = 0;
    for (size_t i = 0; i < vocabulary; ++i) sum += probabilities[i] = std::exp(static_cast<double>(logits[i]) - largest);
    for (double& p : probabilities) p /= sum;
    if (options.top_p < 1.0f) {
        // The smallest set of most likely tokens whose probabilities reach top_p (at least one).
        std::vector<size_t> order(vocabulary);
        std::iota(order.begin(), order.end(), size_t{0});
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return probabilities[a] > probabilities[b]; });
        double kept = 0;
        size_t count = 0;
        while (count < vocabulary && (count == 0 || kept < options.top_p)) kept += probabilities[order[count++]];
        for (size_t i = count; i < vocabulary; ++i) probabilities[order[i]] = 0;
    }
    std::discrete_distribution<int64_t> draw(probabilities.begin(), probabilities.end());
    return draw(random);
}

}  // namespace infer::detail
