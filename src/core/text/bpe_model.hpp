#pragma once
// Byte-pair encoding over GPT-2's byte-level alphabet: a word's bytes start as one symbol each,
// and the pair of neighbours with the best-ranked merge is joined until no pair has one. Ties go
// to the leftmost pair, as in Hugging Face's BPE (and GPT-2's original code).
#include "core/text/vocabulary.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace infer::text {

class BpeModel {
public:
    struct Options {
        std::optional<int64_t> unk_id;  // for bytes whose symbol is not in the vocabulary (else dropped)
        bool fuse_unk = false;          // consecutive unknown bytes become one unknown token
        bool ignore_merges = false;     // a word that is a token is that token, merges or not
    };

    // merges: token pairs, best rank first. Throws ModelError naming `source` for a merge whose
    // parts or result are not in the vocabulary.
    BpeModel(const Vocabulary& vocabulary, const std::vector<std::pair<std::string, std::string>>& merges,
             Options options, const std::string& source);

    // Appends the ids of one pre-tokenized word, given as its UTF-8 bytes.
    void append_word(std::string_view bytes, const Vocabulary& vocabulary, std::vector<int64_t>& out) const;

private:
    struct Merge {
        uint32_t rank;
        int64_t merged_id;
    };
    static uint64_t pair_key(int64_t left, int64_t right) {
        return (static_cast<uint64_t>(left) << 32) | static_cast<uint64_t>(right);
    }
    const Merge* find_merge(int64_t left, int64_t right) const;

    std::array<std::optional<int64_t>, 256> byte_ids_;  // the token of each byte's symbol
    std::unordered_map<uint64_t, Merge> merges_;
    Options options_;
};

}  // namespace infer::text
