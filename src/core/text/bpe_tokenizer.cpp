// BpeTokenizer: Hugging Face's pipeline for byte-level BPE, step by step: added tokens are cut
// out of the text first; each stretch between them is split by GPT-2's regex, each word's bytes
// become byte-level symbols and are merged; the post-processor's special tokens go around.
// Decoding joins the tokens' bytes and repairs invalid UTF-8 as the ByteLevel decoder does.
#include "core/text/bpe_tokenizer_impl.hpp"

#include "core/text/byte_level.hpp"
#include "core/text/gpt2_pre_tokenizer.hpp"
#include "core/text/token_batch.hpp"
#include "core/text/unicode.hpp"

#include <infer/error.hpp>

namespace infer {

BpeTokenizer::Impl::Impl(text::BpeSettings settings)
    : vocabulary(std::move(settings.vocabulary)),
      model(vocabulary, settings.merges, settings.options, settings.source),
      added(std::move(settings.added_tokens)),
      special_template(std::move(settings.special_template)),
      add_prefix_space(settings.add_prefix_space),
      use_regex(settings.use_regex) {
    token_bytes.reserve(vocabulary.size());
    for (size_t id = 0; id < vocabulary.size(); ++id) {
        try {
            token_bytes.push_back(text::byte_level_bytes(vocabulary.token(static_cast<int64_t>(id))));
        } catch (const InvalidArgument&) {
            throw ModelError(settings.source + ": token " + std::to_string(id) + " is not valid UTF-8");
        }
    }
}

std::vector<int64_t> BpeTokenizer::Impl::piece_ids(std::string_view utf8_text) const {
    text::decode_utf8(utf8_text);  // rejects invalid UTF-8 before anything else
    std::vector<int64_t> ids;
    std::string word_bytes;
    for (const text::TextPiece& piece : added.split(utf8_text)) {
        if (piece.id) {
            ids.push_back(*piece.id);
            continue;
        }
        std::u32string chars = text::decode_utf8(piece.text);
        // The prefix space goes before every stretch between added tokens, as in Hugging Face.
        if (add_prefix_space && chars.front() != U' ') chars.insert(chars.begin(), U' ');
        const auto words = use_regex ? text::split_gpt2_words(chars)
                                     : std::vector<std::pair<size_t, size_t>>{{0, chars.size()}};
        for (const auto& [begin, end] : words) {
            word_bytes = text::encode_utf8(std::u32string_view(chars).substr(begin, end - begin));
            model.append_word(word_bytes, vocabulary, ids);
        }
    }
    return ids;
}

BpeTokenizer::BpeTokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

std::vector<int64_t> BpeTokenizer::encode(std::string_view text) const {
    std::vector<int64_t> ids = impl_->special_template.before;
    const std::vector<int64_t> pieces = impl_->piece_ids(text);
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    ids.insert(ids.end(), impl_->special_template.after.begin(), impl_->special_template.after.end());
    return ids;
}

std::vector<std::string> BpeTokenizer::tokenize(std::string_view text) const {
    std::vector<std::string> tokens;
    for (int64_t id : impl_->piece_ids(text)) tokens.push_back(impl_->vocabulary.token(id));
    return tokens;
}

std::string BpeTokenizer::decode(std::span<const int64_t> ids, bool skip_special_tokens) const {
    std::string bytes;
    for (int64_t id : ids) {
        impl_->vocabulary.token(id);  // throws for an id outside the vocabulary
        if (skip_special_tokens && impl_->vocabulary.is_special(id)) continue;
        bytes += impl_->token_bytes[static_cast<size_t>(id)];
    }
    return text::utf8_lossy(bytes);
}

Batch BpeTokenizer::encode_batch(const std::vector<std::string>& texts, PaddingSide side) const {
    const auto pad = impl_->vocabulary.pad ? impl_->vocabulary.pad : impl_->vocabulary.eos;
    if (!pad)
        throw InvalidArgument("BpeTokenizer::encode_batch: the tokenizer has neither a pad nor an eos token to pad with");
    return text::encode_padded(
        texts, [this](std::string_view text) { return encode(text); }, *pad, side, "BpeTokenizer");
}

int64_t BpeTokenizer::token_id(std::string_view token) const { return impl_->vocabulary.id_of(token); }
const std::string& BpeTokenizer::token(int64_t id) const { return impl_->vocabulary.token(id); }
bool BpeTokenizer::is_special(int64_t id) const { return impl_->vocabulary.is_special(id); }
size_t BpeTokenizer::vocab_size() const { return impl_->vocabulary.size(); }
std::optional<int64_t> BpeTokenizer::eos_id() const { return impl_->vocabulary.eos; }
std::optional<int64_t> BpeTokenizer::bos_id() const { return impl_->vocabulary.bos; }
std::optional<int64_t> BpeTokenizer::pad_id() const { return impl_->vocabulary.pad; }
std::optional<int64_t> BpeTokenizer::unk_id() const { return impl_->vocabulary.unk; }

}  // namespace infer
