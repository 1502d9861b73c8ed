#include "core/text/added_tokens.hpp"

#include "core/text/unicode.hpp"

#include <algorithm>

namespace infer::text {

namespace {

// The length of the UTF-8 character ending just before `end` (valid UTF-8 assumed).
size_t char_length_before(std::string_view text, size_t end) {
    size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    return end - start;
}

bool is_whitespace(std::string_view character) {
    const std::u32string c = decode_utf8(character);
    return c.size() == 1 && regex_class(c[0]) == RegexClass::whitespace;
}

size_t char_length_at(std::string_view text, size_t start) {
    const auto lead = static_cast<unsigned char>(text[start]);
    return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
    std::erase_if(tokens_, [](const AddedToken& token) { return token.content.empty(); });
    std::stable_sort(tokens_.begin(), tokens_.end(),
                     [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
    for (const AddedToken& token : tokens_) starts_[static_cast<unsigned char>(token.content[0])] = true;
}

std::vector<TextPiece> AddedTokenMatcher::split(std::string_view text) const {
    std::vector<TextPiece> pieces;
    size_t plain_start = 0;  // where the text not yet given to a piece starts
    const auto flush_plain = [&](size_t end) {
        if (end > plain_start) pieces.push_back({text.substr(plain_start, end - plain_start), std::nullopt});
    };
    size_t i = 0;
    while (i < text.size()) {
        const AddedToken* found = nullptr;
        if (starts_[static_cast<unsigned char>(text[i])])
            for (const AddedToken& token : tokens_)
                if (text.compare(i, token.content.size(), token.content) == 0) {
                    found = &token;
                    break;
                }
        if (!found) {
            ++i;
            continue;
        }
        size_t start = i, end = i + found->content.size();
        if (found->lstrip)
            while (start > plain_start && is_whitespace(text.substr(start - char_length_before(text, start),
                                                                    char_length_before(text, start))))
                start -= char_length_before(text, start);
        if (found->rstrip)
            while (end < text.size() && is_whitespace(text.substr(end, char_length_at(text, end))))
                end += char_length_at(text, end);
        flush_plain(start);
        pieces.push_back({text.substr(start, end - start), found->id});
        plain_start = i = end;
    }
    flush_plain(text.size());
    return pieces;
}

}  // namespace infer::text
