// Real models against the framework they came from, in f32, f16 and bf16 on the device under
// test: all-MiniLM-L6-v2's sentence embeddings against sentence-transformers ([models], ctest
// e2e_models_*), and the random-weight architectures (DistilBERT, BERT, GPT-2, ViT, the CNN
// matrix) against transformers and torchvision, with ResNet-50 quantized by ONNX Runtime
// against its output ([architectures], ctest e2e_architectures_*, label slow).
#include <catch2/catch.hpp>

#include <infer/tensor_io.hpp>
#include <infer/tokenizer.hpp>

#include "e2e.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>

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
    double hidden_relative;   // max |error| of the output (last_hidden_state, logits) / max |reference|
};

// Measured on the CPU (docs/models.md): f32 ~1e-6 relative for every model; f16 6e-4..1.8e-3;
// bf16 5e-3..1.5e-2 (ViT-base the largest, then GPT-2's logits). f32 leaves room for TF32 matrix
// products on GPUs; bf16's 3e-2 is twice the worst measured.
Tolerance tolerance(infer::Precision precision) {
    switch (precision) {
    case infer::Precision::f32: return {0.9999, 1e-4};
    case infer::Precision::f16: return {0.999, 1e-2};
    case infer::Precision::bf16: return {0.999, 3e-2};
    case infer::Precision::int8: return {0.99, 1e-1};  // its own test below compares with f32
    }
    return {};
}

// Max |a - b| over the positions where mask is 1 (mask [batch, sequence] over the first two
// axes of [batch, sequence, ...]; nullptr: everywhere), and max |b| there.
std::pair<double, double> max_errors(const infer::Tensor& output, const infer::Tensor& reference,
                                     const infer::Tensor* mask) {
    const auto got = output.to_vector<float>();
    const auto want = reference.to_vector<float>();
    const auto valid = mask ? mask->to_vector<int64_t>() : std::vector<int64_t>{};
    const auto per_position = mask ? want.size() / valid.size() : want.size();
    double error = 0, scale = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        if (mask && valid[i / per_position] == 0) continue;
        error = std::max(error, std::abs(double(got[i]) - want[i]));
        scale = std::max(scale, std::abs(double(want[i])));
    }
    return {error, scale};
}
std::pair<double, double> max_errors(const infer::Tensor& output, const infer::Tensor& reference,
                                     const infer::Tensor& mask) {
    return max_errors(output, reference, &mask);
}

struct Agreement {
    size_t rows = 0, agree = 0;
    size_t clear_disagree = 0;  // rows whose reference margin (top-1 minus top-2) exceeds `margin`
};

// Argmax over the last axis (classes, vocabulary) of the rows that count (mask as above).
Agreement argmax_agreement(const infer::Tensor& output, const infer::Tensor& reference, const infer::Tensor* mask,
                           double margin) {
    const auto got = output.to_vector<float>();
    const auto want = reference.to_vector<float>();
    const auto classes = static_cast<size_t>(reference.shape()[reference.rank() - 1]);
    const auto valid = mask ? mask->to_vector<int64_t>() : std::vector<int64_t>{};
    const auto rows_per_position = mask ? want.size() / classes / valid.size() : 1;
    Agreement result;
    for (size_t row = 0; row < want.size() / classes; ++row) {
        if (mask && valid[row / rows_per_position] == 0) continue;
        const float* w = &want[row * classes];
        const float* g = &got[row * classes];
        const size_t best = std::max_element(w, w + classes) - w;
        float second = -INFINITY;
        for (size_t c = 0; c < classes; ++c)
            if (c != best) second = std::max(second, w[c]);
        const bool agree = static_cast<size_t>(std::max_element(g, g + classes) - g) == best;
        ++result.rows;
        result.agree += agree;
        if (!agree && w[best] - second > margin) ++result.clear_disagree;
    }
    return result;
}

