#pragma once
// Unicode helpers for text models: UTF-8 decoding and encoding, and the character facts that
// HuggingFace's tokenizers use (BERT's classes, lower-casing, accent stripping; GPT-2's regex
// classes; grapheme cluster breaks), from tables generated out of Python's unicodedata and regex.
#include "core/text/unicode_tables.hpp"

#include <string>
#include <string_view>

namespace infer::text {

// Decodes UTF-8; throws InvalidArgument naming the byte offset of a malformed, overlong or
// surrogate sequence.
std::u32string decode_utf8(std::string_view text);
void append_utf8(std::string& out, char32_t code_point);
// Bytes made text as Rust's String::from_utf8_lossy does (what HuggingFace's byte-level decoder
// returns): each maximal ill-formed subsequence (Unicode §3.9, "substitution of maximal subparts")
// becomes one U+FFFD.
std::string utf8_lossy(std::string_view bytes);
std::string encode_utf8(std::u32string_view text);

// The class of one character as BERT sees it: tab, newline and carriage return are whitespace
// (not control), and every ASCII non-alphanumeric printable character is punctuation (so `$`,
// `+`, `^` split words like `,` does, though Unicode calls them symbols).
CharClass char_class(char32_t c);

// CJK Unified Ideographs (and their extensions and compatibility forms): each becomes its own
// word. Hiragana, katakana and hangul are not in these blocks.
bool is_cjk_ideograph(char32_t c);

// Appends c's canonical decomposition without its nonspacing marks ("é" → "e", "ǖ" → "u",
// hangul syllables → jamo); a nonspacing mark itself appends nothing.
void append_accent_stripped(char32_t c, std::u32string& out);
// Appends c's full lower-case mapping ("A" → "a", "İ" → "i̇"), c itself when it has none.
void append_lowercase(char32_t c, std::u32string& out);

// \p{L}, \p{N} or \s (White_Space) as the regex of GPT-2's pre-tokenizer matches them.
RegexClass regex_class(char32_t c);
// The Grapheme_Cluster_Break property and Extended_Pictographic, for cutting grapheme clusters.
GraphemeBreak grapheme_break(char32_t c);
bool is_extended_pictographic(char32_t c);

}  // namespace infer::text
