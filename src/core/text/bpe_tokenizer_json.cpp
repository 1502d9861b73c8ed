// BpeTokenizer's loaders: Hugging Face's tokenizer.json, and GPT-2's vocab.json + merges.txt.
// They accept only what BpeTokenizer does the same way as Hugging Face, so that a file they take
// gives its ids.
#include "core/text/bpe_tokenizer_impl.hpp"

#include "core/io/json_file.hpp"

#include <infer/error.hpp>

#include <fstream>

namespace infer {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using text::member;
using text::type_of;

// GPT-2's one special token: end of text, also its bos and unk (GPT2Tokenizer's defaults).
constexpr const char* kEndOfText = "<|endoftext|>";

void add_model_vocabulary(const json& vocab, text::Vocabulary& vocabulary, const std::string& source) {
    if (!vocab.is_object()) throw ModelError(source + ": the BPE vocabulary is not a JSON object of token: id");
    for (const auto& [token, id] : vocab.items()) {
        if (!id.is_number_integer()) throw ModelError(source + ": token '" + token + "' has no integer id");
        vocabulary.add(token, id.get<int64_t>(), source);
    }
}

std::vector<std::pair<std::string, std::string>> merges_of(const json& merges, const std::string& file) {
    if (!merges.is_array()) throw ModelError(file + ": the BPE model has no \"merges\" array");
    std::vector<std::pair<std::string, std::string>> pairs;
    pairs.reserve(merges.size());
    for (const json& merge : merges) {
        // Written as "a b" by tokenizers before 0.20, as ["a", "b"] since (tokens may hold spaces).
        if (merge.is_string()) {
            const std::string line = merge.get<std::string>();
            const size_t space = line.find(' ');
            if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
                throw ModelError(file + ": merge " + std::to_string(pairs.size()) + " '" + line +
                                 "' is not two tokens separated by one space");
            pairs.emplace_back(line.substr(0, space), line.substr(space + 1));
        } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
            pairs.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
        } else {
            throw ModelError(file + ": merge " + std::to_string(pairs.size()) + " is neither \"a b\" nor [\"a\", \"b\"]");
        }
    }
    return pairs;
}

bool flag(const json& object, const char* key, bool fallback) {
    const json& value = member(object, key);
    return value.is_boolean() ? value.get<bool>() : fallback;
}

// A string setting that this tokenizer only supports empty (or null).
void require_empty(const json& model, const char* key, const std::string& file) {
    const json& value = member(model, key);
    if (!value.is_null() && !(value.is_string() && value.get<std::string>().empty()))
        throw Unsupported(file + ": BPE with a " + key + " (only byte-level BPE without one is supported)");
}

