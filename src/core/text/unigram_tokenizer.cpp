// UnigramTokenizer: Hugging Face's pipeline for SentencePiece unigram models (T5), step by step:
// added tokens not marked `normalized` are cut out of the text as given; the stretches between
// are normalized (precompiled charsmap) and the normalized added tokens cut out of them; what
// remains is split at whitespace, given "▁" in front of each word, cut before each "▁", and each
// part split into pieces by the unigram model; the template's "</s>" goes at the end.
#include "core/text/unigram_tokenizer_impl.hpp"

#include "core/text/token_batch.hpp"
#include "core/text/unicode.hpp"

#include <infer/error.hpp>

namespace infer {

namespace {

// The added tokens that are matched at one stage (normalized or not), their content normalized
// for the normalized stage, as Hugging Face does.
std::vector<text::AddedToken> added_at_stage(const std::vector<text::AddedToken>& tokens, bool normalized,
                                             const std::optional<text::PrecompiledNormalizer>& normalizer) {
    std::vector<text::AddedToken> stage;
    for (const text::AddedToken& token : tokens) {
        if (token.normalized != normalized) continue;
        stage.push_back(token);
        if (normalized && normalizer) stage.back().content = normalizer->normalize(token.content);
    }
    return stage;
}

}  // namespace

UnigramTokenizer::Impl::Impl(text::UnigramSettings settings)
    : vocabulary(std::move(settings.vocabulary)),
      model(settings.pieces, settings.unk_piece, settings.fuse_unk, settings.source),
      normalizer(std::move(settings.normalizer)),
      raw_added(added_at_stage(settings.added_tokens, false, normalizer)),
      normalized_added(added_at_stage(settings.added_tokens, true, normalizer)),
      whitespace_split(settings.whitespace_split),
      metaspace(std::move(settings.metaspace)),
      decoder(std::move(settings.decoder)),
      special_template(std::move(settings.special_template)) {}

void UnigramTokenizer::Impl::append_plain(std::string_view normalized, std::vector<int64_t>& ids) const {
    const std::u32string chars = text::decode_utf8(normalized);
    std::vector<std::string> words;
    if (whitespace_split) {
        std::string word;
        for (char32_t c : chars) {
            if (text::regex_class(c) == text::RegexClass::whitespace) {
                if (!word.empty()) words.push_back(std::move(word));
                word.clear();
            } else {
                text::append_utf8(word, c);
            }
        }
        if (!word.empty()) words.push_back(std::move(word));
    } else {
        words.push_back(std::string(normalized));
    }
    const std::string& mark = metaspace.replacement;
    for (std::string& word : words) {
        std::string marked;
        for (size_t space; (space = word.find(' ')) != std::string::npos;) word.replace(space, 1, mark);
        if (metaspace.prepend && !word.starts_with(mark)) marked = mark;
        marked += word;
        if (!metaspace.split) {
            model.append_word(marked, ids);
            continue;
        }
        // Cut before each replacement, which stays with the part that follows it.
        size_t part_start = 0;
        for (size_t next; (next = marked.find(mark, part_start + 1)) != std::string::npos; part_start = next)
            model.append_word(std::string_view(marked).substr(part_start, next - part_start), ids);
        model.append_word(std::string_view(marked).substr(part_start), ids);
    }
}

std::vector<int64_t> UnigramTokenizer::Impl::piece_ids(std::string_view utf8_text) const {
    text::decode_utf8(utf8_text);  // rejects invalid UTF-8 before anything else
    std::vector<int64_t> ids;
    for (const text::TextPiece& piece : raw_added.split(utf8_text)) {
        if (piece.id) {
            ids.push_back(*piece.id);
            continue;
        }
        const std::string normalized = normalizer ? normalizer->normalize(piece.text) : std::string(piece.text);
        for (const text::TextPiece& part : normalized_added.split(normalized)) {
            if (part.id) ids.push_back(*part.id);
            else append_plain(part.text, ids);
        }
    }
    return ids;
}

UnigramTokenizer::UnigramTokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

std::vector<int64_t> UnigramTokenizer::encode(std::string_view text) const {
    std::vector<int64_t> ids = impl_->special_template.before;
    const std::vector<int64_t> pieces = impl_->piece_ids(text);
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    ids.insert(ids.end(), impl_->special_template.after.begin(), impl_->special_template.after.end());
    return ids;
}

std::vector<std::string> UnigramTokenizer::tokenize(std::string_view text) const {
    std::vector<std::string> tokens;
    for (int64_t id : impl_->piece_ids(text)) tokens.push_back(impl_->vocabulary.token(id));
    return tokens;
}

std::string UnigramTokenizer::decode(std::span<const int64_t> ids, bool skip_special_tokens) const {
    // Metaspace's decoder: "▁" is a space, but in the first token it is dropped (it was put
    // there by the pre-tokenizer, not by the text).
    const std::string& mark = impl_->decoder.replacement;
    std::string text;
    bool first = true;
    for (int64_t id : ids) {
        const std::string& token = impl_->vocabulary.token(id);  // throws for an id outside the vocabulary
        if (skip_special_tokens && impl_->vocabulary.is_special(id)) continue;
        const bool drop_marks = first && impl_->decoder.prepend;
        first = false;
        for (size_t i = 0; i < token.size();) {
            if (token.compare(i, mark.size(), mark) == 0) {
                if (!drop_marks) text.push_back(' ');
                i += mark.size();
            } else {
                text.push_back(token[i++]);
            }
        }
    }
    return text;
}

Batch UnigramTokenizer::encode_batch(const std::vector<std::string>& texts, PaddingSide side) const {
    const auto pad = impl_->vocabulary.pad ? impl_->vocabulary.pad : impl_->vocabulary.eos;
    if (!pad)
        throw InvalidArgument("UnigramTokenizer::encode_batch: the tokenizer has neither a pad nor an eos token to pad with");
    return text::encode_padded(
        texts, [this](std::string_view text) { return encode(text); }, *pad, side, "UnigramTokenizer");
}

int64_t UnigramTokenizer::token_id(std::string_view token) const { return impl_->vocabulary.id_of(token); }
const std::string& UnigramTokenizer::token(int64_t id) const { return impl_->vocabulary.token(id); }
bool UnigramTokenizer::is_special(int64_t id) const { return impl_->vocabulary.is_special(id); }
size_t UnigramTokenizer::vocab_size() const { return impl_->vocabulary.size(); }
std::optional<int64_t> UnigramTokenizer::eos_id() const { return impl_->vocabulary.eos; }
std::optional<int64_t> UnigramTokenizer::bos_id() const { return impl_->vocabulary.bos; }
std::optional<int64_t> UnigramTokenizer::pad_id() const { return impl_->vocabulary.pad; }
std::optional<int64_t> UnigramTokenizer::unk_id() const { return impl_->vocabulary.unk; }

}  // namespace infer
