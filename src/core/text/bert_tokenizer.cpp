// BERT's tokenization as HuggingFace's Rust tokenizer does it (BertNormalizer, BertPreTokenizer,
// WordPiece; the Python BasicTokenizer + WordpieceTokenizer agree but for the corners named in
// tokenizer.hpp): clean, isolate CJK ideographs, strip accents and lower-case, character by
// character; split at whitespace and punctuation; then greedy longest-match-first word pieces,
// "##" marking a continuation.
#include <infer/error.hpp>
#include <infer/tokenizer.hpp>

#include "core/text/unicode.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <optional>
#include <unordered_map>

namespace infer {

namespace {

// Longer words become [UNK] whole, as in HuggingFace (max_input_chars_per_word).
constexpr size_t kMaxCharsPerWord = 100;

struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

using VocabMap = std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>;

}  // namespace

struct BertTokenizer::Impl {
    std::vector<std::string> tokens;
    VocabMap ids;
    bool lower_case = true;
    size_t max_length = 512;
    int64_t unk_id = 0, cls_id = 0, sep_id = 0, pad_id = 0;
    // Special tokens written literally in the text map straight to their ids.
    std::vector<std::pair<std::string, int64_t>> literal_specials;

    std::optional<int64_t> find(std::string_view token) const {
        const auto it = ids.find(token);
        if (it == ids.end()) return std::nullopt;
        return it->second;
    }

    // Cleaned, CJK-spaced, accent-stripped and lower-cased text, ready to split.
    std::u32string normalize(std::u32string_view text) const {
        std::u32string out;
        out.reserve(text.size() + text.size() / 4);
        std::u32string stripped;
        for (char32_t c : text) {
            const text::CharClass cls = text::char_class(c);
            if (c == 0 || c == 0xFFFD || cls == text::CharClass::control) continue;
            if (cls == text::CharClass::whitespace) {
                out.push_back(U' ');
            } else if (text::is_cjk_ideograph(c)) {
                out.push_back(U' ');
                append_cased(c, out, stripped);
                out.push_back(U' ');
            } else {
                append_cased(c, out, stripped);
            }
        }
        return out;
    }

    void append_cased(char32_t c, std::u32string& out, std::u32string& scratch) const {
        if (!lower_case) {
            out.push_back(c);
            return;
        }
        scratch.clear();
        text::append_accent_stripped(c, scratch);
        for (char32_t s : scratch) text::append_lowercase(s, out);
    }

    void append_word_pieces(std::u32string_view word, std::vector<int64_t>& out) const {
        if (word.size() > kMaxCharsPerWord) {
            out.push_back(unk_id);
            return;
        }
        // UTF-8 of the word with the byte offset of every character, to cut it at characters.
        std::string utf8;
        std::vector<size_t> offsets;
        offsets.reserve(word.size() + 1);
        for (char32_t c : word) {
            offsets.push_back(utf8.size());
            text::append_utf8(utf8, c);
        }
        offsets.push_back(utf8.size());

        const size_t first_piece = out.size();
        std::string candidate;
        size_t start = 0;
        while (start < word.size()) {
            std::optional<int64_t> piece;
            size_t end = word.size();
            for (; end > start; --end) {
                candidate.assign(start > 0 ? "##" : "");
                candidate.append(utf8, offsets[start], offsets[end] - offsets[start]);
                if ((piece = find(candidate))) break;
            }
            if (!piece) {  // no split of the whole word: it is unknown
                out.resize(first_piece);
                out.push_back(unk_id);
                return;
            }
            out.push_back(*piece);
            start = end;
        }
    }

    // Word pieces of text that holds no literal special token.
    void append_plain(std::string_view utf8_text, std::vector<int64_t>& out) const {
        const std::u32string normalized = normalize(text::decode_utf8(utf8_text));
        size_t word_start = 0;
        for (size_t i = 0; i <= normalized.size(); ++i) {
            const text::CharClass cls =
                i < normalized.size() ? text::char_class(normalized[i]) : text::CharClass::whitespace;
            if (cls != text::CharClass::whitespace && cls != text::CharClass::punctuation) continue;
            if (i > word_start)
                append_word_pieces(std::u32string_view(normalized).substr(word_start, i - word_start), out);
            if (cls == text::CharClass::punctuation)
                append_word_pieces(std::u32string_view(normalized).substr(i, 1), out);
            word_start = i + 1;
        }
    }

