#include "core/text/gpt2_pre_tokenizer.hpp"

#include "core/text/unicode.hpp"

namespace infer::text {

namespace {

// The length of the contraction ('s, 't, 're, 've, 'm, 'll, 'd; lower case only) at i, or 0.
size_t contraction_length(std::u32string_view text, size_t i) {
    if (text[i] != U'\'' || i + 1 >= text.size()) return 0;
    const char32_t first = text[i + 1];
    if (first == U's' || first == U't' || first == U'm' || first == U'd') return 2;
    if (i + 2 >= text.size()) return 0;
    const char32_t second = text[i + 2];
    if ((first == U'r' && second == U'e') || (first == U'v' && second == U'e') || (first == U'l' && second == U'l'))
        return 3;
    return 0;
}

// The end of the run of characters of class cls that starts at i.
size_t run_end(std::u32string_view text, size_t i, RegexClass cls) {
    while (i < text.size() && regex_class(text[i]) == cls) ++i;
    return i;
}

// The end of the word that starts at i (the regex's alternatives in its order).
size_t word_end(std::u32string_view text, size_t i) {
    if (const size_t length = contraction_length(text, i)) return i + length;
    // " ?\p{L}+", " ?\p{N}+", " ?[^\s\p{L}\p{N}]+": one optional space, then a run of one class.
    const size_t body = text[i] == U' ' ? i + 1 : i;
    if (body < text.size()) {
        const RegexClass cls = regex_class(text[body]);
        if (cls != RegexClass::whitespace) return run_end(text, body, cls);
    }
    // "\s+(?!\S)" takes a whitespace run but its last character when a word follows (that one
    // goes with the word, or alone); "\s+" takes a lone whitespace character before a word.
    const size_t end = run_end(text, i, RegexClass::whitespace);
    if (end == text.size() || end - i == 1) return end;
    return end - 1;
}

}  // namespace

std::vector<std::pair<size_t, size_t>> split_gpt2_words(std::u32string_view text) {
    std::vector<std::pair<size_t, size_t>> words;
    for (size_t i = 0; i < text.size();) {
        const size_t end = word_end(text, i);
        words.emplace_back(i, end);
        i = end;
    }
    return words;
}

}  // namespace infer::text
