// HfCheckpoint: config.json settings and checkpoint weights, each failure a ModelError that
// names the folder.
#include "core/models/hf_checkpoint.hpp"

#include "core/io/json_file.hpp"

#include <infer/error.hpp>

namespace infer::detail {

namespace {

std::string shape_text(const std::vector<int64_t>& dims) { return Shape(dims).to_string(); }

}  // namespace

HfCheckpoint::HfCheckpoint(const std::filesystem::path& folder)
    : folder_(folder), config_(read_json_object(folder / "config.json")), weights_(Safetensors::open(folder.string())) {}

std::string HfCheckpoint::model_type() const { return config_string("model_type", ""); }

int64_t HfCheckpoint::config_int(const std::string& key) const {
    if (!config_.contains(key))
        throw ModelError((folder_ / "config.json").string() + " has no \"" + key + "\"");
    return config_int(key, 0);
}

int64_t HfCheckpoint::config_int(const std::string& key, int64_t fallback) const {
    if (!config_.contains(key) || config_[key].is_null()) return fallback;
    if (!config_[key].is_number_integer())
        throw ModelError((folder_ / "config.json").string() + ": \"" + key + "\" is not an integer");
    return config_[key].get<int64_t>();
}

double HfCheckpoint::config_float(const std::string& key, double fallback) const {
    if (!config_.contains(key) || config_[key].is_null()) return fallback;
    if (!config_[key].is_number())
        throw ModelError((folder_ / "config.json").string() + ": \"" + key + "\" is not a number");
    return config_[key].get<double>();
}

std::string HfCheckpoint::config_string(const std::string& key, const std::string& fallback) const {
    if (!config_.contains(key) || config_[key].is_null()) return fallback;
    if (!config_[key].is_string())
        throw ModelError((folder_ / "config.json").string() + ": \"" + key + "\" is not a string");
    return config_[key].get<std::string>();
}

void HfCheckpoint::use_prefix_of(const std::vector<std::string>& prefixes, const std::string& probe) {
    for (const std::string& prefix : prefixes)
        if (weights_.contains(prefix + probe)) {
            prefix_ = prefix;
            return;
        }
    throw ModelError(folder_.string() + ": the checkpoint has no tensor '" + probe + "' (nor under the prefixes " +
                     "of models with a head): not a checkpoint of a " + model_type() + " model?");
}

bool HfCheckpoint::has(const std::string& name) const { return weights_.contains(prefix_ + name); }

Tensor HfCheckpoint::weight(const std::string& name, const std::vector<int64_t>& expected) const {
    const std::string full = prefix_ + name;
    if (!weights_.contains(full))
        throw ModelError(folder_.string() + ": the checkpoint has no tensor '" + full + "'");
    Tensor tensor = weights_.tensor(full);
    if (!expected.empty() && tensor.shape().dims() != expected)
        throw ModelError(folder_.string() + ": tensor '" + full + "' is " + tensor.shape().to_string() +
                         ", but config.json makes it " + shape_text(expected));
    if (tensor.dtype() == DType::f32) return tensor;
    if (!is_floating(tensor.dtype()))
        throw ModelError(folder_.string() + ": tensor '" + full + "' holds " + std::string(dtype_name(tensor.dtype())) +
                         ", not floating-point weights");
    return Tensor::from_vector(tensor.to_vector<float>(), tensor.shape());
}

Tensor HfCheckpoint::linear_weight(const std::string& name, int64_t in, int64_t out) const {
    const Tensor weight = this->weight(name, {out, in});
    const float* source = weight.data<float>();
    std::vector<float> transposed(static_cast<size_t>(in * out));
    for (int64_t row = 0; row < out; ++row)
        for (int64_t column = 0; column < in; ++column) transposed[column * out + row] = source[row * in + column];
    return Tensor::from_vector(transposed, Shape{in, out});
}

}  // namespace infer::detail
