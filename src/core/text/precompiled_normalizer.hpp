#pragma once
// SentencePiece's normalization rules (nmt_nfkc and the like) as a "precompiled charsmap": a
// darts-clone double-array trie from UTF-8 strings to offsets in a blob of NUL-terminated
// replacements. Applied the way Hugging Face's Precompiled normalizer applies it, which differs
// from SentencePiece's own longest match: text is walked by grapheme clusters; a cluster shorter
// than 6 bytes is replaced whole by what its *shortest* matching prefix maps to (so "Ａ" with a
// combining accent becomes "A", the accent gone), else each character is looked up alone.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace infer::text {

class PrecompiledNormalizer {
public:
    // charsmap: a little-endian u32 with the trie's size in bytes, the trie, the replacements.
    // Throws ModelError naming `source` when it is malformed.
    PrecompiledNormalizer(std::string_view charsmap, const std::string& source);

    // Normalizes valid UTF-8 text.
    std::string normalize(std::string_view text) const;

private:
    // What the shortest key that prefixes chunk maps to, if any.
    std::optional<std::string_view> replacement(std::string_view chunk) const;

    std::vector<uint32_t> units_;  // the double array
    std::string replacements_;
};

}  // namespace infer::text
