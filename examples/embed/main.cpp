// embed: sentence embeddings with all-MiniLM-L6-v2 (or another BERT-family sentence encoder),
// and how similar the sentences are.
//   embed [--device cpu|cuda] [--precision f32|f16|bf16|int8] [--model DIR] [--json] SENTENCE...
// The model folder is either a Hugging Face one (config.json, model.safetensors, tokenizer.json,
// and for sentence-transformers models modules.json and 1_Pooling/: the graph is built from the
// checkpoint and pools itself), or one exported by scripts/models/prepare.sh (model.onnx,
// vocab.txt and manifest.json with max_length and lower_case). By default $INFER_MODEL_DIR, else
// .cache/models/all-MiniLM-L6-v2 of the source tree this program was built in (found from the
// program's own path: build/bin/../../.cache/...).
// Prints the cosine-similarity matrix, or with --json the embeddings. Errors: one line, status 1.
#include <infer/infer.hpp>
#include <infer/tokenizer.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace fs = std::filesystem;

namespace {

fs::path default_model_dir(const char* argv0) {
    if (const char* env = std::getenv("INFER_MODEL_DIR"); env && *env) return env;
    std::error_code error;
    fs::path program = fs::read_symlink("/proc/self/exe", error);
    if (error) program = fs::absolute(argv0);
    return (program.parent_path() / ".." / ".." / ".cache" / "models" / "all-MiniLM-L6-v2").lexically_normal();
}

struct ModelSettings {
    size_t max_length = 256;
    bool lower_case = true;
};

bool is_hugging_face_folder(const fs::path& dir) {
    return fs::exists(dir / "config.json") && fs::exists(dir / "tokenizer.json");
}

// An exported folder's manifest.json.
ModelSettings read_settings(const fs::path& dir) {
    ModelSettings settings;
    std::ifstream file(dir / "manifest.json");
    if (!file) return settings;  // a folder of one's own: model.onnx and vocab.txt suffice
    const nlohmann::json manifest = nlohmann::json::parse(file, nullptr, false);
    if (manifest.is_discarded()) throw infer::ModelError((dir / "manifest.json").string() + " is not valid JSON");
    settings.max_length = manifest.value("max_length", settings.max_length);
    settings.lower_case = manifest.value("lower_case", settings.lower_case);
    return settings;
}

// sentence-transformers' mean pooling and Normalize: the mean of the token vectors where the
// attention mask is 1, scaled to unit length.
std::vector<std::vector<float>> embed(const infer::Tensor& hidden, const infer::Tensor& mask) {
    const auto values = hidden.to_vector<float>();
    const auto weights = mask.to_vector<int64_t>();
    const auto count = static_cast<size_t>(hidden.shape()[0]);
    const auto length = static_cast<size_t>(hidden.shape()[1]);
    const auto dim = static_cast<size_t>(hidden.shape()[2]);
    std::vector<std::vector<float>> embeddings(count, std::vector<float>(dim));
    for (size_t i = 0; i < count; ++i) {
        std::vector<double> sum(dim, 0.0);
        size_t tokens = 0;
        for (size_t t = 0; t < length; ++t) {
            if (weights[i * length + t] == 0) continue;
            ++tokens;
            for (size_t d = 0; d < dim; ++d) sum[d] += values[(i * length + t) * dim + d];
        }
        double norm = 0;
        for (double& s : sum) {
            s /= static_cast<double>(std::max<size_t>(tokens, 1));
            norm += s * s;
        }
        norm = std::max(std::sqrt(norm), 1e-12);
        for (size_t d = 0; d < dim; ++d) embeddings[i][d] = static_cast<float>(sum[d] / norm);
    }
    return embeddings;
}

// The rows of a [count, dim] tensor.
std::vector<std::vector<float>> rows_of(const infer::Tensor& matrix) {
    const auto values = matrix.to_vector<float>();
    const auto dim = static_cast<size_t>(matrix.shape()[1]);
    std::vector<std::vector<float>> rows;
    for (size_t start = 0; start < values.size(); start += dim)
        rows.emplace_back(values.begin() + static_cast<std::ptrdiff_t>(start),
                          values.begin() + static_cast<std::ptrdiff_t>(start + dim));
    return rows;
}

// The embeddings of a graph that gives token vectors: last_hidden_state (or its first output),
// mean-pooled over the mask and normalised.
std::vector<std::vector<float>> embed_tokens(const infer::Batch& outputs, const infer::Graph& graph,
                                             const infer::Tensor& mask) {
    const std::string output_name = outputs.contains("last_hidden_state") ? "last_hidden_state"
                                                                         : graph.outputs().front().name;
    const infer::Tensor hidden = outputs[output_name].to(infer::Device::CPU);
    if (hidden.rank() != 3)
        throw infer::ModelError("output '" + output_name + "' is " + hidden.describe() +
                                ", not [batch, sequence, hidden] token vectors");
    return embed(hidden, mask);
}

void print_similarities(const std::vector<std::string>& sentences, const std::vector<std::vector<float>>& embeddings) {
    for (size_t i = 0; i < sentences.size(); ++i) std::printf("[%zu] %s\n", i, sentences[i].c_str());
    std::printf("\ncosine similarity\n      ");
    for (size_t j = 0; j < embeddings.size(); ++j) std::printf("%8s", ("[" + std::to_string(j) + "]").c_str());
    std::printf("\n");
    for (size_t i = 0; i < embeddings.size(); ++i) {
        std::printf("%6s", ("[" + std::to_string(i) + "]").c_str());
        for (size_t j = 0; j < embeddings.size(); ++j) {
            double dot = 0;  // unit vectors: the dot product is the cosine
            for (size_t d = 0; d < embeddings[i].size(); ++d) dot += double(embeddings[i][d]) * embeddings[j][d];
            std::printf("%8.4f", dot);
        }
        std::printf("\n");
    }
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Sentence embeddings and their cosine similarities with a BERT-family model"};
    std::string device = "cpu", precision = "f32", model_dir;
    std::vector<std::string> sentences;
    bool json = false;
    app.add_option("--device", device, "cpu, cuda, cuda:N");
    app.add_option("--precision", precision, "f32, f16, bf16 or int8 (CPU)");
    app.add_option("--model", model_dir, "a Hugging Face folder (config.json, model.safetensors, tokenizer.json), or one "
                                         "with model.onnx and vocab.txt (default: $INFER_MODEL_DIR, else "
                                         ".cache/models/all-MiniLM-L6-v2 of the source tree)");
    app.add_flag("--json", json, "print {\"model\", \"device\", \"precision\", \"embeddings\"} as JSON");
    app.add_option("sentences", sentences, "the sentences to embed")->required();
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "embed: " << e.what() << " (see --help)\n";
        return 1;
    }
    try {
        const fs::path dir = model_dir.empty() ? default_model_dir(argv[0]) : fs::path(model_dir);
        const bool hugging_face = is_hugging_face_folder(dir);
        if (!hugging_face && !fs::exists(dir / "model.onnx"))
            throw infer::InvalidArgument("no model.onnx, nor config.json and tokenizer.json, in " + dir.string() +
                                         " (run scripts/models/prepare.sh, or pass --model DIR)");
        const ModelSettings settings = hugging_face ? ModelSettings{} : read_settings(dir);
        const auto tokenizer = hugging_face
                                   ? infer::BertTokenizer::from_tokenizer_json(dir.string())
                                   : infer::BertTokenizer::from_vocab_file((dir / "vocab.txt").string(), settings.lower_case);
        const size_t max_length = hugging_face ? tokenizer.max_length() : settings.max_length;
        const infer::Graph graph = infer::Graph::load(hugging_face ? dir.string() : (dir / "model.onnx").string());

        infer::SessionOptions options;
        options.device = infer::Device::parse(device);
        options.precision = infer::parse_precision(precision);
        const infer::Session session(graph, options);

        const infer::Batch tokens = tokenizer.encode_batch(sentences, max_length);
        infer::Batch inputs;  // only what the model takes: DistilBERT has no token_type_ids
        for (const auto& input : graph.inputs()) inputs.set(input.name, tokens[input.name]);
        const infer::Batch outputs = session.run(inputs);
        // A graph built from a sentence-transformers folder pools and normalises itself.
        const auto embeddings = outputs.contains("sentence_embedding")
                                    ? rows_of(outputs["sentence_embedding"].to(infer::Device::CPU))
                                    : embed_tokens(outputs, graph, tokens["attention_mask"]);

        if (json) {
            const nlohmann::json out = {{"model", fs::weakly_canonical(dir).string()},
                                        {"device", options.device.to_string()},
                                        {"precision", std::string(infer::precision_name(options.precision))},
                                        {"embeddings", embeddings}};
            std::cout << out.dump() << "\n";
        } else {
            print_similarities(sentences, embeddings);
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "embed: " << e.what() << "\n";
        return 1;
    }
}
