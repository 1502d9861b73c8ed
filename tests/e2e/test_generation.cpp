// Generation with the key/value cache against transformers' generate() ([generation], ctest
// e2e_generation_*): the random-weight GPT-2 of gpt2-tiny-generation and T5 of
// t5-tiny-generation, 3 prompts of different lengths as one batch, greedy (with and without a repetition penalty) and beam
// search with 4 beams, token ids compared exactly in f32; in f16 greedy search may leave
// generate()'s ids only where generate()'s own choice was a near tie (prepare.py writes each
// choice's lead), and for GPT-2 the next token given generate()'s own tokens before it must
// agree at 95% of the positions (a near tie then costs one position, not every later one), and
// beam search must agree at 95% of the positions on the tiny models. The same comparison runs on GPT-2 small and T5-small themselves
// (gpt2-small-generation, t5-small-generation) where they are prepared: they are large, so only
// when named to prepare.sh. And what generate() does not fix: each prompt alone gives what
// the batch gave it, sampling is reproducible by its seed, tokens stream in order, bad requests
// are errors.
#include <catch2/catch.hpp>

#include "e2e.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <thread>

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kModels{"gpt2-tiny-generation", "t5-tiny-generation"};
const std::vector<std::string> kModelsWithFullSize{"gpt2-tiny-generation", "t5-tiny-generation", "gpt2-small-generation",
                                                   "t5-small-generation"};

// A near tie: generate()'s token led the runner-up by at most this many standard deviations of
// that step's scores (random-weight GPT-2 small's f16 and bf16 runs leave generate() at leads
// of 1.3e-3 to 2e-2; a wrong kernel picks tokens that led by tenths).
constexpr double kNearTie = 5e-3;

fs::path generation_folder(const std::string& name = kModels[0]) { return e2e::model_cache() / name; }

nlohmann::json references(const std::string& name = kModels[0]) {
    std::ifstream file(generation_folder(name) / "generation.json");
    return nlohmann::json::parse(file);
}

infer::Generator generator(infer::Precision precision, const std::string& name = kModels[0]) {
    infer::SessionOptions options;
    options.device = e2e::device_under_test();
    options.precision = precision;
    return infer::Generator::from_folder(generation_folder(name).string(), options);
}

infer::GenerationOptions options_of(const nlohmann::json& c) {
    infer::GenerationOptions options;
    options.max_new_tokens = c["max_new_tokens"].get<size_t>();
    options.num_beams = c.value("num_beams", size_t{1});
    options.repetition_penalty = c.value("repetition_penalty", 1.0f);
    return options;
}

// Positions where got and want agree, and how many positions want has.
std::pair<size_t, size_t> agreement(const std::vector<std::vector<int64_t>>& got, const std::vector<std::vector<int64_t>>& want) {
    size_t same = 0, total = 0;
    for (size_t p = 0; p < want.size(); ++p)
        for (size_t i = 0; i < want[p].size(); ++i) {
            ++total;
            same += i < got[p].size() && got[p][i] == want[p][i];
        }
    return {same, total};
}

// A decoder-only model's greedy choice at every position of `want` given generate()'s tokens
// before it (prompt and earlier new tokens as one left-padded batch of prompts, one new token
// each), against generate()'s: how many agree, of how many.
std::pair<size_t, size_t> agreement_given_prefixes(const infer::Generator& model, const std::vector<std::vector<int64_t>>& prompts,
                                                   const std::vector<std::vector<int64_t>>& want,
                                                   infer::GenerationOptions options) {
    std::vector<std::vector<int64_t>> prefixes;
    std::vector<int64_t> next;
    for (size_t p = 0; p < want.size(); ++p)
        for (size_t i = 0; i < want[p].size(); ++i) {
            std::vector<int64_t> prefix = prompts[p];
            prefix.insert(prefix.end(), want[p].begin(), want[p].begin() + static_cast<std::ptrdiff_t>(i));
            prefixes.push_back(std::move(prefix));
            next.push_back(want[p][i]);
        }
    options.max_new_tokens = 1;
    const infer::Generation got = model.generate(prefixes, options);
    size_t same = 0;
    for (size_t i = 0; i < next.size(); ++i) same += !got.tokens[i].empty() && got.tokens[i][0] == next[i];
    return {same, next.size()};
}

#define REQUIRE_PREPARED_MODEL(name)                                                                              \
    if (!fs::exists(generation_folder(name) / "generation.json")) {                                               \
        WARN((name) << " is not prepared (scripts/models/prepare.sh " << (name) << ")");                          \
        return;                                                                                                   \
    }
