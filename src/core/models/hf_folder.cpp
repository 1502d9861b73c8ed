// The dispatcher from config.json's model_type to the architecture's builder.
#include "core/models/hf_folder.hpp"

#include "core/models/encoder_builders.hpp"
#include "core/models/sentence_pooling.hpp"

#include <infer/error.hpp>

#include <map>

namespace infer::detail {

namespace fs = std::filesystem;

namespace {

using Builder = EncoderGraph (*)(GraphBuilder&, HfCheckpoint&);

const std::map<std::string, Builder>& builders() {
    static const std::map<std::string, Builder> table{
        {"bert", build_bert}, {"roberta", build_bert}, {"xlm-roberta", build_bert}, {"distilbert", build_distilbert},
        {"gpt2", build_gpt2}};
    return table;
}

}  // namespace

bool is_hf_model_folder(const fs::path& folder) {
    std::error_code error;
    return fs::is_directory(folder, error) && fs::exists(folder / "config.json", error) &&
           (fs::exists(folder / "model.safetensors", error) || fs::exists(folder / "model.safetensors.index.json", error));
}

namespace {

Graph build_from_checkpoint(const fs::path& folder) {
    HfCheckpoint checkpoint(folder);
    const std::string type = checkpoint.model_type();
    const auto found = builders().find(type);
    if (found == builders().end()) {
        std::string known;
        for (const auto& [name, builder] : builders()) known += (known.empty() ? "" : ", ") + name;
        throw Unsupported(folder.string() + ": model_type '" + type + "' cannot be built from its checkpoint (" +
                          known + " can)");
    }
    GraphBuilder builder(folder.filename().empty() ? folder.parent_path().filename().string()
                                                   : folder.filename().string());
    const EncoderGraph encoder = found->second(builder, checkpoint);
    builder.output("last_hidden_state", encoder.last_hidden_state);
    if (encoder.logits.present()) builder.output("logits", encoder.logits);
    if (const auto embedding = add_sentence_pooling(builder, folder, encoder.last_hidden_state, encoder.attention_mask))
        builder.output("sentence_embedding", *embedding);
    return builder.build();
}

}  // namespace

Graph load_hf_model_folder(const fs::path& folder) {
    try {
        return build_from_checkpoint(folder);
    } catch (const nlohmann::json::exception& e) {
        // A setting of the wrong JSON type met by a value() lookup: still the folder's fault.
        throw ModelError(folder.string() + ": malformed configuration (" + e.what() + ")");
    }
}

}  // namespace infer::detail
