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

// How the regex of GPT-2's pre-tokenizer sees a character: \p{L}, \p{N}, \s or none of them.
enum class RegexClass : unsigned char { other, letter, number, whitespace };

// The Grapheme_Cluster_Break property (UAX #29); `other` is everything the table leaves out.
enum class GraphemeBreak : unsigned char {
    other,
    cr,
    lf,
    control,
    extend,
    zwj,
    regional_indicator,
    prepend,
    spacing_mark,
    hangul_l,
    hangul_v,
    hangul_t,
    hangul_lv,
    hangul_lvt,
};

namespace tables {

struct CharRange {
    char32_t first;
    char32_t last;
    CharClass char_class;
};

struct RegexClassRange {
    char32_t first;
    char32_t last;
    RegexClass regex_class;
};

struct GraphemeBreakRange {
    char32_t first;
    char32_t last;
    GraphemeBreak grapheme_break;
};

struct CodePointRange {
    char32_t first;
    char32_t last;
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
extern const RegexClassRange kRegexClassRanges[];  // only classes other than RegexClass::other
extern const size_t kRegexClassRangeCount;
extern const GraphemeBreakRange kGraphemeBreakRanges[];  // only breaks other than GraphemeBreak::other
extern const size_t kGraphemeBreakRangeCount;
extern const CodePointRange kExtendedPictographic[];
extern const size_t kExtendedPictographicCount;

}  // namespace tables
}  // namespace infer::text