    std::vector<int64_t> piece_ids(std::string_view text) const {
        std::vector<int64_t> out;
        size_t plain_start = 0;
        for (size_t i = 0; i < text.size(); ++i) {
            if (text[i] != '[') continue;
            for (const auto& [special, id] : literal_specials) {
                if (text.substr(i, special.size()) != special) continue;
                append_plain(text.substr(plain_start, i - plain_start), out);
                out.push_back(id);
                plain_start = i + special.size();
                i = plain_start - 1;
                break;
            }
        }
        append_plain(text.substr(plain_start), out);
        return out;
    }
};

BertTokenizer::BertTokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

BertTokenizer BertTokenizer::from_vocab_file(const std::string& path, bool lower_case) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw ModelError("cannot read the vocabulary file '" + path + "'");
    std::vector<std::string> tokens;
    std::string line;
    while (std::getline(file, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        tokens.push_back(line);
    }
    if (file.bad()) throw ModelError("error while reading the vocabulary file '" + path + "'");
    return from_vocab(std::move(tokens), lower_case, "vocabulary file '" + path + "'");
}

BertTokenizer BertTokenizer::from_vocab(std::vector<std::string> tokens, bool lower_case,
                                        const std::string& source, size_t max_length) {
    auto impl = std::make_shared<Impl>();
    impl->lower_case = lower_case;
    impl->max_length = max_length;
    impl->ids.reserve(tokens.size());
    // A token listed twice keeps its last id, as HuggingFace's load_vocab does.
    for (size_t i = 0; i < tokens.size(); ++i) impl->ids[tokens[i]] = static_cast<int64_t>(i);
    impl->tokens = std::move(tokens);
    const auto required = [&](const char* name) {
        const auto id = impl->find(name);
        if (!id)
            throw ModelError(source + " has no " + name + " token (" +
                             std::to_string(impl->tokens.size()) + " tokens read)");
        return *id;
    };
    impl->unk_id = required("[UNK]");
    impl->cls_id = required("[CLS]");
    impl->sep_id = required("[SEP]");
    impl->pad_id = required("[PAD]");
    for (const char* special : {"[MASK]", "[UNK]", "[CLS]", "[SEP]", "[PAD]"})
        if (const auto id = impl->find(special)) impl->literal_specials.emplace_back(special, *id);
    return BertTokenizer(std::move(impl));
}

std::vector<std::string> BertTokenizer::tokenize(std::string_view text) const {
    std::vector<std::string> pieces;
    for (int64_t id : impl_->piece_ids(text)) pieces.push_back(impl_->tokens[static_cast<size_t>(id)]);
    return pieces;
}

Encoding BertTokenizer::encode(std::string_view text, size_t max_length) const {
    if (max_length < 2)
        throw InvalidArgument("BertTokenizer::encode: max_length " + std::to_string(max_length) +
                              " leaves no room for [CLS] and [SEP] (it must be at least 2)");
    std::vector<int64_t> pieces = impl_->piece_ids(text);
    if (pieces.size() > max_length - 2) pieces.resize(max_length - 2);
    Encoding encoding;
    encoding.input_ids.reserve(pieces.size() + 2);
    encoding.input_ids.push_back(impl_->cls_id);
    encoding.input_ids.insert(encoding.input_ids.end(), pieces.begin(), pieces.end());
    encoding.input_ids.push_back(impl_->sep_id);
    encoding.attention_mask.assign(encoding.input_ids.size(), 1);
    encoding.token_type_ids.assign(encoding.input_ids.size(), 0);
    return encoding;
}

Batch BertTokenizer::encode_batch(const std::vector<std::string>& texts, size_t max_length) const {
    if (texts.empty()) throw InvalidArgument("BertTokenizer::encode_batch: no texts to encode");
    std::vector<Encoding> encodings;
    encodings.reserve(texts.size());
    size_t longest = 0;
    for (size_t i = 0; i < texts.size(); ++i) {
        try {
            encodings.push_back(encode(texts[i], max_length));
        } catch (const InvalidArgument& e) {
            throw InvalidArgument("BertTokenizer::encode_batch: text " + std::to_string(i) + ": " + e.what());
        }
        longest = std::max(longest, encodings.back().input_ids.size());
    }
    const size_t count = texts.size();
    std::vector<int64_t> ids(count * longest, impl_->pad_id), mask(count * longest, 0),
        types(count * longest, 0);
    for (size_t i = 0; i < count; ++i) {
        const Encoding& e = encodings[i];
        std::copy(e.input_ids.begin(), e.input_ids.end(), ids.begin() + i * longest);
        std::copy(e.attention_mask.begin(), e.attention_mask.end(), mask.begin() + i * longest);
        std::copy(e.token_type_ids.begin(), e.token_type_ids.end(), types.begin() + i * longest);
    }
    const Shape shape{static_cast<int64_t>(count), static_cast<int64_t>(longest)};
    Batch batch;
    batch.set("input_ids", Tensor::from_vector(ids, shape));
    batch.set("attention_mask", Tensor::from_vector(mask, shape));
    batch.set("token_type_ids", Tensor::from_vector(types, shape));
    return batch;
}

int64_t BertTokenizer::token_id(std::string_view token) const {
    if (const auto id = impl_->find(token)) return *id;
    throw InvalidArgument("BertTokenizer: '" + std::string(token) + "' is not in the vocabulary");
}

const std::string& BertTokenizer::token(int64_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= impl_->tokens.size())
        throw InvalidArgument("BertTokenizer: token id " + std::to_string(id) + " is outside the vocabulary of " +
                              std::to_string(impl_->tokens.size()) + " tokens");
    return impl_->tokens[static_cast<size_t>(id)];
}

size_t BertTokenizer::vocab_size() const { return impl_->tokens.size(); }
bool BertTokenizer::lower_case() const { return impl_->lower_case; }
int64_t BertTokenizer::pad_id() const { return impl_->pad_id; }
size_t BertTokenizer::max_length() const { return impl_->max_length; }

}  // namespace infer
