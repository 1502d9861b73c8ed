#pragma once
// Tokenizers of text-generation models, giving the ids Hugging Face's tokenizers library gives
// (checked on 600+ varied texts: English, punctuation, numbers, whitespace runs, many scripts,
// emoji, very long words) and decoding ids back to text as its decode does:
//
//   - BpeTokenizer: byte-level BPE (GPT-2 and the models that reuse its tokenizer). Text is cut
//     into words by GPT-2's regex, each word's UTF-8 bytes become byte-level symbols, and the
//     vocabulary's merges join them, lowest rank first. Every text round-trips exactly.
//   - UnigramTokenizer: a SentencePiece unigram model (T5). Text is normalized by the model's
//     precompiled NFKC-like map, split at whitespace, each word gets a "▁" in front, and the most
//     likely split into vocabulary pieces is chosen (Viterbi); "</s>" ends every encoding.
//     Normalization loses information ("ﬁ" → "fi"), so decode gives the normalized text.
//
//   auto tokenizer = infer::BpeTokenizer::from_tokenizer_json("gpt2/");   // folder or file
//   std::vector<int64_t> ids = tokenizer.encode("Hello world");
//   std::string text = tokenizer.decode(ids);
//   infer::Batch prompts = tokenizer.encode_batch({"Once upon", "A"}, infer::PaddingSide::left);
//
// A separate header from tokenizer.hpp (BERT's WordPiece) because these two share what BERT's
// does not: decoding, left padding for generation, and Hugging Face's added-token handling.
//
// Special tokens ("<|endoftext|>", "</s>", "<extra_id_0>", ...) and other added tokens written
// literally in the text encode as themselves, as in Hugging Face. Both classes are immutable:
// copies share one state, and const calls may run on many threads at once.
#include <infer/batch.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace infer {

// Where encode_batch puts the padding of shorter texts. Generation pads on the left so that every
// prompt ends at the last position, where the next token is produced.
enum class PaddingSide { left, right };

class BpeTokenizer {
public:
    // Reads a Hugging Face tokenizer.json whose model is BPE with the ByteLevel pre-tokenizer and
    // decoder, or the folder holding one. The special tokens (eos, bos, pad, unk) come from
    // tokenizer_config.json beside it when there is one, else "<|endoftext|>" is eos, bos and unk
    // when the vocabulary has it, as in GPT2Tokenizer. Throws ModelError for a missing or
    // malformed file (naming it and what is wrong), Unsupported for what this tokenizer does not
    // do (normalizers, other pre-tokenizers or decoders, dropout, byte fallback, subword prefixes).
    static BpeTokenizer from_tokenizer_json(const std::string& path);
    // Reads GPT-2's original files: vocab.json ({"token": id, ...}) and merges.txt (one "a b"
    // pair a line, highest priority first, an optional "#version" line at the top), with GPT-2's
    // settings: no prefix space, "<|endoftext|>" as eos, bos and unk when the vocabulary has it.
    // Throws ModelError naming the file and what is wrong.
    static BpeTokenizer from_vocab_merges(const std::string& vocab_json, const std::string& merges_txt);

    // The ids of text, with the special tokens the tokenizer's post-processor adds (none for
    // GPT-2). Throws InvalidArgument when text is not valid UTF-8.
    std::vector<int64_t> encode(std::string_view text) const;
    // The vocabulary tokens of text, without post-processor special tokens ("Ġworld": byte-level
    // characters, "Ġ" standing for a space).
    std::vector<std::string> tokenize(std::string_view text) const;
    // The text of ids: their bytes joined, invalid UTF-8 made U+FFFD (a multi-byte character cut
    // between two ids decodes whole once both are there). skip_special_tokens drops the special
    // tokens (eos, ...). Throws InvalidArgument for an id outside the vocabulary.
    std::string decode(std::span<const int64_t> ids, bool skip_special_tokens = false) const;
    // Encodes each text and pads them to the longest: a Batch of i64 tensors "input_ids" and
    // "attention_mask" (0 over padding), [texts.size(), longest], on the CPU. Padding uses pad_id(),
    // or eos_id() when the tokenizer has no pad token (GPT-2; the mask hides it). Throws
    // InvalidArgument for an empty list or a text that is not valid UTF-8 (naming which).
    Batch encode_batch(const std::vector<std::string>& texts, PaddingSide side = PaddingSide::left) const;

    // The id of a token of the vocabulary (added tokens included); throws InvalidArgument when
    // it has none.
    int64_t token_id(std::string_view token) const;
    // The token with that id; throws InvalidArgument when out of range.
    const std::string& token(int64_t id) const;
    bool is_special(int64_t id) const;  // false for ids outside the vocabulary
    size_t vocab_size() const;          // ids are 0 .. vocab_size() - 1
    std::optional<int64_t> eos_id() const;
    std::optional<int64_t> bos_id() const;
    std::optional<int64_t> pad_id() const;
    std::optional<int64_t> unk_id() const;

private:
    struct Impl;
    explicit BpeTokenizer(std::shared_ptr<const Impl> impl);
    std::shared_ptr<const Impl> impl_;  // immutable, so copies share it and threads may too
};

class UnigramTokenizer {
public:
    // Reads a Hugging Face tokenizer.json whose model is Unigram (T5's, as transformers converts
    // a SentencePiece model), or the folder holding one: the pieces and their scores, the
    // Precompiled normalizer, the WhitespaceSplit + Metaspace pre-tokenizer, the Metaspace
    // decoder, the template that appends "</s>". Special tokens come from tokenizer_config.json
    // beside it, else "</s>", "<pad>" and the model's unknown piece. Throws ModelError for a
    // missing or malformed file, Unsupported for what this tokenizer does not do (other
    // normalizers, byte fallback, the "first" prepend scheme, ...).
    static UnigramTokenizer from_tokenizer_json(const std::string& path);

    // The ids of text, "</s>" appended (what the template says). Throws InvalidArgument when
    // text is not valid UTF-8.
    std::vector<int64_t> encode(std::string_view text) const;
    // The pieces of text ("▁Hello", ...), without "</s>".
    std::vector<std::string> tokenize(std::string_view text) const;
    // The text of ids: pieces joined, "▁" made a space, the first piece's "▁" dropped.
    // skip_special_tokens drops "</s>", "<pad>", "<unk>", "<extra_id_N>"... Throws
    // InvalidArgument for an id outside the vocabulary.
    std::string decode(std::span<const int64_t> ids, bool skip_special_tokens = false) const;
    // As BpeTokenizer::encode_batch; T5's encoder takes right padding, the default here.
    Batch encode_batch(const std::vector<std::string>& texts, PaddingSide side = PaddingSide::right) const;

    int64_t token_id(std::string_view token) const;
    const std::string& token(int64_t id) const;
    bool is_special(int64_t id) const;
    size_t vocab_size() const;
    std::optional<int64_t> eos_id() const;
    std::optional<int64_t> bos_id() const;
    std::optional<int64_t> pad_id() const;
    std::optional<int64_t> unk_id() const;

private:
    struct Impl;
    explicit UnigramTokenizer(std::shared_ptr<const Impl> impl);
    std::shared_ptr<const Impl> impl_;  // immutable, so copies share it and threads may too
};

}  // namespace infer