#define REQUIRE_PREPARED() REQUIRE_PREPARED_MODEL(kModels[0])

}  // namespace

TEST_CASE("greedy and beam search match transformers' generate() token for token", "[generation]") {
    const std::string name = GENERATE(from_range(kModelsWithFullSize));
    REQUIRE_PREPARED_MODEL(name);
    const auto json = references(name);
    const auto prompts = json["prompts"].get<std::vector<std::vector<int64_t>>>();
    // f16 on the CPU too: 16-bit weights, widened for the arithmetic.
    const std::vector<infer::Precision> precisions{infer::Precision::f32, infer::Precision::f16};
    for (infer::Precision precision : precisions) {
        const infer::Generator model = generator(precision, name);
        REQUIRE(model.end_of_text() == json["eos_token_id"].get<int64_t>());
        for (const auto& c : json["cases"]) {
            const auto want = c["tokens"].get<std::vector<std::vector<int64_t>>>();
            const infer::Generation got = model.generate(prompts, options_of(c));
            const auto [same, total] = agreement(got.tokens, want);
            std::cout << "e2e: " << name << " " << c["name"].get<std::string>() << " " << e2e::device_under_test().to_string()
                      << " " << infer::precision_name(precision) << ": " << same << "/" << total
                      << " positions agree with generate(); prefill " << got.stats.prefill_ms << " ms, "
                      << got.stats.decode_tokens_per_s() << " tokens/s\n";
            if (precision == infer::Precision::f32) {
                CHECK(got.tokens == want);
            } else if (c.contains("leads")) {
                // Greedy in f16: each sequence as generate()'s up to a first difference, and that
                // one only where generate()'s choice led the runner-up by a near tie (f16's
                // rounding may then pick the runner-up, and every later token differs).
                const auto leads = c["leads"].get<std::vector<std::vector<double>>>();
                if (name.rfind("gpt2", 0) == 0) {
                    // Position by position, each given generate()'s own tokens before it: one
                    // difference then costs one position, not all that follow.
                    const auto [forced_same, forced_total] = agreement_given_prefixes(model, prompts, want, options_of(c));
                    std::cout << "e2e: " << name << " " << c["name"].get<std::string>() << " "
                              << e2e::device_under_test().to_string() << " " << infer::precision_name(precision)
                              << ": " << forced_same << "/" << forced_total
                              << " next tokens agree given generate()'s prefixes\n";
                    CHECK(static_cast<double>(forced_same) >= 0.95 * static_cast<double>(forced_total));
                }
                for (size_t p = 0; p < want.size(); ++p) {
                    size_t first = 0;
                    while (first < want[p].size() && first < got.tokens[p].size() && got.tokens[p][first] == want[p][first])
                        ++first;
                    if (first == want[p].size() && got.tokens[p].size() == want[p].size()) continue;
                    INFO("prompt " << p << " differs first at new token " << first << " of " << want[p].size());
                    REQUIRE(first < leads[p].size());
                    CHECK(leads[p][first] <= kNearTie);
                }
            } else if (name.find("tiny") != std::string::npos) {
                // Beams in f16 on the tiny models, whose weights are spread so that their scores
                // decide (prepare.py's PERTURBATION). The full-size random models' beam scores
                // hold near ties that no lead recorded yet identifies: printed above, not compared.
                CHECK(static_cast<double>(same) >= 0.95 * static_cast<double>(total));
            }
        }
    }
}

TEST_CASE("a prompt alone gives what the padded batch gave it", "[generation]") {
    const std::string name = GENERATE(from_range(kModels));
    REQUIRE_PREPARED_MODEL(name);
    const auto json = references(name);
    const auto prompts = json["prompts"].get<std::vector<std::vector<int64_t>>>();
    const auto want = json["cases"][0]["tokens"].get<std::vector<std::vector<int64_t>>>();
    const infer::Generator model = generator(infer::Precision::f32, name);
    for (size_t p = 0; p < prompts.size(); ++p)
        CHECK(model.generate({prompts[p]}, options_of(json["cases"][0])).tokens[0] == want[p]);
}

TEST_CASE("one generator serves several threads at once, each call with its own cache", "[generation]") {
    const std::string name = GENERATE(from_range(kModels));
    REQUIRE_PREPARED_MODEL(name);
    const auto json = references(name);
    const auto prompts = json["prompts"].get<std::vector<std::vector<int64_t>>>();
    const auto want = json["cases"][0]["tokens"].get<std::vector<std::vector<int64_t>>>();
    const infer::Generator model = generator(infer::Precision::f32, name);
    std::vector<std::vector<std::vector<int64_t>>> got(6);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < got.size(); ++t)
        threads.emplace_back([&, t] { got[t] = model.generate(prompts, options_of(json["cases"][0])).tokens; });
    for (auto& thread : threads) thread.join();
    for (const auto& tokens : got) CHECK(tokens == want);
}

