// Graphs built from Hugging Face checkpoints (safetensors + config.json) against the framework:
// all-MiniLM-L6-v2 from the weights package's folder against its ONNX export run by infer and
// against sentence-transformers ([models], ctest e2e_models_*), and the small random-weight
// BERT, RoBERTa and DistilBERT checkpoints against transformers ([checkpoints], ctest
// e2e_checkpoints_*). All in f32 on the device under test.
#include <catch2/catch.hpp>

#include <infer/tensor_io.hpp>

#include "e2e.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>

namespace fs = std::filesystem;

namespace {

nlohmann::json read_manifest(const fs::path& folder) {
    std::ifstream file(folder / "manifest.json");
    return nlohmann::json::parse(file);
}

// Max |a - b| over the rows [batch, sequence, ...] whose mask is 1 (no mask: all), and max |b|.
struct Difference {
    double max_abs = 0, max_reference = 0;
};
Difference difference(const infer::Tensor& got, const infer::Tensor& want, const infer::Tensor* mask = nullptr) {
    REQUIRE(got.shape() == want.shape());
    const auto a = got.to_vector<float>();
    const auto b = want.to_vector<float>();
    const auto valid = mask ? mask->to_vector<int64_t>() : std::vector<int64_t>{};
    const size_t per_row = mask ? b.size() / valid.size() : 1;
    Difference d;
    for (size_t i = 0; i < b.size(); ++i) {
        if (mask && valid[i / per_row] == 0) continue;
        d.max_abs = std::max(d.max_abs, std::abs(double(a[i]) - b[i]));
        d.max_reference = std::max(d.max_reference, std::abs(double(b[i])));
    }
    return d;
}

infer::Session f32_session(const infer::Graph& graph) {
    infer::SessionOptions options;
    options.device = e2e::device_under_test();
    options.precision = infer::Precision::f32;
    return infer::Session(graph, options);
}

infer::Batch reference_inputs(const fs::path& folder, const std::vector<std::string>& names) {
    infer::Batch inputs;
    for (size_t i = 0; i < names.size(); ++i)
        inputs.set(names[i], infer::load_npy((folder / "test_data_set_0" / ("input_" + std::to_string(i) + ".npy")).string()));
    return inputs;
}

}  // namespace

TEST_CASE("all-MiniLM-L6-v2 built from safetensors matches its ONNX export and sentence-transformers",
          "[models][checkpoint]") {
    const fs::path folder = e2e::model_cache() / "all-MiniLM-L6-v2";
    if (!fs::exists(folder / "hf" / "model.safetensors")) {
        WARN("no Hugging Face folder in " << (folder / "hf").string() << " (scripts/models/prepare.sh all-MiniLM-L6-v2)");
        return;
    }
    const infer::Graph built = infer::Graph::load((folder / "hf").string());
    const infer::Graph exported = infer::Graph::load((folder / "model.onnx").string());
    const infer::Batch inputs = reference_inputs(folder, read_manifest(folder)["inputs"].get<std::vector<std::string>>());
    const infer::Session built_session = f32_session(built), exported_session = f32_session(exported);
    const infer::Batch from_checkpoint = built_session.run(inputs);
    const infer::Batch from_export = exported_session.run(inputs);

    const infer::Tensor& mask = inputs["attention_mask"];
    const auto hidden = difference(from_checkpoint["last_hidden_state"].to(infer::Device::CPU),
                                   from_export["last_hidden_state"].to(infer::Device::CPU), &mask);
    const infer::Tensor embedding = from_checkpoint["sentence_embedding"].to(infer::Device::CPU);
    const auto exported_embedding = e2e::mean_pool_normalized(from_export["last_hidden_state"].to(infer::Device::CPU), mask);
    std::vector<float> flat;
    for (const auto& row : exported_embedding) flat.insert(flat.end(), row.begin(), row.end());
    const auto embedding_vs_export = difference(embedding, infer::Tensor::from_vector(flat, embedding.shape()));
    const auto embedding_vs_st = difference(embedding, infer::load_npy((folder / "embeddings.npy").string()));
    std::cout << "e2e: all-MiniLM-L6-v2 from safetensors " << e2e::device_under_test().to_string()
              << " f32: max |difference| to the ONNX export: last_hidden_state " << std::setprecision(3)
              << hidden.max_abs << ", sentence_embedding " << embedding_vs_export.max_abs
              << "; to sentence-transformers: " << embedding_vs_st.max_abs << "\n";
    CHECK(hidden.max_abs <= 1e-5);
    CHECK(embedding_vs_export.max_abs <= 1e-5);
    CHECK(embedding_vs_st.max_abs <= 1e-5);

    // The built graph goes through the same passes as the export and fuses the same way.
    const auto built_ops = built_session.op_histogram(), exported_ops = exported_session.op_histogram();
    for (const char* fused : {"Attention", "FusedMatMul", "AddLayerNormalization"}) {
        INFO(fused);
        CHECK(built_ops.count(fused) == 1);
        CHECK(built_ops.at(fused) == exported_ops.at(fused));
    }
}

TEST_CASE("random-weight checkpoints built from safetensors match transformers", "[checkpoints]") {
    const std::string name = GENERATE(from_range(e2e::checkpoint_models()));
    const fs::path folder = e2e::model_cache() / name;
    if (!fs::exists(folder / "manifest.json")) {
        WARN(name << " is not prepared in " << e2e::model_cache().string() << " (scripts/models/prepare.sh " << name << ")");
        return;
    }
    const auto manifest = read_manifest(folder);
    const auto output_name = manifest.value("output", std::string("last_hidden_state"));
    const infer::Graph graph = infer::Graph::load(folder.string());
    const infer::Batch inputs = reference_inputs(folder, manifest["inputs"].get<std::vector<std::string>>());
    const infer::Tensor output = f32_session(graph).run(inputs)[output_name].to(infer::Device::CPU);
    const auto d = difference(output, infer::load_npy((folder / "test_data_set_0" / "output_0.npy").string()),
                              &inputs["attention_mask"]);
    std::cout << "e2e: " << name << " " << e2e::device_under_test().to_string() << " f32: " << output_name << " max |error| "
              << std::setprecision(3) << d.max_abs << " (of max " << d.max_reference << ", relative "
              << d.max_abs / d.max_reference << ")\n";
    CHECK(d.max_abs / d.max_reference <= 1e-5);
}
