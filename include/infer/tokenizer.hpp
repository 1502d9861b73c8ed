#pragma once
// BertTokenizer turns text into the inputs of BERT-family models (BERT, DistilBERT, MiniLM,
// most sentence-transformers): the same ids as HuggingFace's BertTokenizer (the Rust-backed one
// that transformers and sentence-transformers use; checked on 600+ varied texts). The older
// pure-Python tokenizer (BertTokenizerLegacy in transformers 5) differs in two corners: it drops
// unassigned code points, which are letters here, and lower-cases a word-final Σ to ς, not σ.
//
//   auto tokenizer = infer::BertTokenizer::from_tokenizer_json("all-MiniLM-L6-v2/");  // or vocab.txt
//   infer::Batch inputs = tokenizer.encode_batch({"A man is eating food.", "A girl."}, tokenizer.max_length());
//   // inputs["input_ids"], ["attention_mask"], ["token_type_ids"]: i64 [2, longest]
//
// Text is UTF-8. It is cleaned (control and format characters dropped, whitespace made spaces),
// CJK ideographs become words of their own, it is lower-cased and stripped of accents (when
// lower_case), split at whitespace and punctuation, and each word is split into the longest
// vocabulary pieces from its start ("playing" → "play", "##ing"); a word with no such split, or
// longer than 100 characters, becomes [UNK]. The special tokens ([CLS], [SEP], [PAD], [MASK],
// [UNK]) written literally in the text stay themselves.
#include <infer/batch.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace infer {

// One encoded text: [CLS] pieces... [SEP], all three vectors the same length.
struct Encoding {
    std::vector<int64_t> input_ids;
    std::vector<int64_t> attention_mask;  // 1 for every token (padding only comes with batches)
    std::vector<int64_t> token_type_ids;  // 0: a single sequence
};

class BertTokenizer {
public:
    // Reads a WordPiece vocabulary, one token per line, the line number being the id (vocab.txt
    // as HuggingFace stores it). lower_case: true for "uncased" models (it also strips accents).
    // Throws ModelError when the file cannot be read or lacks [UNK], [CLS], [SEP] or [PAD].
    static BertTokenizer from_vocab_file(const std::string& path, bool lower_case = true);
    // The same from tokens in id order; `source` names them in error messages.
    static BertTokenizer from_vocab(std::vector<std::string> tokens, bool lower_case = true,
                                    const std::string& source = "vocabulary", size_t max_length = 512);
    // Reads a Hugging Face tokenizer.json whose model is WordPiece with BERT's normalizer and
    // pre-tokenizer (BERT, MiniLM, DistilBERT, most sentence-transformers), or the folder holding
    // one: the vocabulary, lower-casing and accent stripping, the special tokens. From the same
    // folder, max_length() is sentence_bert_config.json's max_seq_length (what sentence-transformers
    // truncates to), else tokenizer_config.json's model_max_length, else 512.
    // Throws ModelError for a missing or malformed file, Unsupported for what this tokenizer does
    // not do (BPE or Unigram models, other normalizers, accents stripped without lower-casing).
    static BertTokenizer from_tokenizer_json(const std::string& path);

    // The word pieces of `text`, without [CLS]/[SEP] and without truncation.
    // Throws InvalidArgument when text is not valid UTF-8.
    std::vector<std::string> tokenize(std::string_view text) const;
    // [CLS] + pieces + [SEP], the pieces cut so that the whole is at most max_length tokens.
    // Throws InvalidArgument for max_length < 2 or text that is not valid UTF-8.
    Encoding encode(std::string_view text, size_t max_length = 512) const;
    // Encodes each text and pads them to the longest: a Batch of i64 tensors "input_ids",
    // "attention_mask" (0 over padding) and "token_type_ids", each [texts.size(), longest], on
    // the CPU. Throws InvalidArgument for an empty list, naming the text that is not valid UTF-8.
    Batch encode_batch(const std::vector<std::string>& texts, size_t max_length = 512) const;

    // The id of a token of the vocabulary; throws InvalidArgument when it has none.
    int64_t token_id(std::string_view token) const;
    // The token with that id; throws InvalidArgument when out of range.
    const std::string& token(int64_t id) const;
    size_t vocab_size() const;
    bool lower_case() const;
    int64_t pad_id() const;
    // The longest encoding the model takes (see from_tokenizer_json; 512 from a vocabulary file).
    size_t max_length() const;

private:
    struct Impl;
    explicit BertTokenizer(std::shared_ptr<const Impl> impl);
    std::shared_ptr<const Impl> impl_;  // immutable, so copies share it and threads may too
};

}  // namespace infer
