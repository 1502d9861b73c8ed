#include "core/text/precompiled_normalizer.hpp"

#include "core/text/graphemes.hpp"
#include "core/text/unicode.hpp"

#include <infer/error.hpp>

namespace infer::text {

namespace {

// Clusters this long or longer are looked up character by character (Hugging Face's bound).
constexpr size_t kWholeClusterBytes = 6;

// The fields of a darts-clone unit.
bool has_leaf(uint32_t unit) { return (unit >> 8) & 1; }
uint32_t value(uint32_t unit) { return unit & 0x7FFFFFFFu; }
uint32_t label(uint32_t unit) { return unit & (0x80000000u | 0xFFu); }
size_t offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

}  // namespace

PrecompiledNormalizer::PrecompiledNormalizer(std::string_view charsmap, const std::string& source) {
    if (charsmap.size() < 4) throw ModelError(source + ": the precompiled charsmap is shorter than its header");
    uint32_t trie_bytes = 0;
    for (int i = 3; i >= 0; --i) trie_bytes = (trie_bytes << 8) | static_cast<unsigned char>(charsmap[i]);
    if (trie_bytes % 4 != 0 || trie_bytes == 0 || trie_bytes > charsmap.size() - 4)
        throw ModelError(source + ": the precompiled charsmap's trie size " + std::to_string(trie_bytes) +
                         " does not fit its " + std::to_string(charsmap.size()) + " bytes");
    units_.resize(trie_bytes / 4);
    for (size_t i = 0; i < units_.size(); ++i)
        for (int b = 3; b >= 0; --b)
            units_[i] = (units_[i] << 8) | static_cast<unsigned char>(charsmap[4 + i * 4 + static_cast<size_t>(b)]);
    replacements_ = std::string(charsmap.substr(4 + trie_bytes));
}

std::optional<std::string_view> PrecompiledNormalizer::replacement(std::string_view chunk) const {
    size_t position = offset(units_[0]);
    for (char byte : chunk) {
        const auto c = static_cast<unsigned char>(byte);
        if (c == 0) return std::nullopt;  // keys never hold NUL (darts-clone ends keys with it)
        position ^= c;
        if (position >= units_.size()) return std::nullopt;
        const uint32_t unit = units_[position];
        if (label(unit) != c) return std::nullopt;
        position ^= offset(unit);
        if (position >= units_.size()) return std::nullopt;
        if (has_leaf(unit)) {
            const size_t start = value(units_[position]);
            if (start >= replacements_.size()) return std::nullopt;
            const size_t end = replacements_.find('\0', start);
            return std::string_view(replacements_).substr(start, end == std::string::npos ? end : end - start);
        }
    }
    return std::nullopt;
}

std::string PrecompiledNormalizer::normalize(std::string_view text) const {
    const std::u32string chars = decode_utf8(text);
    // Byte offset of every character, to look clusters and characters up as UTF-8.
    std::vector<size_t> offsets;
    offsets.reserve(chars.size() + 1);
    size_t byte = 0;
    for (char32_t c : chars) {
        offsets.push_back(byte);
        byte += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    }
    offsets.push_back(byte);

    std::string out;
    out.reserve(text.size());
    for (size_t start = 0; start < chars.size();) {
        const size_t end = grapheme_end(chars, start);
        const std::string_view cluster = text.substr(offsets[start], offsets[end] - offsets[start]);
        const auto whole = cluster.size() < kWholeClusterBytes ? replacement(cluster) : std::nullopt;
        if (whole) {
            out += *whole;
        } else {
            for (size_t i = start; i < end; ++i) {
                const std::string_view character = text.substr(offsets[i], offsets[i + 1] - offsets[i]);
                const auto replaced = replacement(character);
                out += replaced ? *replaced : character;
            }
        }
        start = end;
    }
    return out;
}

}  // namespace infer::text
