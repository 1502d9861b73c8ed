#!/usr/bin/env python3
"""Writes src/core/text/unicode_tables.cpp: the Unicode facts the BERT tokenizer needs, taken from
Python's unicodedata so that the C++ tokenizer sees characters exactly as HuggingFace's does.

  - character classes as sorted ranges: control (Cc, Cf, Cs, Co), whitespace (Zs, Zl, Zp),
    punctuation (P*), nonspacing mark (Mn); everything else is "other";
  - accent stripping: each character whose canonical decomposition (NFD) minus its nonspacing
    marks differs from itself (Hangul syllables excluded: they decompose arithmetically);
  - lower-casing: each character whose full lower-case mapping differs from itself;
  - for the generation tokenizers, from the `regex` module (a newer Unicode than unicodedata's,
    closer to the Rust crates Hugging Face's tokenizers use): the classes \p{L}, \p{N} and \s
    (White_Space) of GPT-2's pre-tokenizer regex, and the Grapheme_Cluster_Break property with
    Extended_Pictographic, which SentencePiece's precompiled normalizer walks text by.

Run it again (with a Python that has `regex`, such as the one scripts/models/prepare.sh makes:
~/.cache/infer/venv/bin/python scripts/models/generate_unicode_tables.py) after changing it; the output
names the Unicode version it came from.
"""
import pathlib
import unicodedata

import regex

OUTPUT = pathlib.Path(__file__).resolve().parents[2] / "src/core/text/unicode_tables.cpp"
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3

# Must match enum class CharClass in unicode.hpp.
CLASS_NAMES = {"control": "CharClass::control", "whitespace": "CharClass::whitespace",
               "punctuation": "CharClass::punctuation", "mark": "CharClass::nonspacing_mark"}


def char_class(cp):
    category = unicodedata.category(chr(cp))
    # Unassigned code points (Cn) are not: HuggingFace's fast tokenizer keeps them as letters.
    if category in ("Cc", "Cf", "Cs", "Co"):
        return "control"
    if category in ("Zs", "Zl", "Zp"):
        return "whitespace"
    if category.startswith("P"):
        return "punctuation"
    if category == "Mn":
        return "mark"
    return None


def class_ranges():
    ranges = []
    for cp in range(0x110000):
        cls = char_class(cp)
        if cls is None:
            continue
        if ranges and ranges[-1][2] == cls and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp, cls])
    return ranges


# The White_Space property: what \\s matches in the Oniguruma regex of Hugging Face's ByteLevel
# pre-tokenizer (checked against it code point by code point).
WHITE_SPACE = [0x9, 0xA, 0xB, 0xC, 0xD, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
               0x202F, 0x205F, 0x3000]

# Must match enum class RegexClass in unicode_tables.hpp.
LETTER, NUMBER = regex.compile(r"\p{L}"), regex.compile(r"\p{N}")


def regex_class(cp):
    if cp in WHITE_SPACE:
        return "RegexClass::whitespace"
    if 0xD800 <= cp <= 0xDFFF:
        return None
    if LETTER.match(chr(cp)):
        return "RegexClass::letter"
    if NUMBER.match(chr(cp)):
        return "RegexClass::number"
    return None


# Must match enum class GraphemeBreak in unicode_tables.hpp; "Other" is left out of the table.
GRAPHEME_BREAKS = {"CR": "cr", "LF": "lf", "Control": "control", "Extend": "extend", "ZWJ": "zwj",
                   "Regional_Indicator": "regional_indicator", "Prepend": "prepend",
                   "SpacingMark": "spacing_mark", "L": "hangul_l", "V": "hangul_v", "T": "hangul_t",
                   "LV": "hangul_lv", "LVT": "hangul_lvt"}
GRAPHEME_PATTERNS = {name: regex.compile(rf"\p{{Grapheme_Cluster_Break={name}}}") for name in GRAPHEME_BREAKS}
PICTOGRAPHIC = regex.compile(r"\p{Extended_Pictographic}")


def grapheme_break(cp):
    if 0xD800 <= cp <= 0xDFFF:
        return "GraphemeBreak::control"
    for name, pattern in GRAPHEME_PATTERNS.items():
        if pattern.match(chr(cp)):
            return f"GraphemeBreak::{GRAPHEME_BREAKS[name]}"
    return None


