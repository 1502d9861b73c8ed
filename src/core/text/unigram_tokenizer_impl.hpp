#pragma once
// The state behind UnigramTokenizer, shared by its loader (unigram_tokenizer_json.cpp) and its
// methods (unigram_tokenizer.cpp).
#include "core/text/added_tokens.hpp"
#include "core/text/hf_tokenizer_json.hpp"
#include "core/text/precompiled_normalizer.hpp"
#include "core/text/unigram_model.hpp"
#include "core/text/vocabulary.hpp"

#include <infer/generation_tokenizers.hpp>

#include <optional>

namespace infer {

namespace text {

// Hugging Face's Metaspace pre-tokenizer and decoder settings.
struct Metaspace {
    std::string replacement = "\xE2\x96\x81";  // "▁" stands for a space
    bool prepend = true;                      // a replacement put before each word lacking one
    bool split = true;                        // words cut before each replacement
};

struct UnigramSettings {
    Vocabulary vocabulary{"UnigramTokenizer"};
    std::vector<std::pair<std::string, double>> pieces;
    int64_t unk_piece = 0;
    bool fuse_unk = true;
    std::optional<PrecompiledNormalizer> normalizer;
    std::vector<AddedToken> added_tokens;
    bool whitespace_split = false;  // WhitespaceSplit before Metaspace
    Metaspace metaspace;  // the pre-tokenizer's
    Metaspace decoder;    // the decoder's: its prepend drops the first token's replacement
    SpecialTemplate special_template;
    std::string source;
};

}  // namespace text

struct UnigramTokenizer::Impl {
    explicit Impl(text::UnigramSettings settings);

    // The ids of text without the post-processor's special tokens.
    std::vector<int64_t> piece_ids(std::string_view text) const;
    // Pre-tokenizes and encodes normalized text that holds no added token.
    void append_plain(std::string_view normalized, std::vector<int64_t>& ids) const;

    text::Vocabulary vocabulary;
    text::UnigramModel model;
    std::optional<text::PrecompiledNormalizer> normalizer;
    text::AddedTokenMatcher raw_added;         // added tokens matched in the text as given
    text::AddedTokenMatcher normalized_added;  // ... and in the normalized text
    bool whitespace_split;
    text::Metaspace metaspace;
    text::Metaspace decoder;
    text::SpecialTemplate special_template;
};

}  // namespace infer
