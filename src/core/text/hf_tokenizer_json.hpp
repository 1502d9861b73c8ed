#pragma once
// What the generation tokenizers read alike from Hugging Face's files: the tokenizer.json of a
// path (a file or its folder), its added tokens and post-processor template, and the roles of
// special tokens from tokenizer_config.json (transformers' file beside it).
#include "core/text/added_tokens.hpp"
#include "core/text/vocabulary.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace infer::text {

// tokenizer.json itself, or inside the folder `path` names.
std::filesystem::path tokenizer_json_path(const std::string& path);

// The "type" of a component object, or "none" (JSON null, or no type).
std::string type_of(const nlohmann::json& component);
// object[key] when present, else JSON null.
const nlohmann::json& member(const nlohmann::json& object, const char* key);

// The "added_tokens" array. Throws ModelError for a malformed entry, Unsupported for single_word.
std::vector<AddedToken> read_added_tokens(const nlohmann::json& tokenizer, const std::string& file);

// The special tokens a post-processor puts around one encoded text.
struct SpecialTemplate {
    std::vector<int64_t> before, after;
};
// null and ByteLevel add nothing; TemplateProcessing's "single" template is read; anything else
// (RobertaProcessing, BertProcessing, Sequence) is Unsupported.
SpecialTemplate read_template(const nlohmann::json& post_processor, const std::string& file);

// Sets eos, bos, pad and unk from tokenizer_config.json in `folder` when it names them (a
// string, or an object with "content"); when there is no such file, from the defaults given
// (each used only if the vocabulary has it). Throws ModelError for a malformed file or a token
// it names that the vocabulary lacks.
struct SpecialTokenNames {
    const char* eos = nullptr;
    const char* bos = nullptr;
    const char* pad = nullptr;
    const char* unk = nullptr;
};
void read_special_roles(const std::filesystem::path& folder, const SpecialTokenNames& defaults, Vocabulary& vocabulary);

// Bytes from standard base64 (how tokenizer.json stores the precompiled charsmap). Throws
// ModelError naming `what` for a character outside the alphabet.
std::string decode_base64(std::string_view text, const std::string& what);

}  // namespace infer::text
