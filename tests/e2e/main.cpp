// The main of the end-to-end tests. Options of its own, before Catch2's:
//   --device NAME   run the model tests on that device (default cpu); exits 77 (ctest: skipped)
//                   when the device is not available in this build or on this machine
//   --models        the tests selected need the prepared models: exit 77 with a message when
//                   the cache is absent (run scripts/models/prepare.sh)
//   --architectures the tests selected need at least one of the random-weight architectures:
//                   exit 77 with a message when none is prepared (each one missing is skipped
//                   with a warning by the test itself)
//   --checkpoints   the same for the random-weight Hugging Face checkpoints
//   --tokenizers    the same for the generation tokenizers (gpt2-bpe-tokenizer, t5-unigram-tokenizer)
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "e2e.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <tuple>

namespace e2e {

namespace {
infer::Device g_device = infer::Device::CPU;
}

const std::filesystem::path& model_cache() {
    static const std::filesystem::path cache = [] {
        const char* env = std::getenv("INFER_MODEL_CACHE");
        return std::filesystem::path(env && *env ? env : INFER_E2E_MODEL_CACHE);
    }();
    return cache;
}

const infer::Device& device_under_test() { return g_device; }

const std::vector<std::string>& architecture_models() {
    static const std::vector<std::string> names{"distilbert-base-random", "bert-base-random", "gpt2-small-random",
                                                "resnet50-random", "vit-base-random", "resnet18-random",
                                                "mobilenet-v3-small-random", "efficientnet-b0-random",
                                                "mobilenet-v2-random", "densenet121-random", "convnext-tiny-random",
                                                "fcn-resnet50-random", "fpn-resnet50-random"};
    return names;
}

const std::vector<std::string>& checkpoint_models() {
    static const std::vector<std::string> names{"bert-tiny-checkpoint", "roberta-tiny-checkpoint",
                                                "distilbert-tiny-checkpoint", "gpt2-tiny-checkpoint",
                                                "gpt2-tiny-generation",  "bert-base-checkpoint",
                                                "distilbert-base-checkpoint", "gpt2-small-checkpoint"};
    return names;
}

const std::vector<std::string>& generation_tokenizer_models() {
    static const std::vector<std::string> names{"gpt2-bpe-tokenizer", "t5-unigram-tokenizer"};
    return names;
}

namespace {
// Whether any of `names` is prepared in the model cache.
bool any_prepared(const std::vector<std::string>& names) {
    return std::any_of(names.begin(), names.end(), [](const std::string& name) {
        return std::filesystem::exists(model_cache() / name / "manifest.json");
    });
}
}  // namespace

std::vector<std::vector<float>> mean_pool_normalized(const infer::Tensor& hidden, const infer::Tensor& mask) {
    const auto values = hidden.to_vector<float>();
    const auto weights = mask.to_vector<int64_t>();
    const auto count = static_cast<size_t>(hidden.shape()[0]);
    const auto length = static_cast<size_t>(hidden.shape()[1]);
    const auto dim = static_cast<size_t>(hidden.shape()[2]);
    std::vector<std::vector<float>> embeddings(count, std::vector<float>(dim, 0.0f));
    for (size_t i = 0; i < count; ++i) {
        std::vector<double> sum(dim, 0.0);
        double tokens = 0;
        for (size_t t = 0; t < length; ++t) {
            if (weights[i * length + t] == 0) continue;
            tokens += 1;
            const float* row = &values[(i * length + t) * dim];
            for (size_t d = 0; d < dim; ++d) sum[d] += row[d];
        }
        double norm = 0;
        for (double& s : sum) {
            s /= std::max(tokens, 1e-9);
            norm += s * s;
        }
        norm = std::max(std::sqrt(norm), 1e-12);
        for (size_t d = 0; d < dim; ++d) embeddings[i][d] = static_cast<float>(sum[d] / norm);
    }
    return embeddings;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
    double dot = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        dot += double(a[i]) * b[i];
        aa += double(a[i]) * a[i];
        bb += double(b[i]) * b[i];
    }
    return dot / std::sqrt(aa * bb);
}

}  // namespace e2e

int main(int argc, char** argv) {
    constexpr int kSkipped = 77;
    bool needs_models = false, needs_architectures = false, needs_checkpoints = false, needs_tokenizers = false;
    std::vector<char*> catch_args{argv[0]};
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string arg = argv[i];
            if (arg == "--device" && i + 1 < argc) e2e::g_device = infer::Device::parse(argv[++i]);
            else if (arg == "--models") needs_models = true;
            else if (arg == "--architectures") needs_architectures = true;
            else if (arg == "--checkpoints") needs_checkpoints = true;
            else if (arg == "--tokenizers") needs_tokenizers = true;
            else catch_args.push_back(argv[i]);
        }
    } catch (const std::exception& e) {
        std::cerr << "e2e: " << e.what() << "\n";
        return 1;
    }
    if (!e2e::device_under_test().is_cpu()) {
        const auto devices = infer::available_devices();
        if (std::find(devices.begin(), devices.end(), e2e::device_under_test()) == devices.end()) {
            std::cout << "e2e: " << e2e::device_under_test().to_string()
                      << " is not available (not built, or no such device here): skipping\n";
            return kSkipped;
        }
    }
    if (needs_models && !std::filesystem::exists(e2e::model_cache() / "all-MiniLM-L6-v2" / "manifest.json")) {
        std::cout << "e2e: no prepared models in " << e2e::model_cache().string()
                  << " (run scripts/models/prepare.sh): skipping\n";
        return kSkipped;
    }
    for (const auto& [needed, names, what] :
         {std::tuple{needs_architectures, &e2e::architecture_models(), "random-weight architectures"},
          std::tuple{needs_checkpoints, &e2e::checkpoint_models(), "random-weight checkpoints"},
          std::tuple{needs_tokenizers, &e2e::generation_tokenizer_models(), "generation tokenizers"}})
        if (needed && !e2e::any_prepared(*names)) {
            std::cout << "e2e: none of the " << what << " is prepared in " << e2e::model_cache().string()
                      << " (run scripts/models/prepare.sh): skipping\n";
            return kSkipped;
        }
    return Catch::Session().run(static_cast<int>(catch_args.size()), catch_args.data());
}
