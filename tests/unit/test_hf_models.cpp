// Graph::load of Hugging Face folders that cannot be built: an unknown architecture, missing or
// misshapen weights, malformed configs and module files are infer errors naming the culprit.
// (Folders that can be built are compared with transformers in tests/e2e/test_checkpoints.cpp.)
#include <infer/error.hpp>
#include <infer/graph.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace infer;
namespace fs = std::filesystem;

namespace {

// A folder with `config` as config.json and a checkpoint of one f32 tensor `name` of `shape`.
fs::path make_folder(const std::string& folder_name, const std::string& config, const std::string& name,
                     const std::vector<int64_t>& shape) {
    const fs::path folder = fs::temp_directory_path() / "infer_hf_models_test" / folder_name;
    fs::create_directories(folder);
    std::ofstream(folder / "config.json") << config;
    int64_t count = 1;
    std::string dims;
    for (int64_t d : shape) {
        count *= d;
        dims += (dims.empty() ? "" : ",") + std::to_string(d);
    }
    std::string header = R"({")" + name + R"(":{"dtype":"F32","shape":[)" + dims + R"(],"data_offsets":[0,)" +
                         std::to_string(count * 4) + "]}}";
    while (header.size() % 8 != 0) header += ' ';
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(header.size() >> (8 * i) & 0xff);
    bytes += header + std::string(static_cast<size_t>(count) * 4, '\0');
    std::ofstream(folder / "model.safetensors", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return folder;
}

const std::string kBertConfig =
    R"({"model_type":"bert","hidden_size":8,"num_attention_heads":2,"num_hidden_layers":1,)"
    R"("intermediate_size":16,"vocab_size":10,"max_position_embeddings":16,"type_vocab_size":2})";

}  // namespace

TEST_CASE("Hugging Face folders that cannot be built get clear errors", "[hf_models]") {
    SECTION("an architecture infer does not build") {
        const auto folder = make_folder("gpt", R"({"model_type":"mamba"})", "w", {1});
        CHECK_THROWS_AS(Graph::load(folder.string()), Unsupported);
        CHECK_THROWS_WITH(Graph::load(folder.string()), Catch::Contains("mamba") && Catch::Contains("bert"));
    }
    SECTION("a checkpoint of another model") {
        const auto folder = make_folder("other", kBertConfig, "decoder.weight", {2});
        CHECK_THROWS_AS(Graph::load(folder.string()), ModelError);
        CHECK_THROWS_WITH(Graph::load(folder.string()), Catch::Contains("embeddings.word_embeddings.weight"));
    }
    SECTION("a weight whose shape disagrees with config.json") {
        const auto folder = make_folder("shape", kBertConfig, "embeddings.word_embeddings.weight", {10, 4});
        CHECK_THROWS_WITH(Graph::load(folder.string()), Catch::Contains("[10,4]") && Catch::Contains("[10,8]"));
    }
    SECTION("a missing weight") {
        const auto folder = make_folder("missing", kBertConfig, "embeddings.word_embeddings.weight", {10, 8});
        CHECK_THROWS_AS(Graph::load(folder.string()), ModelError);
        CHECK_THROWS_WITH(Graph::load(folder.string()), Catch::Contains("token_type_embeddings"));
    }
    SECTION("a setting of the wrong JSON type") {
        const auto folder = make_folder("type", R"({"model_type":"gpt2","add_cross_attention":"no"})", "wte.weight", {4, 2});
        CHECK_THROWS_AS(Graph::load(folder.string()), ModelError);
        CHECK_THROWS_WITH(Graph::load(folder.string()), Catch::Contains("malformed configuration"));
    }
    SECTION("a config.json without a required setting, or not JSON") {
        auto folder = make_folder("unset", R"({"model_type":"bert"})", "embeddings.word_embeddings.weight", {10, 8});
        CHECK_THROWS_WITH(Graph::load(folder.string()), Catch::Contains("hidden_size"));
        std::ofstream(folder / "config.json") << "{";
        CHECK_THROWS_AS(Graph::load(folder.string()), ModelError);
    }
}
