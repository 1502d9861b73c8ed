#pragma once
// The words GPT-2's pre-tokenizer cuts text into, by its regex
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (Hugging Face's ByteLevel pre-tokenizer): contractions, runs of letters, of digits, of other
// characters, each with at most one space in front, and whitespace runs, the last whitespace
// before a word left to that word.
#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace infer::text {

// [begin, end) character ranges that cover text, in order.
std::vector<std::pair<size_t, size_t>> split_gpt2_words(std::u32string_view text);

}  // namespace infer::text
