#include "inputs.hpp"

#include <infer/error.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>

namespace infer::bench {

namespace {

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

template <typename T>
void fill_integers(Tensor& t, const std::string& name, std::mt19937_64& rng, TokenIds range) {
    T* data = t.data<T>();
    const int64_t n = t.numel();
    const std::string role = lower(name);
    if (role.find("mask") != std::string::npos) {
        std::fill(data, data + n, T(1));
    } else if (role.find("token_type") != std::string::npos || role.find("type_ids") != std::string::npos) {
        std::fill(data, data + n, T(0));
    } else {
        std::uniform_int_distribution<int64_t> ids(range.low, range.high - 1);
        for (int64_t i = 0; i < n; ++i) data[i] = static_cast<T>(ids(rng));
    }
}

}  // namespace

TokenIds TokenIds::below(int64_t vocabulary) {
    TokenIds ids;
    if (vocabulary < 0 || vocabulary == 1)
        throw InvalidArgument("--vocabulary " + std::to_string(vocabulary) + ": token ids need a vocabulary of at least 2");
    if (vocabulary == 0 || vocabulary >= ids.high) return ids;
    return {vocabulary / 2, vocabulary};
}

int64_t folder_vocabulary(const std::string& path) {
    // The folder itself, or the folder of a model file (a prepared model.onnx beside its config).
    std::filesystem::path folder(path);
    if (!std::filesystem::is_directory(folder)) folder = folder.parent_path();
    const std::filesystem::path config = folder / "config.json";
    if (!std::filesystem::is_regular_file(config)) return 0;
    std::ifstream in(config);
    const nlohmann::json json = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded() || !json.contains("vocab_size") || !json["vocab_size"].is_number_integer()) return 0;
    return json["vocab_size"].get<int64_t>();
}

std::map<std::string, Shape> input_shapes(const Graph& graph, int64_t batch, int64_t sequence) {
    std::map<std::string, Shape> shapes;
    for (const TensorInfo& info : graph.inputs()) {
        std::vector<int64_t> dims = info.shape.dims();
        for (size_t d = 0; d < dims.size(); ++d)
            if (dims[d] == kDynamic) dims[d] = d == 0 ? batch : sequence;
        if (!dims.empty() && info.shape.dims()[0] != kDynamic && dims[0] != batch)
            throw InvalidArgument("input '" + info.name + "' has a fixed first dimension " + std::to_string(dims[0]) +
                                  ", so the model cannot be run at batch " + std::to_string(batch));
        shapes[info.name] = Shape(dims);
    }
    return shapes;
}

Batch make_inputs(const Graph& graph, int64_t batch, int64_t sequence, bool pinned, const Device& for_device,
                  TokenIds ids) {
    const auto shapes = input_shapes(graph, batch, sequence);
    std::mt19937_64 rng(1234);
    Batch inputs;
    for (const TensorInfo& info : graph.inputs()) {
        const Shape& shape = shapes.at(info.name);
        Tensor t = pinned ? Tensor::empty_pinned(info.dtype, shape, for_device) : Tensor::empty(info.dtype, shape);
        switch (info.dtype) {
            case DType::i64: fill_integers<int64_t>(t, info.name, rng, ids); break;
            case DType::i32: fill_integers<int32_t>(t, info.name, rng, ids); break;
            case DType::f32: {
                std::normal_distribution<float> normal;
                float* data = t.data<float>();
                for (int64_t i = 0; i < t.numel(); ++i) data[i] = normal(rng);
                break;
            }
            default:
                throw Unsupported("infer-bench cannot make values for input '" + info.name + "' of dtype " +
                                  std::string(dtype_name(info.dtype)));
        }
        inputs.set(info.name, std::move(t));
    }
    return inputs;
}

}  // namespace infer::bench