// Loads the model of `folder`, dropping the one loaded before: the architectures are large.
const infer::Graph& load_one_graph(const fs::path& folder) {
    static fs::path loaded;
    static std::optional<infer::Graph> graph;
    if (!graph || loaded != folder) {
        graph.reset();
        graph.emplace(infer::Graph::load((folder / "model.onnx").string()));
        loaded = folder;
    }
    return *graph;
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

// precision = int8 (CPU): dynamic quantization of every product by a weight. The bar of the
// int8 issue: each sentence embedding within cosine 0.99 of the f32 one, and the similarity
// ranking of embed's check sentences (the demo's four) unchanged. Over the ten reference
// sentences a pair of others may change places only where f32 itself nearly ties them; with
// static (calibrated) ranges, the same holds for the check sentences.
TEST_CASE("all-MiniLM-L6-v2 in int8 keeps its embeddings and their similarity ranking", "[models][minilm][int8]") {
    if (!e2e::device_under_test().is_cpu()) {
        SUCCEED("int8 runs on the CPU only so far");
        return;
    }
    const fs::path folder = e2e::model_cache() / "all-MiniLM-L6-v2";
    const auto manifest = read_json(folder / "manifest.json");
    const auto tokenizer = infer::BertTokenizer::from_vocab_file((folder / "vocab.txt").string(),
                                                                 manifest["lower_case"].get<bool>());
    const infer::Graph& graph = load_graph(folder);
    const infer::Session f32_session(graph), int8_session(graph, {.precision = infer::Precision::int8});
    CHECK(int8_session.op_histogram()["QuantizedMatMul"] == 24);  // 6 layers: Q, K and V packed, output, 2 FFN
    auto embed = [&](const infer::Session& session, const std::vector<std::string>& sentences) {
        const infer::Batch inputs = tokenizer.encode_batch(sentences, manifest["max_length"].get<size_t>());
        return e2e::mean_pool_normalized(session.run(inputs)["last_hidden_state"], inputs["attention_mask"]);
    };
    // Pairs (a, b) of other sentences that sentence i ranks in another order in `e` than in
    // `reference`, with the gap between them in `reference`.
    auto swaps = [](const std::vector<std::vector<float>>& reference, const std::vector<std::vector<float>>& e) {
        std::vector<double> gaps;
        for (size_t i = 0; i < e.size(); ++i)
            for (size_t a = 0; a < e.size(); ++a)
                for (size_t b = a + 1; b < e.size(); ++b) {
                    if (a == i || b == i) continue;
                    const double ra = e2e::cosine(reference[i], reference[a]), rb = e2e::cosine(reference[i], reference[b]);
                    if ((ra > rb) != (e2e::cosine(e[i], e[a]) > e2e::cosine(e[i], e[b]))) gaps.push_back(std::fabs(ra - rb));
                }
        return gaps;
    };
    const auto sentences = read_json(folder / "sentences.json").get<std::vector<std::string>>();
    const auto f32 = embed(f32_session, sentences), int8 = embed(int8_session, sentences);
    REQUIRE(f32.size() == int8.size());
    double least_cosine = 1;
    for (size_t i = 0; i < f32.size(); ++i) least_cosine = std::min(least_cosine, e2e::cosine(f32[i], int8[i]));
    const std::vector<double> gaps = swaps(f32, int8);
    const double widest = gaps.empty() ? 0.0 : *std::max_element(gaps.begin(), gaps.end());
    const std::vector<std::string> check{"A man is eating food.", "A man is eating a piece of bread.",
                                         "The girl is carrying a baby.", "A man is riding a horse."};
    const size_t check_swaps = swaps(embed(f32_session, check), embed(int8_session, check)).size();
    std::cout << "e2e: all-MiniLM-L6-v2 cpu int8: least cosine to f32 1 - " << std::setprecision(2) << 1 - least_cosine
              << "; reference sentences: " << gaps.size() << " pair(s) change places, f32 gap at most " << widest
              << "; embed's check sentences: " << check_swaps << "\n";
    CHECK(least_cosine >= 0.99);
    CHECK(widest < 0.01);
    CHECK(check_swaps == 0);

    // Static int8: ranges calibrated on 48 texts of the tokenizer corpus (not the sentences
    // compared), by min-max, by the 99.99th percentile and by entropy.
    const auto corpus = read_json(folder / "tokenizer_corpus.json")["cases"];
    std::vector<infer::Batch> calibration_batches;
    for (size_t first = 5; first < 53; first += 16) {
        std::vector<std::string> texts;
        for (size_t i = first; i < first + 16; ++i) texts.push_back(corpus.at(i)["text"].get<std::string>());
        calibration_batches.push_back(tokenizer.encode_batch(texts, manifest["max_length"].get<size_t>()));
    }
    for (const auto method :
         {infer::CalibrationMethod::min_max, infer::CalibrationMethod::percentile, infer::CalibrationMethod::entropy}) {
        infer::SessionOptions options{.precision = infer::Precision::int8};
        options.calibration = std::make_shared<infer::Calibration>(
            infer::calibrate(graph, calibration_batches, {.method = method}));
        CHECK(options.calibration->ranges.size() == 36);
        size_t static_products = 0;
        double worst_static = 0;
        for (const auto& [node, range] : options.calibration->ranges)
            if (!range.dynamic) ++static_products, worst_static = std::max(worst_static, range.error);
        const infer::Session static_session(graph, options);
        const auto fixed = embed(static_session, sentences);
        double least = 1;
        for (size_t i = 0; i < f32.size(); ++i) least = std::min(least, e2e::cosine(f32[i], fixed[i]));
        const std::vector<double> check_gaps = swaps(embed(f32_session, check), embed(static_session, check));
        const size_t swaps_static = check_gaps.size();
        std::cout << "e2e: all-MiniLM-L6-v2 cpu int8 static ("
                  << (method == infer::CalibrationMethod::min_max      ? "min-max"
                      : method == infer::CalibrationMethod::percentile ? "percentile"
                                                                       : "entropy")
                  << "): " << static_products << " of 36 products static (input error at most " << std::setprecision(2)
                  << worst_static << "), least cosine to f32 1 - " << 1 - least << "; embed's check sentences: "
                  << swaps_static << "\n";
        // Min-max and the percentile keep every Q, K, V and attention output product static at
        // least. Entropy clips more of these activations' outlier channels, so more products
        // lose over 4% of their input to one range and stay dynamic (14 on 2026-12-07).
        CHECK(static_products >= (method == infer::CalibrationMethod::entropy ? 12u : 18u));
        CHECK(least >= 0.99);
        // Static ranges move "The girl is carrying a baby." between two unrelated sentences whose
        // f32 similarities to it are -0.105 and -0.109: near ties may change places, nothing else.
        for (double gap : check_gaps) CHECK(gap < 0.01);
    }
}

// An ONNX Runtime-quantized MiniLM (prepare.py: all-MiniLM-L6-v2-int8-ort, -qdq-ort) run on its
// test_data_set_0 inputs, beside ONNX Runtime's output on them and the weight products that
// ran as MatMulInteger.
namespace {

struct OrtQuantizedRun {
    infer::Batch inputs;
    infer::Tensor hidden, reference;
    size_t integer_products = 0;
    double least_cosine = 1;  // of the sentence embeddings (mean pooled, normalized)
};

OrtQuantizedRun run_ort_quantized(const std::string& name) {
    const fs::path folder = e2e::model_cache() / name;
    const fs::path data = folder / "test_data_set_0";
    const infer::Graph graph = infer::Graph::load((folder / "model.onnx").string());
    const infer::Session session(graph);
    OrtQuantizedRun run;
    // MatMulInteger as the file has it, or MatMulIntegerToFloat where a QDQ product was rewritten.
    auto histogram = session.op_histogram();
    run.integer_products = histogram["MatMulInteger"] + histogram["MatMulIntegerToFloat"] + histogram["QLinearMatMul"];
    for (size_t i = 0; i < graph.inputs().size(); ++i)
        run.inputs.set(graph.inputs()[i].name, infer::load_npy((data / ("input_" + std::to_string(i) + ".npy")).string()));
    run.hidden = session.run(run.inputs)["last_hidden_state"];
    run.reference = infer::load_npy((data / "output_0.npy").string());
    const auto got = e2e::mean_pool_normalized(run.hidden, run.inputs["attention_mask"]);
    const auto want = e2e::mean_pool_normalized(run.reference, run.inputs["attention_mask"]);
    for (size_t i = 0; i < got.size(); ++i) run.least_cosine = std::min(run.least_cosine, e2e::cosine(got[i], want[i]));
    return run;
}

}  // namespace

// A file quantized by onnxruntime (DynamicQuantizeLinear, MatMulInteger by s8 weights, the
// rescaling Muls) runs as ONNX Runtime runs it: the integer products are exact on both sides,
// so what differs is the f32 arithmetic around them and, rarely, an activation that rounds to
// the other neighbouring step.
namespace {

// ONNX Runtime's u8×s8 products on a CPU without VNNI (AVX2 only) use vpmaddubsw, whose i16 pair
// sums saturate (255·127·2 does not fit): its outputs there are not the exact integer products'
// (ours widen to i16 and are exact; the op tests check them against float64). Seen on a Zen 3:
// the same library that matched to 1e-3 on VNNI machines differed by 5% (QDQ: cosine 0.91).
// There the comparison is printed, not checked.
bool ort_int8_exact_here() {
    return __builtin_cpu_supports("avx512vnni") || __builtin_cpu_supports("avxvnni");
}

}  // namespace

TEST_CASE("all-MiniLM-L6-v2 quantized by onnxruntime matches onnxruntime's output", "[models][minilm][int8]") {
    if (!e2e::device_under_test().is_cpu()) {
        SUCCEED("the integer ops run on the CPU only so far");
        return;
    }
    const OrtQuantizedRun run = run_ort_quantized("all-MiniLM-L6-v2-int8-ort");
    CHECK(run.integer_products >= 36);  // every weight product
    const auto [error, scale] = max_errors(run.hidden, run.reference, run.inputs["attention_mask"]);
    std::cout << "e2e: all-MiniLM-L6-v2 quantized by onnxruntime, cpu: max |error| " << std::setprecision(3) << error
              << " (of max " << scale << "), least embedding cosine 1 - " << std::setprecision(2) << 1 - run.least_cosine << "\n";
    if (!ort_int8_exact_here()) {
        WARN("no VNNI on this CPU: onnxruntime's int8 products saturate here, its output is not checked against");
        return;
    }
    CHECK(error / scale <= 2e-2);
    CHECK(run.least_cosine >= 0.9995);
}

namespace {

// A statically quantized MiniLM against ONNX Runtime's output on the same file: its 48 products
// (the weights' and attention's 12 of two activations) ran as integer products. Static
// activation scales make a few values round to the neighbouring step on one side and not the
// other (ONNX Runtime's own float and integer readings of such a file differ as much), so the
// check is on the mean error and the sentence embeddings.
void check_statically_quantized(const std::string& model, const std::string& form) {
    const OrtQuantizedRun run = run_ort_quantized(model);
    CHECK(run.integer_products == 48);
    const std::vector<float> got = run.hidden.to_vector<float>(), want = run.reference.to_vector<float>();
    REQUIRE(got.size() == want.size());
    double mean_error = 0, scale = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        mean_error += std::fabs(got[i] - want[i]) / static_cast<double>(got.size());
        scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
    }
    std::cout << "e2e: all-MiniLM-L6-v2 " << form << " by onnxruntime, cpu: mean |error| " << std::setprecision(3)
              << mean_error << " (of max " << scale << "), least embedding cosine 1 - " << std::setprecision(2)
              << 1 - run.least_cosine << "\n";
    if (!ort_int8_exact_here()) {
        WARN("no VNNI on this CPU: onnxruntime's int8 products saturate here, its output is not checked against");
        return;
    }
    CHECK(mean_error / scale <= 1e-3);
    CHECK(run.least_cosine >= 0.99);
}

}  // namespace