TEST_CASE("sampling is reproducible by its seed, and top-k 1 is greedy", "[generation]") {
    REQUIRE_PREPARED();
    const auto json = references();
    const auto prompts = json["prompts"].get<std::vector<std::vector<int64_t>>>();
    const infer::Generator model = generator(infer::Precision::f32);
    infer::GenerationOptions options;
    options.max_new_tokens = 24;
    options.do_sample = true;
    options.temperature = 1.5f;
    options.top_p = 0.95f;
    options.seed = 7;
    const auto first = model.generate(prompts, options).tokens;
    CHECK(model.generate(prompts, options).tokens == first);
    options.seed = 8;
    CHECK(model.generate(prompts, options).tokens != first);

    options.top_k = 1;
    std::vector<std::pair<size_t, int64_t>> streamed;
    const auto sampled = model.generate(prompts, options, [&](size_t sequence, int64_t token) { streamed.emplace_back(sequence, token); });
    infer::GenerationOptions greedy;
    greedy.max_new_tokens = 24;
    CHECK(sampled.tokens == model.generate(prompts, greedy).tokens);
    // Every token streamed once, each sequence's in order.
    std::vector<std::vector<int64_t>> from_stream(prompts.size());
    for (const auto& [sequence, token] : streamed) from_stream.at(sequence).push_back(token);
    CHECK(from_stream == sampled.tokens);
}

TEST_CASE("min_new_tokens keeps the stop tokens out until then, chosen on the device as on the host", "[generation]") {
    const std::string name = GENERATE(from_range(kModels));
    REQUIRE_PREPARED_MODEL(name);
    const auto prompts = references(name)["prompts"].get<std::vector<std::vector<int64_t>>>();
    const infer::Generator model = generator(infer::Precision::f32, name);
    infer::GenerationOptions options;
    options.max_new_tokens = 12;
    // Stop at the tokens greedy search picks third: without min_new_tokens each sequence ends there.
    const auto free = model.generate(prompts, options).tokens;
    for (const auto& tokens : free) options.stop_tokens.push_back(tokens.at(2));
    for (const auto& tokens : model.generate(prompts, options).tokens) CHECK(tokens.size() <= 3);
    options.min_new_tokens = 8;
    const auto held = model.generate(prompts, options).tokens;  // greedy: ArgMax with a logit bias on the device
    for (const auto& tokens : held) {
        REQUIRE(tokens.size() >= 8);
        for (size_t i = 0; i < 8; ++i)
            CHECK(std::find(options.stop_tokens.begin(), options.stop_tokens.end(), tokens[i]) == options.stop_tokens.end());
    }
    // The host's choice (sampling restricted to the top token) forbids the same tokens.
    options.do_sample = true;
    options.top_k = 1;
    CHECK(model.generate(prompts, options).tokens == held);
}

TEST_CASE("bad generation requests are InvalidArgument and the generator stays usable", "[generation]") {
    REQUIRE_PREPARED();
    const infer::Generator model = generator(infer::Precision::f32);
    infer::GenerationOptions options;
    options.max_new_tokens = 4;
    CHECK_THROWS_AS(model.generate({}, options), infer::InvalidArgument);
    CHECK_THROWS_AS(model.generate({{}}, options), infer::InvalidArgument);
    CHECK_THROWS_AS(model.generate({{5, model.vocabulary_size()}}, options), infer::InvalidArgument);
    CHECK_THROWS_AS(model.generate({{-1}}, options), infer::InvalidArgument);
    options.max_new_tokens = static_cast<size_t>(model.max_positions());
    CHECK_THROWS_AS(model.generate({{5, 6}}, options), infer::InvalidArgument);
    options.max_new_tokens = 4;
    options.num_beams = 2;
    options.do_sample = true;
    CHECK_THROWS_AS(model.generate({{5, 6}}, options), infer::InvalidArgument);
    options = {};
    options.max_new_tokens = 4;
    CHECK(model.generate({{5, 6}}, options).tokens[0].size() <= 4);
    const fs::path encoder = e2e::model_cache() / "bert-tiny-checkpoint";
    if (fs::exists(encoder / "config.json"))
        CHECK_THROWS_AS(infer::Generator::from_folder(encoder.string()), infer::Unsupported);
    CHECK_THROWS_AS(infer::Generator::from_folder((e2e::model_cache() / "no-such-model").string()), infer::ModelError);
}
