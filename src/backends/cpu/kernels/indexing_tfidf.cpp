// TfIdfVectorizer over integer tokens: counts, per row, the n-grams of its pool (lengths
// min_gram_length to max_gram_length, tokens up to max_skip_count apart), then weighs them
// (TF: counts, IDF: weight where present, TFIDF: count times weight), as ONNX's reference
// does: unigrams are counted once whatever the skip.
#include "backends/cpu/kernels/indexing_kernels.hpp"

#include <algorithm>
#include <map>

namespace infer::cpu {

namespace {

void tfidf_kernel(KernelContext& ctx) {
    const Attributes& a = ctx.attrs();
    const int64_t min_n = a.get_int("min_gram_length"), max_n = a.get_int("max_gram_length");
    const int64_t max_skip = a.get_int("max_skip_count");
    const std::string mode = a.get_string("mode");
    const std::vector<int64_t> counts = a.get_ints("ngram_counts"), indexes = a.get_ints("ngram_indexes");
    const std::vector<int64_t> pool = a.get_ints("pool_int64s", {});
    const std::vector<float> weights = a.has("weights") ? a.get_floats("weights") : std::vector<float>{};
    if (mode != "TF" && mode != "IDF" && mode != "TFIDF") invalid_argument(ctx, "mode must be TF, IDF or TFIDF");
    // The pool's n-grams of the wanted lengths → output column.
    std::map<std::vector<int64_t>, int64_t> column;
    size_t gram = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
        const auto n = static_cast<int64_t>(i + 1);
        const int64_t begin = counts[i], end = i + 1 < counts.size() ? counts[i + 1] : static_cast<int64_t>(pool.size());
        if (begin < 0 || end > static_cast<int64_t>(pool.size()) || end < begin) invalid_argument(ctx, "ngram_counts do not fit the pool");
        for (int64_t at = begin; at + n <= end; at += n, ++gram) {
            if (gram >= indexes.size()) invalid_argument(ctx, "ngram_indexes has fewer entries than the pool has n-grams");
            if (n >= min_n && n <= max_n) column[std::vector<int64_t>(pool.begin() + at, pool.begin() + at + n)] = indexes[gram];
        }
    }
    const std::vector<int64_t> tokens = read_ints(ctx, 0);
    Tensor& y = ctx.output(0);
    const int64_t width = y.shape()[y.shape().rank() - 1];
    const int64_t rows = y.numel() / std::max<int64_t>(width, 1);
    const int64_t length = rows > 0 ? static_cast<int64_t>(tokens.size()) / rows : 0;
    std::vector<double> frequency(static_cast<size_t>(y.numel()), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
        const int64_t* row = tokens.data() + r * length;
        for (int64_t distance = 1; distance <= max_skip + 1; ++distance)
            for (int64_t start = 0; start < length; ++start)
                for (int64_t n = std::max<int64_t>(min_n, distance > 1 ? 2 : 1); n <= max_n; ++n) {
                    if (start + distance * (n - 1) >= length) break;
                    std::vector<int64_t> key;
                    for (int64_t k = 0; k < n; ++k) key.push_back(row[start + k * distance]);
                    const auto hit = column.find(key);
                    if (hit != column.end()) frequency[static_cast<size_t>(r * width + hit->second)] += 1;
                }
    }
    float* out = y.data<float>();
    for (size_t i = 0; i < frequency.size(); ++i) {
        const double weight = weights.empty() ? 1.0 : weights.at(i % static_cast<size_t>(width));
        const double f = frequency[i];
        out[i] = static_cast<float>(mode == "TF" ? f : mode == "IDF" ? (f > 0 ? weight : 0.0) : f * weight);
    }
}

}  // namespace

void register_indexing_tfidf(KernelRegistry& r) {
    r.add("TfIdfVectorizer", {DType::i32, DType::i64}, tfidf_kernel);
}

}  // namespace infer::cpu