// quantize_static's QDQ format (MatMuls only, weights per channel): each DequantizeLinear pair
// around a product, with the output's Q/DQ and the bias after it, becomes one
// MatMulIntegerToFloat, as ONNX Runtime fuses them.
TEST_CASE("all-MiniLM-L6-v2 quantized to QDQ by onnxruntime matches onnxruntime's output", "[models][minilm][int8]") {
    if (!e2e::device_under_test().is_cpu()) {
        SUCCEED("the integer ops run on the CPU only so far");
        return;
    }
    check_statically_quantized("all-MiniLM-L6-v2-qdq-ort", "QDQ");
}

// The operator format (QLinearMatMul, weights per tensor), run as the file has it.
TEST_CASE("all-MiniLM-L6-v2 quantized to QLinearMatMul by onnxruntime matches onnxruntime's output", "[models][minilm][int8]") {
    if (!e2e::device_under_test().is_cpu()) {
        SUCCEED("the integer ops run on the CPU only so far");
        return;
    }
    check_statically_quantized("all-MiniLM-L6-v2-qop-ort", "QLinearMatMul");
}

TEST_CASE("prepared architectures match the framework's output", "[architectures]") {
    // Name outermost: one model's graph is loaded at a time (GPT-2 small is 650 MB in f32).
    const std::string name = GENERATE(from_range(e2e::architecture_models()));
    const auto precision = GENERATE(infer::Precision::f32, infer::Precision::f16, infer::Precision::bf16);
    const fs::path folder = e2e::model_cache() / name;
    if (!fs::exists(folder / "manifest.json")) {
        WARN(name << " is not prepared in " << e2e::model_cache().string()
                  << " (scripts/models/prepare.sh " << name << "): not compared");
        return;
    }
    const auto manifest = read_json(folder / "manifest.json");
    const auto output_name = manifest.value("output", std::string("last_hidden_state"));
    const auto started = std::chrono::steady_clock::now();
    const infer::Graph& graph = load_one_graph(folder);
    infer::Batch inputs;
    for (size_t i = 0; i < graph.inputs().size(); ++i)
        inputs.set(graph.inputs()[i].name,
                   infer::load_npy((folder / "test_data_set_0" / ("input_" + std::to_string(i) + ".npy")).string()));
    infer::SessionOptions options;
    options.device = e2e::device_under_test();
    options.precision = precision;
    const infer::Session session(graph, options);
    const auto compiled = std::chrono::steady_clock::now();
    const infer::Tensor output = session.run(inputs)[output_name].to(infer::Device::CPU);
    const auto ran = std::chrono::steady_clock::now();
    const infer::Tensor reference = infer::load_npy((folder / "test_data_set_0" / "output_0.npy").string());
    REQUIRE(output.shape().dims() == reference.shape().dims());

    // Text models: only the real tokens (attention mask 1) count, per position of [batch, sequence].
    const infer::Tensor* mask = inputs.contains("attention_mask") && reference.rank() >= 3 ? &inputs["attention_mask"] : nullptr;
    const auto [error, scale] = max_errors(output, reference, mask);
    const Tolerance limit = tolerance(precision);
    std::cout << "e2e: " << name << " " << label(precision) << ": " << output_name << " max |error| "
              << std::setprecision(3) << error << " (of max " << scale << ", relative " << error / scale << ")";
    if (output_name == "logits") {
        const auto agreement = argmax_agreement(output, reference, mask, 2 * limit.hidden_relative * scale);
        std::cout << ", argmax agrees on " << agreement.agree << "/" << agreement.rows << " rows";
        // Wherever the reference's top two differ by more than twice the tolerated error, the
        // tolerance itself implies the same argmax: this catches a permuted or shifted class axis.
        CHECK(agreement.clear_disagree == 0);
        if (precision == infer::Precision::f32) CHECK(agreement.agree == agreement.rows);
    }
    using seconds = std::chrono::duration<double>;
    std::cout << "; load+compile " << std::setprecision(2) << seconds(compiled - started).count() << " s, run "
              << seconds(ran - compiled).count() << " s\n";
    CHECK(error / scale <= limit.hidden_relative);
}

