#include "core/text/hf_tokenizer_json.hpp"

#include "core/io/json_file.hpp"

#include <infer/error.hpp>

namespace infer::text {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool flag(const json& object, const char* key, bool fallback) {
    const json& value = member(object, key);
    return value.is_boolean() ? value.get<bool>() : fallback;
}

// A token named in tokenizer_config.json: "</s>", {"content": "</s>", ...}, or null (none).
std::optional<std::string> token_name(const json& value, const char* key, const std::string& file) {
    if (value.is_null()) return std::nullopt;
    if (value.is_string()) return value.get<std::string>();
    if (value.is_object() && member(value, "content").is_string()) return value["content"].get<std::string>();
    throw ModelError(file + ": \"" + key + "\" is neither a string nor an object with a \"content\" string");
}

}  // namespace

fs::path tokenizer_json_path(const std::string& path) {
    return fs::is_directory(path) ? fs::path(path) / "tokenizer.json" : fs::path(path);
}

std::string type_of(const json& component) {
    const json& type = member(component, "type");
    return type.is_string() ? type.get<std::string>() : "none";
}

const json& member(const json& object, const char* key) {
    static const json null_value;
    return object.is_object() && object.contains(key) ? object[key] : null_value;
}

std::vector<AddedToken> read_added_tokens(const json& tokenizer, const std::string& file) {
    const json& entries = member(tokenizer, "added_tokens");
    if (entries.is_null()) return {};
    if (!entries.is_array()) throw ModelError(file + ": \"added_tokens\" is not an array");
    std::vector<AddedToken> tokens;
    for (const json& entry : entries) {
        if (!member(entry, "content").is_string() || !member(entry, "id").is_number_integer())
            throw ModelError(file + ": an added token lacks a \"content\" string or an integer \"id\"");
        AddedToken token;
        token.content = entry["content"].get<std::string>();
        token.id = entry["id"].get<int64_t>();
        token.special = flag(entry, "special", false);
        token.normalized = flag(entry, "normalized", !token.special);
        token.lstrip = flag(entry, "lstrip", false);
        token.rstrip = flag(entry, "rstrip", false);
        if (flag(entry, "single_word", false))
            throw Unsupported(file + ": added token '" + token.content + "' is single_word (not supported)");
        tokens.push_back(std::move(token));
    }
    return tokens;
}

SpecialTemplate read_template(const json& post_processor, const std::string& file) {
    const std::string type = type_of(post_processor);
    if (type == "none" || type == "ByteLevel") return {};
    if (type != "TemplateProcessing")
        throw Unsupported(file + ": post-processor '" + type + "' (only ByteLevel and TemplateProcessing are supported)");
    const json& single = member(post_processor, "single");
    const json& specials = member(post_processor, "special_tokens");
    if (!single.is_array()) throw ModelError(file + ": TemplateProcessing without a \"single\" template");
    SpecialTemplate result;
    bool after_sequence = false;
    for (const json& item : single) {
        if (item.contains("Sequence")) {
            if (after_sequence) throw ModelError(file + ": the \"single\" template names its sequence twice");
            after_sequence = true;
            continue;
        }
        const json& name = member(member(item, "SpecialToken"), "id");
        if (!name.is_string())
            throw ModelError(file + ": a \"single\" template item is neither Sequence nor SpecialToken");
        const json& ids = member(member(specials, name.get<std::string>().c_str()), "ids");
        if (!ids.is_array())
            throw ModelError(file + ": the template's special token '" + name.get<std::string>() +
                             "' has no \"ids\" in \"special_tokens\"");
        for (const json& id : ids) {
            if (!id.is_number_integer()) throw ModelError(file + ": a template special token id is not an integer");
            (after_sequence ? result.after : result.before).push_back(id.get<int64_t>());
        }
    }
    return result;
}

void read_special_roles(const fs::path& folder, const SpecialTokenNames& defaults, Vocabulary& vocabulary) {
    const fs::path config_path = folder / "tokenizer_config.json";
    const bool has_config = fs::exists(config_path);
    const json config = has_config ? detail::read_json_object(config_path) : json::object();
    const std::string file = config_path.string();
    const auto role = [&](const char* key, const char* fallback) -> std::optional<int64_t> {
        if (!has_config) return fallback ? vocabulary.find(fallback) : std::nullopt;
        const auto name = token_name(member(config, key), key, file);
        if (!name) return std::nullopt;
        const auto id = vocabulary.find(*name);
        if (!id) throw ModelError(file + ": " + key + " '" + *name + "' is not in the vocabulary");
        return id;
    };
    vocabulary.eos = role("eos_token", defaults.eos);
    vocabulary.bos = role("bos_token", defaults.bos);
    vocabulary.pad = role("pad_token", defaults.pad);
    vocabulary.unk = role("unk_token", defaults.unk);
}

std::string decode_base64(std::string_view text, const std::string& what) {
    std::string bytes;
    bytes.reserve(text.size() / 4 * 3);
    uint32_t accumulator = 0;
    int bits = 0;
    for (char c : text) {
        int value;
        if (c >= 'A' && c <= 'Z') value = c - 'A';
        else if (c >= 'a' && c <= 'z') value = c - 'a' + 26;
        else if (c >= '0' && c <= '9') value = c - '0' + 52;
        else if (c == '+') value = 62;
        else if (c == '/') value = 63;
        else if (c == '=') break;
        else throw ModelError(what + " is not base64 (it has the character '" + std::string(1, c) + "')");
        accumulator = (accumulator << 6) | static_cast<uint32_t>(value);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            bytes.push_back(static_cast<char>((accumulator >> bits) & 0xFF));
        }
    }
    return bytes;
}

}  // namespace infer::text
