#include "core/text/token_batch.hpp"

#include <infer/error.hpp>

#include <algorithm>

namespace infer::text {

Batch encode_padded(const std::vector<std::string>& texts,
                    const std::function<std::vector<int64_t>(std::string_view)>& encode, int64_t pad_id,
                    PaddingSide side, const std::string& owner) {
    if (texts.empty()) throw InvalidArgument(owner + "::encode_batch: no texts to encode");
    std::vector<std::vector<int64_t>> encoded;
    encoded.reserve(texts.size());
    size_t longest = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
        try {
            encoded.push_back(encode(texts[i]));
        } catch (const InvalidArgument& e) {
            throw InvalidArgument(owner + "::encode_batch: text " + std::to_string(i) + ": " + e.what());
        }
        longest = std::max(longest, encoded.back().size());
    }
    std::vector<int64_t> ids(texts.size() * longest, pad_id), mask(texts.size() * longest, 0);
    for (size_t i = 0; i < texts.size(); ++i) {
        const std::vector<int64_t>& row = encoded[i];
        const size_t start = i * longest + (side == PaddingSide::left ? longest - row.size() : 0);
        std::copy(row.begin(), row.end(), ids.begin() + static_cast<std::ptrdiff_t>(start));
        std::fill_n(mask.begin() + static_cast<std::ptrdiff_t>(start), row.size(), 1);
    }
    const Shape shape{static_cast<int64_t>(texts.size()), static_cast<int64_t>(longest)};
    Batch batch;
    batch.set("input_ids", Tensor::from_vector(ids, shape));
    batch.set("attention_mask", Tensor::from_vector(mask, shape));
    return batch;
}

}  // namespace infer::text