// The CNN matrix's class agreement on many inputs (issue: ≥ 99% where there are classes): the
// image classifiers among the architectures, 200 seeded N(0, 1) images in batches of 25, each
// precision's argmax against this device's own f32 run (int8: below). Random weights leave near-ties between
// classes that f16/bf16 rounding may swap (EfficientNet-B0 in bf16 swaps 4-5 of 200 on the CPU),
// so a swap fails only where the f32 logits of the two classes differ by more than the
// precision's tolerated error (tolerance(), relative to the row's largest logit). The f32 run's
// distinct classes are printed too: several random-weight networks put every image in one class,
// where agreement is trivial.
TEST_CASE("image classifiers in f16, bf16 and int8 pick the f32 run's class for 200 images", "[architectures]") {
    constexpr int64_t kImages = 200, kBatch = 25;
    for (const std::string& name : e2e::architecture_models()) {
        const fs::path folder = e2e::model_cache() / name;
        if (!fs::exists(folder / "manifest.json") ||
            read_json(folder / "manifest.json").value("output", std::string()) != "logits")
            continue;
        const infer::Graph& graph = load_one_graph(folder);
        const infer::TensorInfo& input = graph.inputs().at(0);
        if (graph.inputs().size() != 1 || input.shape.rank() != 4 || input.dtype != infer::DType::f32) continue;
        std::vector<int64_t> dims = input.shape.dims();
        dims[0] = kBatch;
        for (int64_t& d : dims) if (d == infer::kDynamic) d = 224;
        const infer::Shape shape(dims);
        std::mt19937 random(7);
        std::normal_distribution<float> normal;
        std::vector<infer::Tensor> images;
        for (int64_t i = 0; i < kImages; i += kBatch) {
            std::vector<float> values(static_cast<size_t>(shape.numel()));
            for (float& v : values) v = normal(random);
            images.push_back(infer::Tensor::from_vector(values, shape));
        }
        const auto logits_of = [&](infer::Precision precision) {  // [images][classes]
            infer::SessionOptions options;
            options.device = e2e::device_under_test();
            options.precision = precision;
            const infer::Session session(graph, options);
            std::vector<std::vector<float>> rows;
            for (const infer::Tensor& batch : images) {
                infer::Batch inputs;
                inputs.set(input.name, batch);
                const infer::Tensor logits = session.run(inputs)["logits"].to(infer::Device::CPU);
                const auto values = logits.to_vector<float>();
                const auto width = static_cast<size_t>(logits.shape()[1]);
                for (size_t row = 0; row < values.size() / width; ++row)
                    rows.emplace_back(values.begin() + static_cast<std::ptrdiff_t>(row * width),
                                      values.begin() + static_cast<std::ptrdiff_t>((row + 1) * width));
            }
            return rows;
        };
        const auto argmax = [](const std::vector<float>& row) {
            return static_cast<size_t>(std::max_element(row.begin(), row.end()) - row.begin());
        };
        const auto reference = logits_of(infer::Precision::f32);
        std::set<size_t> distinct;
        for (const auto& row : reference) distinct.insert(argmax(row));
        for (const infer::Precision precision : {infer::Precision::f16, infer::Precision::bf16, infer::Precision::int8}) {
            const auto got = logits_of(precision);
            size_t agree = 0, near_ties = 0;
            double worst = 0;  // the largest |error| of a row relative to its largest f32 logit
            for (size_t i = 0; i < reference.size(); ++i) {
                double largest = 0, error = 0;
                for (size_t j = 0; j < reference[i].size(); ++j) {
                    largest = std::max(largest, std::fabs(double(reference[i][j])));
                    error = std::max(error, std::fabs(double(got[i][j]) - reference[i][j]));
                }
                worst = std::max(worst, error / largest);
                const size_t want = argmax(reference[i]), chosen = argmax(got[i]);
                if (chosen == want) {
                    ++agree;
                    continue;
                }
                const double margin = double(reference[i][want]) - reference[i][chosen];
                near_ties += margin <= tolerance(precision).hidden_relative * largest;
            }
            std::cout << "e2e: " << name << " " << label(precision) << ": argmax agrees with f32 on " << agree << "/"
                      << reference.size() << " images (the others near-ties: " << near_ties << "; f32 chose "
                      << distinct.size() << " distinct classes); largest error " << std::setprecision(2) << worst
                      << " of a row's largest logit\n";
            // int8's tolerance (1e-1 of the largest logit) would excuse most swaps as near-ties.
            // The int8 issue's bar, top-1 agreement on 99% of the inputs, is for the ResNets
            // (random ResNets put all 200 images in one class, so it only catches a class moved by
            // int8's error); the other classifiers' agreement is printed (EfficientNet-B0, 59
            // classes, 185/200 on 2 Zen 3 cores: its squeeze-excite scales and depthwise layers
            // stay f32, its 1x1 layers' activations quantized per tensor).
            if (precision != infer::Precision::int8) CHECK(agree + near_ties == reference.size());
            else if (name.rfind("resnet", 0) == 0) CHECK(agree >= reference.size() * 99 / 100);
        }
    }
}

