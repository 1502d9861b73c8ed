#include "inputs.hpp"

#include <infer/error.hpp>

#include <algorithm>
#include <cctype>
#include <random>

namespace infer::bench {

namespace {

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

template <typename T>
void fill_integers(Tensor& t, const std::string& name, std::mt19937_64& rng) {
    T* data = t.data<T>();
    const int64_t n = t.numel();
    const std::string role = lower(name);
    if (role.find("mask") != std::string::npos) {
        std::fill(data, data + n, T(1));
    } else if (role.find("token_type") != std::string::npos || role.find("type_ids") != std::string::npos) {
        std::fill(data, data + n, T(0));
    } else {
        std::uniform_int_distribution<int64_t> ids(1000, 1999);
        for (int64_t i = 0; i < n; ++i) data[i] = static_cast<T>(ids(rng));
    }
}

}  // namespace

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

Batch make_inputs(const Graph& graph, int64_t batch, int64_t sequence, bool pinned, const Device& for_device) {
    const auto shapes = input_shapes(graph, batch, sequence);
    std::mt19937_64 rng(1234);
    Batch inputs;
    for (const TensorInfo& info : graph.inputs()) {
        const Shape& shape = shapes.at(info.name);
        Tensor t = pinned ? Tensor::empty_pinned(info.dtype, shape, for_device) : Tensor::empty(info.dtype, shape);
        switch (info.dtype) {
            case DType::i64: fill_integers<int64_t>(t, info.name, rng); break;
            case DType::i32: fill_integers<int32_t>(t, info.name, rng); break;
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
