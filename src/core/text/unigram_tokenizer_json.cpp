// UnigramTokenizer's loader: a Hugging Face tokenizer.json with a Unigram model, as transformers
// writes it for T5 (and converts SentencePiece models into). It accepts only what
// UnigramTokenizer does the same way as Hugging Face, so that a file it takes gives its ids.
#include "core/text/unigram_tokenizer_impl.hpp"

#include "core/io/json_file.hpp"

#include <infer/error.hpp>

namespace infer {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using text::member;
using text::type_of;

std::optional<text::PrecompiledNormalizer> normalizer_of(const json& normalizer, const std::string& file) {
    std::string type = type_of(normalizer);
    const json* precompiled = &normalizer;
    // transformers has written the charsmap alone and inside a one-step Sequence.
    if (type == "Sequence") {
        const json& steps = member(normalizer, "normalizers");
        if (!steps.is_array() || steps.size() > 1)
            throw Unsupported(file + ": a Sequence of normalizers (only Precompiled alone is supported)");
        if (steps.empty()) return std::nullopt;
        precompiled = &steps[0];
        type = type_of(*precompiled);
    }
    if (type == "none") return std::nullopt;
    if (type != "Precompiled")
        throw Unsupported(file + ": normalizer '" + type + "' (only Precompiled is supported)");
    const json& charsmap = member(*precompiled, "precompiled_charsmap");
    if (charsmap.is_null() || (charsmap.is_string() && charsmap.get<std::string>().empty())) return std::nullopt;
    if (!charsmap.is_string()) throw ModelError(file + ": precompiled_charsmap is not a base64 string");
    const std::string what = file + ": precompiled_charsmap";
    return text::PrecompiledNormalizer(text::decode_base64(charsmap.get<std::string>(), what), what);
}

text::Metaspace metaspace_of(const json& settings, const std::string& file) {
    text::Metaspace metaspace;
    const json& replacement = member(settings, "replacement");
    if (replacement.is_string()) metaspace.replacement = replacement.get<std::string>();
    if (metaspace.replacement.empty()) throw ModelError(file + ": Metaspace with an empty replacement");
    if (const json& scheme = member(settings, "prepend_scheme"); scheme.is_string()) {
        const std::string name = scheme.get<std::string>();
        if (name == "first")
            throw Unsupported(file + ": Metaspace prepend_scheme 'first' (only 'always' and 'never' are supported)");
        if (name != "always" && name != "never")
            throw ModelError(file + ": Metaspace prepend_scheme '" + name + "' is not always, first or never");
        metaspace.prepend = name == "always";
    } else if (const json& add = member(settings, "add_prefix_space"); add.is_boolean()) {
        metaspace.prepend = add.get<bool>();  // tokenizers before 0.14
    }
    if (const json& split = member(settings, "split"); split.is_boolean()) metaspace.split = split.get<bool>();
    return metaspace;
}

// Metaspace alone, or WhitespaceSplit then Metaspace (T5's).
void read_pre_tokenizer(const json& pre_tokenizer, const std::string& file, text::UnigramSettings& settings) {
    const json* metaspace = &pre_tokenizer;
    if (type_of(pre_tokenizer) == "Sequence") {
        const json& steps = member(pre_tokenizer, "pretokenizers");
        const bool supported = steps.is_array() &&
                               ((steps.size() == 1 && type_of(steps[0]) == "Metaspace") ||
                                (steps.size() == 2 && type_of(steps[0]) == "WhitespaceSplit" &&
                                 type_of(steps[1]) == "Metaspace"));
        if (!supported)
            throw Unsupported(file + ": this Sequence of pre-tokenizers (only Metaspace, alone or after "
                                     "WhitespaceSplit, is supported)");
        settings.whitespace_split = steps.size() == 2;
        metaspace = &steps[steps.size() - 1];
    } else if (type_of(pre_tokenizer) != "Metaspace") {
        throw Unsupported(file + ": pre-tokenizer '" + type_of(pre_tokenizer) + "' (only Metaspace is supported)");
    }
    settings.metaspace = metaspace_of(*metaspace, file);
}

text::UnigramSettings read_tokenizer_json(const std::string& path) {
    const fs::path file_path = text::tokenizer_json_path(path);
    const std::string file = file_path.string();
    const json tokenizer = detail::read_json_object(file_path);
    const json& model = member(tokenizer, "model");
    if (type_of(model) != "Unigram")
        throw Unsupported(file + ": model type '" + type_of(model) + "' (UnigramTokenizer reads Unigram models)");
    if (const json& fallback = member(model, "byte_fallback"); fallback.is_boolean() && fallback.get<bool>())
        throw Unsupported(file + ": Unigram byte_fallback is not supported");
    if (!member(model, "unk_id").is_number_integer())
        throw Unsupported(file + ": a Unigram model without an unk_id (not supported)");
    const json& decoder = member(tokenizer, "decoder");
    if (type_of(decoder) != "Metaspace")
        throw Unsupported(file + ": decoder '" + type_of(decoder) + "' (only Metaspace is supported)");

    text::UnigramSettings settings;
    settings.source = file;
    const json& vocab = member(model, "vocab");
    if (!vocab.is_array()) throw ModelError(file + ": the Unigram model has no \"vocab\" array");
    for (const json& entry : vocab) {
        if (!entry.is_array() || entry.size() != 2 || !entry[0].is_string() || !entry[1].is_number())
            throw ModelError(file + ": Unigram vocabulary entry " + std::to_string(settings.pieces.size()) +
                             " is not [piece, score]");
        settings.vocabulary.add(entry[0].get<std::string>(), static_cast<int64_t>(settings.pieces.size()), file);
        settings.pieces.emplace_back(entry[0].get<std::string>(), entry[1].get<double>());
    }
    settings.unk_piece = model["unk_id"].get<int64_t>();
    settings.fuse_unk = member(model, "fuse_unk").is_boolean() ? model["fuse_unk"].get<bool>() : true;
    settings.added_tokens = text::read_added_tokens(tokenizer, file);
    for (const text::AddedToken& token : settings.added_tokens) settings.vocabulary.add(token.content, token.id, file);
    settings.vocabulary.check_dense(file);
    for (const text::AddedToken& token : settings.added_tokens)
        if (token.special) settings.vocabulary.mark_special(token.id);
    settings.normalizer = normalizer_of(member(tokenizer, "normalizer"), file);
    read_pre_tokenizer(member(tokenizer, "pre_tokenizer"), file, settings);
    settings.decoder = metaspace_of(decoder, file);
    settings.special_template = text::read_template(member(tokenizer, "post_processor"), file);
    const std::string unk = settings.pieces.empty() || settings.unk_piece < 0 ||
                                    static_cast<size_t>(settings.unk_piece) >= settings.pieces.size()
                                ? std::string()
                                : settings.pieces[static_cast<size_t>(settings.unk_piece)].first;
    text::read_special_roles(file_path.parent_path(), {"</s>", nullptr, "<pad>", unk.empty() ? nullptr : unk.c_str()},
                             settings.vocabulary);
    return settings;
}

}  // namespace

UnigramTokenizer UnigramTokenizer::from_tokenizer_json(const std::string& path) {
    try {
        return UnigramTokenizer(std::make_shared<const Impl>(read_tokenizer_json(path)));
    } catch (const json::exception& e) {
        throw ModelError(path + ": malformed tokenizer configuration (" + e.what() + ")");
    }
}

}  // namespace infer
