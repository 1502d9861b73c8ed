#include "core/text/unicode.hpp"

#include <infer/error.hpp>

#include <algorithm>

namespace infer::text {

namespace {

[[noreturn]] void malformed(size_t offset, const char* why) {
    throw InvalidArgument("text is not valid UTF-8: " + std::string(why) + " at byte " +
                          std::to_string(offset));
}

// The mapping for c in a table sorted by code point, or nullptr.
const tables::CharMapping* find_mapping(const tables::CharMapping* table, size_t count, char32_t c) {
    const tables::CharMapping* end = table + count;
    const tables::CharMapping* found = std::lower_bound(
        table, end, c, [](const tables::CharMapping& entry, char32_t value) { return entry.from < value; });
    return found != end && found->from == c ? found : nullptr;
}

// The entry of a range table (sorted, disjoint ranges) holding c, or nullptr.
template <typename Range>
const Range* find_range(const Range* table, size_t count, char32_t c) {
    const Range* end = table + count;
    const Range* found =
        std::lower_bound(table, end, c, [](const Range& range, char32_t value) { return range.last < value; });
    return found != end && found->first <= c ? found : nullptr;
}

void append_mapped(const tables::CharMapping& mapping, std::u32string& out) {
    for (char32_t to : mapping.to)
        if (to != 0) out.push_back(to);
}

}  // namespace

std::u32string decode_utf8(std::string_view text) {
    std::u32string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
        const auto lead = static_cast<unsigned char>(text[i]);
        if (lead < 0x80) {
            out.push_back(lead);
            ++i;
            continue;
        }
        size_t length;
        char32_t code_point;
        if ((lead & 0xE0) == 0xC0) {
            length = 2;
            code_point = lead & 0x1F;
        } else if ((lead & 0xF0) == 0xE0) {
            length = 3;
            code_point = lead & 0x0F;
        } else if ((lead & 0xF8) == 0xF0) {
            length = 4;
            code_point = lead & 0x07;
        } else {
            malformed(i, "invalid lead byte");
        }
        if (i + length > text.size()) malformed(i, "truncated sequence");
        for (size_t k = 1; k < length; ++k) {
            const auto next = static_cast<unsigned char>(text[i + k]);
            if ((next & 0xC0) != 0x80) malformed(i, "missing continuation byte");
            code_point = (code_point << 6) | (next & 0x3F);
        }
        static constexpr char32_t kSmallest[] = {0, 0, 0x80, 0x800, 0x10000};
        if (code_point < kSmallest[length]) malformed(i, "overlong encoding");
        if (code_point > 0x10FFFF) malformed(i, "code point beyond U+10FFFF");
        if (code_point >= 0xD800 && code_point <= 0xDFFF) malformed(i, "encoded surrogate");
        out.push_back(code_point);
        i += length;
    }
    return out;
}

void append_utf8(std::string& out, char32_t c) {
    if (c < 0x80) {
        out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (c >> 12)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (c >> 18)));
        out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
}

std::string utf8_lossy(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    size_t i = 0;
    while (i < bytes.size()) {
        const auto lead = static_cast<unsigned char>(bytes[i]);
        if (lead < 0x80) {
            out.push_back(static_cast<char>(lead));
            ++i;
            continue;
        }
        // The sequence length a lead byte announces, and the range its second byte must be in
        // (narrower after E0, ED, F0, F4: that excludes overlong forms, surrogates, > U+10FFFF).
        size_t length = 0;
        unsigned char second_low = 0x80, second_high = 0xBF;
        if (lead >= 0xC2 && lead <= 0xDF) {
            length = 2;
        } else if (lead >= 0xE0 && lead <= 0xEF) {
            length = 3;
            if (lead == 0xE0) second_low = 0xA0;
            if (lead == 0xED) second_high = 0x9F;
        } else if (lead >= 0xF0 && lead <= 0xF4) {
            length = 4;
            if (lead == 0xF0) second_low = 0x90;
            if (lead == 0xF4) second_high = 0x8F;
        }
        size_t valid = 1;  // bytes of the sequence that are well-formed so far
        while (length > 0 && valid < length && i + valid < bytes.size()) {
            const auto next = static_cast<unsigned char>(bytes[i + valid]);
            const bool in_range = valid == 1 ? next >= second_low && next <= second_high : (next & 0xC0) == 0x80;
            if (!in_range) break;
            ++valid;
        }
        if (length > 0 && valid == length) {
            out.append(bytes.substr(i, length));
        } else {
            out.append("\xEF\xBF\xBD");  // U+FFFD for the whole maximal subpart
        }
        i += valid;
    }
    return out;
}

