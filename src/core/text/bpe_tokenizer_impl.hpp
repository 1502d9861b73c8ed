#pragma once
// The state behind BpeTokenizer, shared by its loaders (bpe_tokenizer_json.cpp) and its methods
// (bpe_tokenizer.cpp).
#include "core/text/added_tokens.hpp"
#include "core/text/bpe_model.hpp"
#include "core/text/hf_tokenizer_json.hpp"
#include "core/text/vocabulary.hpp"

#include <infer/generation_tokenizers.hpp>

namespace infer {

namespace text {

// What a loader reads; the vocabulary holds the added tokens and the special roles already.
struct BpeSettings {
    Vocabulary vocabulary{"BpeTokenizer"};
    std::vector<std::pair<std::string, std::string>> merges;
    BpeModel::Options options;
    std::vector<AddedToken> added_tokens;
    SpecialTemplate special_template;
    bool add_prefix_space = false;  // a space put before text not starting with one
    bool use_regex = true;          // GPT-2's regex cuts words; else the whole text is one word
    std::string source;             // the file(s), for error messages
};

}  // namespace text

struct BpeTokenizer::Impl {
    explicit Impl(text::BpeSettings settings);

    // The ids of text without the post-processor's special tokens.
    std::vector<int64_t> piece_ids(std::string_view text) const;

    text::Vocabulary vocabulary;
    text::BpeModel model;
    text::AddedTokenMatcher added;  // without a normalizer, all added tokens match the text as given
    text::SpecialTemplate special_template;
    bool add_prefix_space;
    bool use_regex;
    std::vector<std::string> token_bytes;  // by id: the bytes decode gives for the token
};

}  // namespace infer
