#pragma once
// The data tables behind unicode.hpp, generated into unicode_tables.cpp by
// scripts/models/generate_unicode_tables.py. Sorted by code point for binary search.
#include <cstddef>

namespace infer::text {

// The character classes BERT's text cleaning and splitting care about.
enum class CharClass : unsigned char {
    other,            // letters, digits, symbols: part of a word
    control,          // Cc, Cf, Cs, Co: control, format, surrogate, private use (not unassigned)
    whitespace,       // Zs, Zl, Zp
    punctuation,      // P*
    nonspacing_mark,  // Mn: dropped when accents are stripped
};

namespace tables {

struct CharRange {
    char32_t first;
    char32_t last;
    CharClass char_class;
};

// A character and what it becomes: up to three characters, the unused ones zero.
struct CharMapping {
    char32_t from;
    char32_t to[3];
};

extern const CharRange kCharRanges[];  // only classes other than CharClass::other
extern const size_t kCharRangeCount;
extern const CharMapping kAccentStripped[];  // NFD without Mn, where that differs
extern const size_t kAccentStrippedCount;
extern const CharMapping kLowercase[];  // full lower-case mapping, where that differs
extern const size_t kLowercaseCount;

}  // namespace tables
}  // namespace infer::text
