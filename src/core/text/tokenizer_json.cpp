// BertTokenizer::from_tokenizer_json: a Hugging Face tokenizer.json (the tokenizers library's
// serialisation) read into the WordPiece tokenizer, accepting only what that tokenizer does the
// same way, so that a folder it accepts gives HuggingFace's ids.
#include "core/io/json_file.hpp"

#include <infer/error.hpp>
#include <infer/tokenizer.hpp>

#include <optional>

namespace infer {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Larger vocabularies are not BERT's; the bound keeps a hostile id from allocating gigabytes.
constexpr int64_t kMaxVocabulary = 10'000'000;
// Configurations write "no limit" as 1e30 (transformers' VERY_LARGE_INTEGER).
constexpr int64_t kMaxSensibleLength = 1'000'000;

bool flag(const json& object, const char* key, bool fallback) {
    return object.contains(key) && object[key].is_boolean() ? object[key].get<bool>() : fallback;
}

std::string type_of(const json& object) {
    return object.is_object() && object.contains("type") && object["type"].is_string() ? object["type"].get<std::string>()
                                                                                      : "none";
}

// Whether BertNormalizer's settings are this tokenizer's: cleaning and CJK spacing always on,
// accents stripped exactly when lower-casing (strip_accents null means "as lowercase").
bool lower_case_of(const json& normalizer, const std::string& file) {
    if (type_of(normalizer) != "BertNormalizer")
        throw Unsupported(file + ": normalizer '" + type_of(normalizer) + "' (only BertNormalizer is supported)");
    const bool lower = flag(normalizer, "lowercase", true);
    const bool strip = normalizer.contains("strip_accents") && normalizer["strip_accents"].is_boolean()
                           ? normalizer["strip_accents"].get<bool>()
                           : lower;
    if (strip != lower)
        throw Unsupported(file + ": strip_accents " + (strip ? "true" : "false") + " with lowercase " +
                          (lower ? "true" : "false") + " (this tokenizer strips accents exactly when lower-casing)");
    if (!flag(normalizer, "clean_text", true) || !flag(normalizer, "handle_chinese_chars", true))
        throw Unsupported(file + ": BertNormalizer without clean_text or handle_chinese_chars");
    return lower;
}

// The tokens in id order, from the model's vocabulary and the added tokens.
std::vector<std::string> tokens_of(const json& model, const json& added, const std::string& file) {
    if (!model.contains("vocab") || !model["vocab"].is_object())
        throw ModelError(file + ": the WordPiece model has no \"vocab\" object");
    std::vector<std::string> tokens;
    std::vector<bool> seen;
    const auto place = [&](const std::string& token, const json& id_value) {
        if (!id_value.is_number_integer() || id_value.get<int64_t>() < 0 || id_value.get<int64_t>() >= kMaxVocabulary)
            throw ModelError(file + ": token '" + token + "' has no valid id");
        const auto id = static_cast<size_t>(id_value.get<int64_t>());
        if (id >= tokens.size()) {
            tokens.resize(id + 1);
            seen.resize(id + 1, false);
        }
        if (seen[id] && tokens[id] != token)
            throw ModelError(file + ": id " + std::to_string(id) + " is both '" + tokens[id] + "' and '" + token + "'");
        tokens[id] = token;
        seen[id] = true;
    };
    for (const auto& [token, id] : model["vocab"].items()) place(token, id);
    if (added.is_array())
        for (const json& token : added)
            if (token.is_object() && token.contains("content") && token["content"].is_string() && token.contains("id"))
                place(token["content"].get<std::string>(), token["id"]);
    for (size_t id = 0; id < seen.size(); ++id)
        if (!seen[id]) throw ModelError(file + ": no token has id " + std::to_string(id) + " (the ids must be 0..n-1)");
    return tokens;
}

// A positive integer setting from an optional JSON file of the folder, if it has a sensible one.
std::optional<size_t> length_setting(const fs::path& path, const char* key) {
    if (!fs::exists(path)) return std::nullopt;
    const json config = detail::read_json_object(path);
    if (!config.contains(key) || !config[key].is_number_integer()) return std::nullopt;
    const int64_t value = config[key].get<int64_t>();
    if (value < 2 || value > kMaxSensibleLength) return std::nullopt;
    return static_cast<size_t>(value);
}

BertTokenizer read_tokenizer_json(const std::string& path) {
    const fs::path file = fs::is_directory(path) ? fs::path(path) / "tokenizer.json" : fs::path(path);
    const std::string name = file.string();
    const json tokenizer = detail::read_json_object(file);
    const json& model = tokenizer.contains("model") ? tokenizer["model"] : json();
    if (type_of(model) != "WordPiece")
        throw Unsupported(name + ": model type '" + type_of(model) + "' (only WordPiece is supported)");
    if (model.value("continuing_subword_prefix", std::string("##")) != "##" ||
        model.value("max_input_chars_per_word", 100) != 100)
        throw Unsupported(name + ": WordPiece with a prefix other than ## or a word limit other than 100");
    const bool lower_case = lower_case_of(tokenizer.contains("normalizer") ? tokenizer["normalizer"] : json(), name);
    const json& pre_tokenizer = tokenizer.contains("pre_tokenizer") ? tokenizer["pre_tokenizer"] : json();
    if (type_of(pre_tokenizer) != "BertPreTokenizer")
        throw Unsupported(name + ": pre-tokenizer '" + type_of(pre_tokenizer) + "' (only BertPreTokenizer is supported)");

    const fs::path folder = file.parent_path();
    size_t max_length = 512;
    if (const auto length = length_setting(folder / "sentence_bert_config.json", "max_seq_length")) max_length = *length;
    else if (const auto limit = length_setting(folder / "tokenizer_config.json", "model_max_length")) max_length = *limit;
    return BertTokenizer::from_vocab(
        tokens_of(model, tokenizer.contains("added_tokens") ? tokenizer["added_tokens"] : json(), name), lower_case,
        name, max_length);
}

}  // namespace

BertTokenizer BertTokenizer::from_tokenizer_json(const std::string& path) {
    try {
        return read_tokenizer_json(path);
    } catch (const json::exception& e) {
        // A field of the wrong JSON type met by a value() lookup: still the file's fault.
        throw ModelError(path + ": malformed tokenizer configuration (" + e.what() + ")");
    }
}

}  // namespace infer
