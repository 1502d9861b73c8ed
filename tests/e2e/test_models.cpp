// Real models against the framework they came from ([models]), in f32, f16 and bf16 on the
// device under test: all-MiniLM-L6-v2's sentence embeddings against sentence-transformers, and
// the random-weight encoders' last_hidden_state against transformers.
#include <catch2/catch.hpp>

#include <infer/tensor_io.hpp>
#include <infer/tokenizer.hpp>

#include "e2e.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>

namespace fs = std::filesystem;

namespace {

nlohmann::json read_json(const fs::path& path) {
    std::ifstream file(path);
    if (!file) throw std::runtime_error("cannot read " + path.string());
    return nlohmann::json::parse(file);
}

const infer::Graph& load_graph(const fs::path& folder) {
    static std::map<fs::path, infer::Graph> graphs;  // loading takes a while: once per model
    auto found = graphs.find(folder);
    if (found == graphs.end()) found = graphs.emplace(folder, infer::Graph::load((folder / "model.onnx").string())).first;
    return found->second;
}

struct Tolerance {
    double embedding_cosine;  // MiniLM: the least cosine to sentence-transformers' embedding
    double hidden_relative;   // max |error| of last_hidden_state / max |reference|
};

// Measured on the CPU (docs/models.md): f32 ~1e-6 relative, f16 ~1e-3, bf16 ~7e-3. f32 leaves
// room for TF32 matrix products on GPUs.
Tolerance tolerance(infer::Precision precision) {
    switch (precision) {
    case infer::Precision::f32: return {0.9999, 1e-4};
    case infer::Precision::f16: return {0.999, 1e-2};
    case infer::Precision::bf16: return {0.999, 3e-2};
    }
    return {};
}

// Max |a - b| over the positions where mask is 1, and max |b| there.
std::pair<double, double> max_errors(const infer::Tensor& hidden, const infer::Tensor& reference,
                                     const infer::Tensor& mask) {
    const auto got = hidden.to_vector<float>();
    const auto want = reference.to_vector<float>();
    const auto valid = mask.to_vector<int64_t>();
    const auto dim = static_cast<size_t>(reference.shape()[2]);
    double error = 0, scale = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        if (valid[i / dim] == 0) continue;
        error = std::max(error, std::abs(double(got[i]) - want[i]));
        scale = std::max(scale, std::abs(double(want[i])));
    }
    return {error, scale};
}

std::string label(infer::Precision precision) {
    return e2e::device_under_test().to_string() + " " + std::string(infer::precision_name(precision));
}

}  // namespace

TEST_CASE("all-MiniLM-L6-v2 embeddings match sentence-transformers", "[models][minilm]") {
    const auto precision = GENERATE(infer::Precision::f32, infer::Precision::f16, infer::Precision::bf16);
    const fs::path folder = e2e::model_cache() / "all-MiniLM-L6-v2";
    const auto manifest = read_json(folder / "manifest.json");
    const auto sentences = read_json(folder / "sentences.json").get<std::vector<std::string>>();
    const auto tokenizer = infer::BertTokenizer::from_vocab_file((folder / "vocab.txt").string(),
                                                                 manifest["lower_case"].get<bool>());
    const infer::Batch inputs = tokenizer.encode_batch(sentences, manifest["max_length"].get<size_t>());
    // The tokenizer's ids are the reference run's: the comparison below is of the model alone.
    REQUIRE(inputs["input_ids"].to_vector<int64_t>() ==
            infer::load_npy((folder / "test_data_set_0" / "input_0.npy").string()).to_vector<int64_t>());

    infer::SessionOptions options;
    options.device = e2e::device_under_test();
    options.precision = precision;
    const infer::Session session(load_graph(folder), options);
    const infer::Batch outputs = session.run(inputs);
    const infer::Tensor hidden = outputs["last_hidden_state"].to(infer::Device::CPU);

    const auto [error, scale] = max_errors(
        hidden, infer::load_npy((folder / "test_data_set_0" / "output_0.npy").string()), inputs["attention_mask"]);
    const auto embeddings = e2e::mean_pool_normalized(hidden, inputs["attention_mask"]);
    const infer::Tensor reference = infer::load_npy((folder / "embeddings.npy").string());
    const auto reference_values = reference.to_vector<float>();
    const auto dim = static_cast<size_t>(reference.shape()[1]);
    REQUIRE(embeddings.size() == static_cast<size_t>(reference.shape()[0]));
    double least_cosine = 1, embedding_error = 0;
    for (size_t i = 0; i < embeddings.size(); ++i) {
        const std::vector<float> want(reference_values.begin() + i * dim, reference_values.begin() + (i + 1) * dim);
        least_cosine = std::min(least_cosine, e2e::cosine(embeddings[i], want));
        for (size_t d = 0; d < dim; ++d)
            embedding_error = std::max(embedding_error, std::abs(double(embeddings[i][d]) - want[d]));
    }
    std::cout << "e2e: all-MiniLM-L6-v2 " << label(precision) << ": least cosine 1 - " << std::setprecision(2)
              << 1 - least_cosine << ", max |error| embedding " << std::setprecision(3) << embedding_error
              << ", last_hidden_state " << error << " (of max " << scale << ")\n";
    CHECK(least_cosine >= tolerance(precision).embedding_cosine);
    CHECK(error / scale <= tolerance(precision).hidden_relative);
}

TEST_CASE("prepared encoders match transformers' last_hidden_state", "[models][encoders]") {
    const auto precision = GENERATE(infer::Precision::f32, infer::Precision::f16, infer::Precision::bf16);
    const std::string name = GENERATE(as<std::string>{}, "distilbert-base-random", "bert-base-random");
    const fs::path folder = e2e::model_cache() / name;
    if (!fs::exists(folder / "manifest.json")) {
        WARN(name << " is not prepared in " << e2e::model_cache().string() << ": not compared");
        return;
    }
    const infer::Graph& graph = load_graph(folder);
    infer::Batch inputs;
    for (size_t i = 0; i < graph.inputs().size(); ++i)
        inputs.set(graph.inputs()[i].name,
                   infer::load_npy((folder / "test_data_set_0" / ("input_" + std::to_string(i) + ".npy")).string()));
    infer::SessionOptions options;
    options.device = e2e::device_under_test();
    options.precision = precision;
    const infer::Session session(graph, options);
    const infer::Tensor hidden = session.run(inputs)["last_hidden_state"].to(infer::Device::CPU);
    const auto [error, scale] = max_errors(
        hidden, infer::load_npy((folder / "test_data_set_0" / "output_0.npy").string()), inputs["attention_mask"]);
    std::cout << "e2e: " << name << " " << label(precision) << ": max |error| last_hidden_state "
              << std::setprecision(3) << error << " (of max " << scale << ", relative " << error / scale << ")\n";
    CHECK(error / scale <= tolerance(precision).hidden_relative);
}
