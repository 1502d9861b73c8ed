#pragma once
// A Hugging Face model folder as the architecture builders see it: config.json, the safetensors
// checkpoint, and the weights by their names in transformers' modules. Every lookup that fails
// is a ModelError naming the folder and the key or tensor, so a builder reads like the model's
// forward() and leaves the checking here.
#include <infer/safetensors.hpp>
#include <infer/tensor.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace infer::detail {

class HfCheckpoint {
public:
    // Reads folder/config.json and opens the checkpoint in the folder.
    explicit HfCheckpoint(const std::filesystem::path& folder);

    const std::filesystem::path& folder() const { return folder_; }
    const nlohmann::json& config() const { return config_; }
    std::string model_type() const;  // config.json's "model_type"

    // Integer, float and string settings of config.json; the ones without a default are required.
    int64_t config_int(const std::string& key) const;
    int64_t config_int(const std::string& key, int64_t fallback) const;
    double config_float(const std::string& key, double fallback) const;
    std::string config_string(const std::string& key, const std::string& fallback) const;

    // Weight names are those of the bare model ("embeddings.word_embeddings.weight"); a
    // checkpoint of a model with a head stores them under the base model's attribute
    // ("bert.embeddings..."), which use_prefix_of finds from one name that must exist.
    void use_prefix_of(const std::vector<std::string>& prefixes, const std::string& probe);
    bool has(const std::string& name) const;
    // The weight in f32 (f16 and bf16 checkpoints are widened: the session lowers precision
    // itself), zero-copy when it is f32 already. Throws ModelError when absent or when its shape is
    // not `expected` (an empty `expected` accepts any).
    Tensor weight(const std::string& name, const std::vector<int64_t>& expected = {}) const;
    // A Linear layer's weight [out, in] as the [in, out] right operand of MatMul (what PyTorch's
    // export stores after constant folding the transpose).
    Tensor linear_weight(const std::string& name, int64_t in, int64_t out) const;

private:
    std::filesystem::path folder_;
    nlohmann::json config_;
    Safetensors weights_;
    std::string prefix_;
};

}  // namespace infer::detail