std::string encode_utf8(std::u32string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char32_t c : text) append_utf8(out, c);
    return out;
}

CharClass char_class(char32_t c) {
    if (c == U'\t' || c == U'\n' || c == U'\r') return CharClass::whitespace;
    if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
        return CharClass::punctuation;
    const tables::CharRange* end = tables::kCharRanges + tables::kCharRangeCount;
    const tables::CharRange* range = std::lower_bound(
        tables::kCharRanges, end, c, [](const tables::CharRange& r, char32_t value) { return r.last < value; });
    return range != end && range->first <= c ? range->char_class : CharClass::other;
}

bool is_cjk_ideograph(char32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

void append_accent_stripped(char32_t c, std::u32string& out) {
    // Hangul syllables decompose by arithmetic (Unicode §3.12) into jamo, none of them marks.
    constexpr char32_t kSyllableBase = 0xAC00, kLeadBase = 0x1100, kVowelBase = 0x1161,
                       kTrailBase = 0x11A7;
    constexpr char32_t kVowelCount = 21, kTrailCount = 28, kSyllableCount = 11172;
    if (c >= kSyllableBase && c < kSyllableBase + kSyllableCount) {
        const char32_t index = c - kSyllableBase;
        out.push_back(kLeadBase + index / (kVowelCount * kTrailCount));
        out.push_back(kVowelBase + (index % (kVowelCount * kTrailCount)) / kTrailCount);
        if (index % kTrailCount != 0) out.push_back(kTrailBase + index % kTrailCount);
        return;
    }
    if (c < 0xC0) {  // nothing below U+00C0 decomposes
        out.push_back(c);
        return;
    }
    if (char_class(c) == CharClass::nonspacing_mark) return;
    if (const auto* mapping = find_mapping(tables::kAccentStripped, tables::kAccentStrippedCount, c))
        append_mapped(*mapping, out);
    else
        out.push_back(c);
}

void append_lowercase(char32_t c, std::u32string& out) {
    if (c < 0x80) {
        out.push_back(c >= U'A' && c <= U'Z' ? c + 32 : c);
        return;
    }
    if (const auto* mapping = find_mapping(tables::kLowercase, tables::kLowercaseCount, c))
        append_mapped(*mapping, out);
    else
        out.push_back(c);
}

RegexClass regex_class(char32_t c) {
    if (c < 0x80) {
        if ((c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z')) return RegexClass::letter;
        if (c >= U'0' && c <= U'9') return RegexClass::number;
        if (c == U' ' || (c >= U'\t' && c <= U'\r')) return RegexClass::whitespace;
        return RegexClass::other;
    }
    const auto* range = find_range(tables::kRegexClassRanges, tables::kRegexClassRangeCount, c);
    return range ? range->regex_class : RegexClass::other;
}

GraphemeBreak grapheme_break(char32_t c) {
    const auto* range = find_range(tables::kGraphemeBreakRanges, tables::kGraphemeBreakRangeCount, c);
    return range ? range->grapheme_break : GraphemeBreak::other;
}

bool is_extended_pictographic(char32_t c) {
    return find_range(tables::kExtendedPictographic, tables::kExtendedPictographicCount, c) != nullptr;
}

}  // namespace infer::text
