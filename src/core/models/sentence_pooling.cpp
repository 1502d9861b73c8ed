// sentence-transformers' Pooling and Normalize as graph ops.
#include "core/models/sentence_pooling.hpp"

#include "core/io/json_file.hpp"

#include <infer/error.hpp>


namespace infer::detail {

namespace {

namespace fs = std::filesystem;

Value f32_scalar(GraphBuilder& b, float value) {
    return b.constant(Tensor::from_vector(std::vector<float>{value}, Shape{}));
}

// The mean over the positions where the mask is 1, as sentence-transformers computes it: the
// masked sum divided by the count, the count kept from zero by 1e-9.
Value mean_pooling(GraphBuilder& b, Value hidden, Value mask) {
    const Value weights = b.cast(b.op1("Unsqueeze", {mask, b.constant_i64({2})}), DType::f32);
    const Value axis = b.constant_i64({1});
    const Attributes drop{{"keepdims", int64_t{0}}};
    const Value sum = b.op1("ReduceSum", {b.mul(hidden, weights), axis}, drop);
    const Value count = b.op1("Max", {b.op1("ReduceSum", {weights, axis}, drop), f32_scalar(b, 1e-9f)});
    return b.div(sum, count);
}

// torch.nn.functional.normalize: x / max(‖x‖₂, 1e-12) over the last axis.
Value normalize(GraphBuilder& b, Value x) {
    const Value norm = b.op1("ReduceL2", {x, b.constant_i64({-1})}, {{"keepdims", int64_t{1}}});
    return b.div(x, b.op1("Max", {norm, f32_scalar(b, 1e-12f)}));
}

Value pooling(GraphBuilder& b, const fs::path& config_path, Value hidden, Value mask) {
    const nlohmann::json config = read_json_object(config_path);
    const auto mode_on = [&](const char* key) { return config.contains(key) && config[key].is_boolean() && config[key].get<bool>(); };
    std::vector<std::string> modes;
    for (const char* key : {"pooling_mode_cls_token", "pooling_mode_mean_tokens", "pooling_mode_max_tokens",
                            "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens",
                            "pooling_mode_lasttoken"})
        if (mode_on(key)) modes.emplace_back(key);
    if (modes.size() != 1)
        throw Unsupported(config_path.string() + ": " + std::to_string(modes.size()) +
                          " pooling modes on; infer pools with exactly one, mean or CLS");
    if (modes[0] == "pooling_mode_mean_tokens") return mean_pooling(b, hidden, mask);
    if (modes[0] == "pooling_mode_cls_token")
        return b.op1("Gather", {hidden, b.constant(Tensor::from_vector(std::vector<int64_t>{0}, Shape{}))},
                     {{"axis", int64_t{1}}});
    throw Unsupported(config_path.string() + ": " + modes[0] + " is not supported (mean or CLS pooling only)");
}

}  // namespace

std::optional<Value> add_sentence_pooling(GraphBuilder& b, const fs::path& folder, Value hidden, Value mask) {
    const fs::path modules_path = folder / "modules.json";
    if (!fs::exists(modules_path)) return std::nullopt;
    const nlohmann::json modules = read_json_file(modules_path);
    if (!modules.is_array()) throw ModelError(modules_path.string() + " is not a JSON array of modules");
    std::optional<Value> embedding;
    for (const nlohmann::json& module : modules) {
        const std::string type = module.is_object() ? module.value("type", "") : "";
        const std::string path = module.is_object() ? module.value("path", "") : "";
        if (type.ends_with(".Transformer")) continue;  // the encoder, built already
        if (type.ends_with(".Pooling")) {
            if (path.empty() || path.find("..") != std::string::npos)
                throw ModelError(modules_path.string() + ": the Pooling module has no folder of its own");
            embedding = pooling(b, folder / path / "config.json", hidden, mask);
        } else if (type.ends_with(".Normalize")) {
            if (!embedding) throw Unsupported(modules_path.string() + ": Normalize before any Pooling");
            embedding = normalize(b, *embedding);
        } else {
            throw Unsupported(modules_path.string() + ": module type '" + type +
                              "' is not supported (Transformer, Pooling and Normalize are)");
        }
    }
    return embedding;
}

}  // namespace infer::detail