def pictographic(cp):
    return "true" if not 0xD800 <= cp <= 0xDFFF and PICTOGRAPHIC.match(chr(cp)) else None


def ranges_of(function):
    ranges = []
    for cp in range(0x110000):
        value = function(cp)
        if value is None:
            continue
        if ranges and ranges[-1][2] == value and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp, value])
    return ranges


def mappings(function):
    table = []
    for cp in range(0x110000):
        if unicodedata.category(chr(cp)) == "Cs":
            continue
        mapped = function(cp)
        if mapped is not None and mapped != chr(cp):
            table.append((cp, mapped))
    return table


def strip_accents(cp):
    if HANGUL_FIRST <= cp <= HANGUL_LAST or unicodedata.category(chr(cp)) == "Mn":
        return None
    decomposed = unicodedata.normalize("NFD", chr(cp))
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn")


def lowercase(cp):
    return chr(cp).lower()


def mapping_rows(table, width):
    rows = []
    for cp, mapped in table:
        assert len(mapped) <= width, (hex(cp), mapped)
        codes = [f"0x{ord(c):X}" for c in mapped] + ["0"] * (width - len(mapped))
        rows.append(f"    {{0x{cp:X}, {{{', '.join(codes)}}}}},")
    return rows


def main():
    ranges = class_ranges()
    stripped = mappings(strip_accents)
    lowered = mappings(lowercase)
    regex_classes = ranges_of(regex_class)
    grapheme_breaks = ranges_of(grapheme_break)
    pictographs = ranges_of(pictographic)
    lines = [
        "// Generated by scripts/models/generate_unicode_tables.py from Python's unicodedata "
        f"(Unicode {unicodedata.unidata_version}).",
        "// Do not edit: change the generator and run it again.",
        '#include "core/text/unicode_tables.hpp"',
        "",
        "namespace infer::text::tables {",
        "",
        f"const CharRange kCharRanges[] = {{",
        *[f"    {{0x{first:X}, 0x{last:X}, {CLASS_NAMES[cls]}}}," for first, last, cls in ranges],
        "};",
        "const size_t kCharRangeCount = sizeof(kCharRanges) / sizeof(kCharRanges[0]);",
        "",
        "const CharMapping kAccentStripped[] = {",
        *mapping_rows(stripped, 3),
        "};",
        "const size_t kAccentStrippedCount = sizeof(kAccentStripped) / sizeof(kAccentStripped[0]);",
        "",
        "const CharMapping kLowercase[] = {",
        *mapping_rows(lowered, 3),
        "};",
        "const size_t kLowercaseCount = sizeof(kLowercase) / sizeof(kLowercase[0]);",
        "",
        f"// \\p{{L}}, \\p{{N}}, \\s, Grapheme_Cluster_Break and Extended_Pictographic from the regex module ({regex.__version__}).",
        "const RegexClassRange kRegexClassRanges[] = {",
        *[f"    {{0x{first:X}, 0x{last:X}, {value}}}," for first, last, value in regex_classes],
        "};",
        "const size_t kRegexClassRangeCount = sizeof(kRegexClassRanges) / sizeof(kRegexClassRanges[0]);",
        "",
        "const GraphemeBreakRange kGraphemeBreakRanges[] = {",
        *[f"    {{0x{first:X}, 0x{last:X}, {value}}}," for first, last, value in grapheme_breaks],
        "};",
        "const size_t kGraphemeBreakRangeCount = sizeof(kGraphemeBreakRanges) / sizeof(kGraphemeBreakRanges[0]);",
        "",
        "const CodePointRange kExtendedPictographic[] = {",
        *[f"    {{0x{first:X}, 0x{last:X}}}," for first, last, _ in pictographs],
        "};",
        "const size_t kExtendedPictographicCount = sizeof(kExtendedPictographic) / sizeof(kExtendedPictographic[0]);",
        "",
        "}  // namespace infer::text::tables",
        "",
    ]
    OUTPUT.write_text("\n".join(lines))
    print(f"{OUTPUT}: {len(ranges)} ranges, {len(stripped)} accent mappings, {len(lowered)} lower-case mappings, "
          f"{len(regex_classes)} regex class ranges, {len(grapheme_breaks)} grapheme break ranges, "
          f"{len(pictographs)} pictographic ranges")



if __name__ == "__main__":
    main()
