#pragma once
// Encoded texts padded into the Batch a model takes: "input_ids" and "attention_mask".
#include <infer/batch.hpp>
#include <infer/generation_tokenizers.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace infer::text {

// Encodes every text and pads to the longest with pad_id on `side`: i64 [texts.size(), longest]
// tensors on the CPU, the mask 0 over padding. Throws InvalidArgument for an empty list, and
// for a text encode rejects, naming its index; `owner` starts the messages.
Batch encode_padded(const std::vector<std::string>& texts,
                    const std::function<std::vector<int64_t>(std::string_view)>& encode, int64_t pad_id,
                    PaddingSide side, const std::string& owner);

}  // namespace infer::text