text::BpeSettings read_tokenizer_json(const std::string& path) {
    const fs::path file_path = text::tokenizer_json_path(path);
    const std::string file = file_path.string();
    const json tokenizer = detail::read_json_object(file_path);
    const json& model = member(tokenizer, "model");
    if (type_of(model) != "BPE")
        throw Unsupported(file + ": model type '" + type_of(model) + "' (BpeTokenizer reads BPE models)");
    if (!member(model, "dropout").is_null())
        throw Unsupported(file + ": BPE dropout (random merges) is not supported");
    require_empty(model, "continuing_subword_prefix", file);
    require_empty(model, "end_of_word_suffix", file);
    if (flag(model, "byte_fallback", false)) throw Unsupported(file + ": BPE byte_fallback is not supported");
    if (type_of(member(tokenizer, "normalizer")) != "none")
        throw Unsupported(file + ": normalizer '" + type_of(tokenizer["normalizer"]) +
                          "' (BpeTokenizer supports byte-level BPE without a normalizer)");
    const json& pre_tokenizer = member(tokenizer, "pre_tokenizer");
    if (type_of(pre_tokenizer) != "ByteLevel")
        throw Unsupported(file + ": pre-tokenizer '" + type_of(pre_tokenizer) + "' (only ByteLevel is supported)");
    if (type_of(member(tokenizer, "decoder")) != "ByteLevel")
        throw Unsupported(file + ": decoder '" + type_of(member(tokenizer, "decoder")) +
                          "' (only ByteLevel is supported)");

    text::BpeSettings settings;
    settings.source = file;
    add_model_vocabulary(member(model, "vocab"), settings.vocabulary, file);
    settings.added_tokens = text::read_added_tokens(tokenizer, file);
    for (const text::AddedToken& token : settings.added_tokens) settings.vocabulary.add(token.content, token.id, file);
    settings.vocabulary.check_dense(file);
    for (const text::AddedToken& token : settings.added_tokens)
        if (token.special) settings.vocabulary.mark_special(token.id);
    settings.merges = merges_of(member(model, "merges"), file);
    if (const json& unk = member(model, "unk_token"); unk.is_string()) {
        settings.options.unk_id = settings.vocabulary.find(unk.get<std::string>());
        if (!settings.options.unk_id)
            throw ModelError(file + ": the BPE unk_token '" + unk.get<std::string>() + "' is not in the vocabulary");
    }
    settings.options.fuse_unk = flag(model, "fuse_unk", false);
    settings.options.ignore_merges = flag(model, "ignore_merges", false);
    settings.add_prefix_space = flag(pre_tokenizer, "add_prefix_space", false);
    settings.use_regex = flag(pre_tokenizer, "use_regex", true);
    settings.special_template = text::read_template(member(tokenizer, "post_processor"), file);
    text::read_special_roles(file_path.parent_path(), {kEndOfText, kEndOfText, nullptr, kEndOfText},
                             settings.vocabulary);
    return settings;
}

text::BpeSettings read_vocab_merges(const std::string& vocab_json, const std::string& merges_txt) {
    text::BpeSettings settings;
    settings.source = vocab_json + " and " + merges_txt;
    add_model_vocabulary(detail::read_json_object(vocab_json), settings.vocabulary, vocab_json);
    settings.vocabulary.check_dense(vocab_json);

    std::ifstream merges_file(merges_txt, std::ios::binary);
    if (!merges_file) throw ModelError("cannot read the merges file '" + merges_txt + "'");
    std::string line;
    for (size_t line_number = 1; std::getline(merges_file, line); ++line_number) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line.starts_with("#version")) continue;
        const size_t space = line.find(' ');
        if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
            throw ModelError(merges_txt + ": line " + std::to_string(line_number) + " '" + line +
                             "' is not two tokens separated by one space");
        settings.merges.emplace_back(line.substr(0, space), line.substr(space + 1));
    }
    if (merges_file.bad()) throw ModelError("error while reading the merges file '" + merges_txt + "'");

    if (const auto end_of_text = settings.vocabulary.find(kEndOfText)) {
        settings.vocabulary.mark_special(*end_of_text);
        settings.added_tokens.push_back({kEndOfText, *end_of_text, true, false, false, false});
        settings.vocabulary.eos = settings.vocabulary.bos = settings.vocabulary.unk = end_of_text;
    }
    return settings;
}

}  // namespace

BpeTokenizer BpeTokenizer::from_tokenizer_json(const std::string& path) {
    try {
        return BpeTokenizer(std::make_shared<const Impl>(read_tokenizer_json(path)));
    } catch (const json::exception& e) {
        throw ModelError(path + ": malformed tokenizer configuration (" + e.what() + ")");
    }
}

BpeTokenizer BpeTokenizer::from_vocab_merges(const std::string& vocab_json, const std::string& merges_txt) {
    try {
        return BpeTokenizer(std::make_shared<const Impl>(read_vocab_merges(vocab_json, merges_txt)));
    } catch (const json::exception& e) {
        throw ModelError(vocab_json + ": malformed vocabulary (" + e.what() + ")");
    }
}

}  // namespace infer
