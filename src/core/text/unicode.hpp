#pragma once
// Unicode helpers for text models: UTF-8 decoding and encoding, and the character facts that
// HuggingFace's BERT tokenizer uses (its classes, lower-casing, accent stripping), from tables
// generated out of Python's unicodedata.
#include "core/text/unicode_tables.hpp"

#include <string>
#include <string_view>

namespace infer::text {

// Decodes UTF-8; throws InvalidArgument naming the byte offset of a malformed, overlong or
// surrogate sequence.
std::u32string decode_utf8(std::string_view text);
void append_utf8(std::string& out, char32_t code_point);
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

}  // namespace infer::text