// The text encoders among the architectures (DistilBERT, BERT-base) in int8 against this
// device's own f32 run on 200 sequences (8 batches of 25, up to 32 tokens, lengths drawn from
// 8 to 32, token ids in [1000, 2000)): each sequence's embedding (its tokens' hidden states
// averaged over the mask, as sentence-transformers pools) within cosine 0.99 of f32's, the int8
// issue's bar for MiniLM. Printed beside it: the largest error of a token's hidden state relative
// to f32's largest value, and how often the token's largest feature stays the same (the issue
// asks for top-1 agreement; these random-weight exports have no classifier head).
TEST_CASE("text encoders in int8 keep each sequence's embedding for 200 sequences", "[architectures][int8]") {
    constexpr int64_t kBatches = 8, kBatch = 25, kLength = 32;
    for (const std::string& name : e2e::architecture_models()) {
        const fs::path folder = e2e::model_cache() / name;
        if (!fs::exists(folder / "manifest.json") ||
            read_json(folder / "manifest.json").value("output", std::string("last_hidden_state")) != "last_hidden_state")
            continue;
        const infer::Graph& graph = load_one_graph(folder);
        const auto& inputs = graph.inputs();
        if (inputs.size() < 2 || inputs.size() > 3 || inputs[0].name != "input_ids" || inputs[1].name != "attention_mask" ||
            (inputs.size() == 3 && inputs[2].name != "token_type_ids"))
            continue;
        std::mt19937 random(11);
        std::uniform_int_distribution<int64_t> token(1000, 1999), length(8, kLength);
        std::vector<infer::Batch> batches;
        std::vector<std::vector<int64_t>> masks;
        for (int64_t b = 0; b < kBatches; ++b) {
            std::vector<int64_t> ids(kBatch * kLength), mask(kBatch * kLength, 0);
            for (int64_t i = 0; i < kBatch; ++i) {
                const int64_t tokens = length(random);
                for (int64_t t = 0; t < kLength; ++t) {
                    ids[i * kLength + t] = t < tokens ? token(random) : 0;
                    mask[i * kLength + t] = t < tokens;
                }
            }
            infer::Batch batch;
            batch.set("input_ids", infer::Tensor::from_vector(ids, {kBatch, kLength}));
            batch.set("attention_mask", infer::Tensor::from_vector(mask, {kBatch, kLength}));
            if (inputs.size() == 3) batch.set("token_type_ids", infer::Tensor::from_vector(std::vector<int64_t>(ids.size(), 0), {kBatch, kLength}));
            batches.push_back(std::move(batch));
            masks.push_back(std::move(mask));
        }
        const auto hidden_of = [&](infer::Precision precision) {  // per batch, [kBatch, kLength, width]
            infer::SessionOptions options;
            options.device = e2e::device_under_test();
            options.precision = precision;
            const infer::Session session(graph, options);
            std::vector<std::vector<float>> out;
            for (const infer::Batch& batch : batches)
                out.push_back(session.run(batch)["last_hidden_state"].to(infer::Device::CPU).to_vector<float>());
            return out;
        };
        const auto reference = hidden_of(infer::Precision::f32), got = hidden_of(infer::Precision::int8);
        const size_t width = reference[0].size() / (kBatch * kLength);
        double least_cosine = 1, largest = 0, error = 0;
        size_t tokens = 0, same_top = 0;
        for (size_t b = 0; b < reference.size(); ++b)
            for (size_t i = 0; i < static_cast<size_t>(kBatch); ++i) {
                std::vector<float> pooled_f32(width, 0.0f), pooled_int8(width, 0.0f);
                for (size_t t = 0; t < static_cast<size_t>(kLength); ++t) {
                    if (!masks[b][i * kLength + t]) continue;
                    const float* w = &reference[b][(i * kLength + t) * width];
                    const float* g = &got[b][(i * kLength + t) * width];
                    for (size_t j = 0; j < width; ++j) {
                        pooled_f32[j] += w[j];
                        pooled_int8[j] += g[j];
                        largest = std::max(largest, std::fabs(double(w[j])));
                        error = std::max(error, std::fabs(double(g[j]) - w[j]));
                    }
                    ++tokens;
                    same_top += std::max_element(w, w + width) - w == std::max_element(g, g + width) - g;
                }
                least_cosine = std::min(least_cosine, e2e::cosine(pooled_f32, pooled_int8));
            }
        std::cout << "e2e: " << name << " " << label(infer::Precision::int8) << ", 200 sequences: least cosine of an embedding to f32's 1 - "
                  << std::setprecision(2) << 1 - least_cosine << ", largest error " << error / largest
                  << " of the largest hidden value, a token's largest feature the same on " << same_top << "/" << tokens
                  << " tokens\n";
        CHECK(least_cosine >= 0.99);
    }
}

// ResNet-50 quantized by ONNX Runtime (quantize_static, QDQ, every convolution): each
// DequantizeLinear pair around a convolution, with the Q/DQ grid after it, runs as one
// ConvIntegerToFloat. Over 53 requantized layers a value that rounds to the neighbouring step
// on one side and not the other carries on, so the check is the argmax and the error against
// ONNX Runtime's output beside ONNX Runtime's own error against the f32 model (measured on a Zen 4
// with VNNI: ours 0.17% mean and 1.5% largest of the largest logit, ONNX Runtime's against f32
// 0.42% and 1.8%; on a Zen 3 with AVX2 only 0.226% and 1.5% against 0.437%: there ONNX Runtime's
// u8 x s8 kernel adds pairs of products in 16 bits (vpmaddubsw), which its documentation warns
// may saturate, while ours adds them exactly).
TEST_CASE("ResNet-50 quantized to QDQ by onnxruntime matches onnxruntime's output", "[architectures][int8]") {
    const fs::path folder = e2e::model_cache() / "resnet50-qdq-ort", f32_folder = e2e::model_cache() / "resnet50-random";
    if (!fs::exists(folder / "manifest.json") || !fs::exists(f32_folder / "manifest.json")) {
        WARN("resnet50-qdq-ort is not prepared (scripts/models/prepare.sh resnet50-qdq-ort): not compared");
        return;
    }
    if (!e2e::device_under_test().is_cpu()) {
        SUCCEED("the integer convolutions run on the CPU only so far");
        return;
    }
    const infer::Graph& graph = load_one_graph(folder);
    infer::Batch inputs;
    inputs.set(graph.inputs()[0].name, infer::load_npy((folder / "test_data_set_0" / "input_0.npy").string()));
    const infer::Session session(graph);
    const auto histogram = session.op_histogram();
    // Every convolution an integer one: requantizing (QLinearConv) where only the QuantizeLinear
    // of the next layer's input reads it, else dequantizing; the requantizing ones channel-last
    // (passes/channels_last.cpp), with a Transpose where the stretch begins and ends.
    const auto count = [&](const char* op) { return histogram.count(op) ? histogram.at(op) : size_t{0}; };
    CHECK(count("Conv") == 0);
    CHECK(count("ChannelsLastQLinearConv") >= 50);
    CHECK(count("QLinearConv") + count("ChannelsLastQLinearConv") + count("ConvIntegerToFloat") == 53);
    CHECK(count("Transpose") <= 4);
    const std::vector<float> got = session.run(inputs)["logits"].to_vector<float>();
    const std::vector<float> want = infer::load_npy((folder / "test_data_set_0" / "output_0.npy").string()).to_vector<float>();
    const std::vector<float> f32 = infer::load_npy((f32_folder / "test_data_set_0" / "output_0.npy").string()).to_vector<float>();
    REQUIRE(got.size() == want.size());
    double scale = 0, largest = 0, mean = 0, ort_mean = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        scale = std::max(scale, std::fabs(double(want[i])));
        largest = std::max(largest, std::fabs(double(got[i]) - want[i]));
        mean += std::fabs(double(got[i]) - want[i]) / static_cast<double>(want.size());
        ort_mean += std::fabs(double(f32[i]) - want[i]) / static_cast<double>(want.size());
    }
    const size_t classes = want.size() / 2;
    for (size_t row = 0; row < 2; ++row) {
        const auto argmax = [&](const std::vector<float>& v) {
            return std::max_element(v.begin() + row * classes, v.begin() + (row + 1) * classes) - (v.begin() + row * classes);
        };
        CHECK(argmax(got) == argmax(want));
    }
    std::cout << "e2e: resnet50-qdq-ort, cpu: against onnxruntime mean |error| " << std::setprecision(3) << mean / scale
              << ", largest " << largest / scale << " of the largest logit; onnxruntime's own mean error against f32 "
              << ort_mean / scale << "\n";
    CHECK(mean <= 0.6 * ort_mean);
    CHECK(largest / scale <= 3e-2);
}
