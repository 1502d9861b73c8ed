// generate: text generation with a GPT-2 or T5 checkpoint folder (config.json + model.safetensors).
//   generate MODEL --prompt "Once upon a time" [--prompt ...] [--device cuda] [--precision f16]
//            [--max-new-tokens N] [--beams K] [--sample --temperature T --top-k K --top-p P --seed S]
//            [--repetition-penalty R] [--tokenizer PATH]
//   generate MODEL --prompt-ids 464,2068,7586 ...            (ids, no tokenizer needed)
//   generate MODEL --random-prompt 32 --batch 8 --bench 5 --json FILE   (speed, fixed lengths)
// Text prompts need the model's tokenizer (tokenizer.json: GPT-2's byte-level BPE or T5's
// unigram model; or GPT-2's vocab.json + merges.txt) in the model folder or at --tokenizer. With one prompt and greedy search or sampling the text is printed as
// it is made. Then the prefill time and the decode speed: the prompt pass (with its first token)
// and the tokens per second of every later step, summed over the batch.
// --bench R: one warm-up call (plans, uploads, CUDA graph capture), then R timed calls, every
// sequence made exactly --max-new-tokens long (the end-of-text token is not allowed earlier);
// medians printed and, with --json, written as {"prefill_ms", "decode_tokens_per_s", ...}.
// --profile (with --bench): one more call whose second decode step runs profiled: its wall
// time, the device's busy time, the copies and the ops that took the time, and the host's share
// of a step spent choosing tokens, printed and written to the JSON as "step_profile".
#include <infer/infer.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <variant>

namespace fs = std::filesystem;

namespace {

std::vector<int64_t> parse_ids(const std::string& text) {
    std::vector<int64_t> ids;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ','))
        try {
            ids.push_back(std::stoll(item));
        } catch (const std::exception&) {
            throw infer::InvalidArgument("--prompt-ids: '" + item + "' is not a token id");
        }
    return ids;
}

// GPT-2's byte-level BPE or T5's unigram model, whichever the folder's tokenizer.json holds.
struct Tokenizer {
    std::variant<infer::BpeTokenizer, infer::UnigramTokenizer> model;
    std::vector<int64_t> encode(const std::string& text) const {
        return std::visit([&](const auto& t) { return t.encode(text); }, model);
    }
    std::string decode(const std::vector<int64_t>& ids, bool skip_special = false) const {
        return std::visit([&](const auto& t) { return t.decode(ids, skip_special); }, model);
    }
};

std::optional<Tokenizer> find_tokenizer(const fs::path& folder, const std::string& explicit_path) {
    const fs::path at = explicit_path.empty() ? folder : fs::path(explicit_path);
    if (fs::exists(at / "tokenizer.json") || (fs::is_regular_file(at) && at.extension() == ".json")) {
        try {
            return Tokenizer{infer::BpeTokenizer::from_tokenizer_json(at.string())};
        } catch (const infer::Unsupported&) {  // not BPE: T5's unigram model, or a clear error from it
            return Tokenizer{infer::UnigramTokenizer::from_tokenizer_json(at.string())};
        }
    }
    if (fs::exists(at / "vocab.json") && fs::exists(at / "merges.txt"))
        return Tokenizer{infer::BpeTokenizer::from_vocab_merges((at / "vocab.json").string(), (at / "merges.txt").string())};
    if (!explicit_path.empty()) throw infer::InvalidArgument("--tokenizer: no tokenizer.json or vocab.json + merges.txt at " + at.string());
    return std::nullopt;
}

// The profiled step as one JSON object, and a line for people: wall, device busy, copies, and
// the ops that took the most device time (summed over the step's nodes of each op).
std::string describe_step(const infer::RunProfile& p, double choose_ms_per_step, std::string& json) {
    std::map<std::string, double> by_op;
    for (const infer::StepTiming& step : p.steps) by_op[step.op] += step.ms;
    std::vector<std::pair<std::string, double>> ops(by_op.begin(), by_op.end());
    std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (ops.size() > 8) ops.resize(8);
    std::ostringstream line, object;
    line << "decode step profiled: wall " << p.wall_ms << " ms, device busy " << p.accelerator_busy_ms << " ms, host to device "
         << p.h2d_ms << " ms, device to host " << p.d2h_ms << " ms; choosing tokens " << choose_ms_per_step
         << " ms a step (host); ops (ms):";
    object << "{\"wall_ms\": " << p.wall_ms << ", \"device_busy_ms\": " << p.accelerator_busy_ms << ", \"h2d_ms\": " << p.h2d_ms
           << ", \"d2h_ms\": " << p.d2h_ms << ", \"choose_ms_per_step\": " << choose_ms_per_step << ", \"ops_ms\": {";
    for (size_t i = 0; i < ops.size(); ++i) {
        line << " " << ops[i].first << " " << ops[i].second;
        object << (i ? ", " : "") << "\"" << ops[i].first << "\": " << ops[i].second;
    }
    object << "}}";
    json = object.str();
    return line.str();
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"generate: text generation with a key/value cache (GPT-2 checkpoints)"};
    std::string model, device = "cpu", precision = "f32", tokenizer_path, json_path;
    std::vector<std::string> prompts, prompt_ids;
    size_t batch = 1, random_prompt = 0, bench = 0;
    int threads = 0;
    infer::GenerationOptions options;
    app.add_option("model", model, "Hugging Face folder of a GPT2LMHeadModel")->required();
    app.add_option("--prompt", prompts, "text to continue (repeatable: one batch)");
    app.add_option("--prompt-ids", prompt_ids, "token ids to continue, comma-separated (repeatable)");
    app.add_option("--random-prompt", random_prompt, "a prompt of this many random ids (for speed runs)");
    app.add_option("--batch", batch, "repeat the prompts to this many sequences");
    app.add_option("--tokenizer", tokenizer_path, "tokenizer.json or a folder with it (default: the model folder)");
    app.add_option("--device", device, "cpu, cuda, cuda:N");
    app.add_option("--precision", precision, "f32, f16 or bf16");
    app.add_option("--threads", threads, "CPU threads (0: all cores)");
    app.add_option("--max-new-tokens", options.max_new_tokens, "new tokens per sequence at most");
    app.add_option("--beams", options.num_beams, "beam search with this many beams");
    app.add_flag("--sample", options.do_sample, "sample instead of the most likely token");
    app.add_option("--temperature", options.temperature);
    app.add_option("--top-k", options.top_k);
    app.add_option("--top-p", options.top_p);
    app.add_option("--seed", options.seed);
    app.add_option("--repetition-penalty", options.repetition_penalty);
    app.add_option("--bench", bench, "timed calls after a warm-up, every sequence full length");
    app.add_option("--json", json_path, "write the medians of --bench as JSON");
    bool profile = false;
    app.add_flag("--profile", profile, "with --bench: profile one decode step (device time per op, copies, host share)");
    CLI11_PARSE(app, argc, argv);

    try {
        infer::SessionOptions session;
        session.device = infer::Device::parse(device);
        session.precision = infer::parse_precision(precision);
        session.threads = threads;
        const infer::Generator generator = infer::Generator::from_folder(model, session);
        const auto tokenizer = find_tokenizer(model, tokenizer_path);

        std::vector<std::vector<int64_t>> inputs;
        for (const std::string& text : prompts) {
            if (!tokenizer) throw infer::InvalidArgument("--prompt needs a tokenizer (tokenizer.json in " + model + " or --tokenizer)");
            inputs.push_back(tokenizer->encode(text));
        }
        for (const std::string& ids : prompt_ids) inputs.push_back(parse_ids(ids));
        if (random_prompt > 0) {
            std::mt19937_64 random(options.seed);
            std::uniform_int_distribution<int64_t> id(0, generator.vocabulary_size() - 1);
            std::vector<int64_t> ids(random_prompt);
            for (int64_t& token : ids) token = id(random);
            inputs.push_back(ids);
        }
        if (inputs.empty()) throw infer::InvalidArgument("give --prompt, --prompt-ids or --random-prompt");
        for (size_t i = inputs.size(); i < batch; ++i) inputs.push_back(inputs[i % inputs.size()]);

        if (bench > 0) {
            options.min_new_tokens = options.max_new_tokens;
            generator.generate(inputs, options);  // warm-up
            std::vector<double> prefill, decode;
            for (size_t r = 0; r < bench; ++r) {
                const infer::GenerationStats stats = generator.generate(inputs, options).stats;
                prefill.push_back(stats.prefill_ms);
                decode.push_back(stats.decode_tokens_per_s());
            }
            std::cout << "generate: " << device << " " << precision << ", batch " << inputs.size() << ", prompt "
                      << inputs[0].size() << ", " << options.max_new_tokens << " new tokens: prefill " << median(prefill)
                      << " ms, decode " << median(decode) << " tokens/s (medians of " << bench << ")\n";
            std::string step_json;
            if (profile) {
                infer::RunProfile step;
                infer::GenerationOptions profiled = options;
                profiled.step_profile = &step;
                const infer::GenerationStats stats = generator.generate(inputs, profiled).stats;
                const double steps = static_cast<double>(stats.steps + 1);
                std::cout << "generate: " << describe_step(step, stats.choose_ms / steps, step_json) << "\n";
            }
            if (!json_path.empty())
                std::ofstream(json_path) << "{\"device\": \"" << device << "\", \"precision\": \"" << precision
                                         << "\", \"batch\": " << inputs.size() << ", \"prompt_tokens\": " << inputs[0].size()
                                         << ", \"new_tokens\": " << options.max_new_tokens << ", \"prefill_ms\": "
                                         << median(prefill) << ", \"decode_tokens_per_s\": " << median(decode)
                                         << ", \"runs\": " << bench
                                         << (step_json.empty() ? "" : ", \"step_profile\": " + step_json) << "}\n";
            return 0;
        }

        const bool stream = inputs.size() == 1 && options.num_beams == 1 && tokenizer;
        std::vector<int64_t> streamed;
        std::string printed;
        if (stream) std::cout << tokenizer->decode(inputs[0], true) << std::flush;
        const infer::Generation result = generator.generate(inputs, options, [&](size_t, int64_t token) {
            if (!stream) return;
            // Decode the whole continuation each time: a character may span two tokens.
            streamed.push_back(token);
            const std::string text = tokenizer->decode(streamed, true);
            if (text.size() > printed.size() && text.compare(0, printed.size(), printed) == 0) {
                std::cout << text.substr(printed.size()) << std::flush;
                printed = text;
            }
        });
        if (stream) std::cout << "\n";
        for (size_t i = 0; !stream && i < result.tokens.size(); ++i) {
            std::cout << "[" << i << "] ";
            if (tokenizer) {
                std::cout << tokenizer->decode(inputs[i], true) << " -> " << tokenizer->decode(result.tokens[i], true) << "\n";
            } else {
                for (int64_t token : result.tokens[i]) std::cout << token << " ";
                std::cout << "\n";
            }
        }
        const auto& s = result.stats;
        std::cerr << "generate: prefill " << s.prefill_ms << " ms (" << s.batch << " x " << s.prompt_tokens
                  << " tokens); decode " << s.steps << " steps in " << s.decode_ms << " ms, " << s.decode_tokens_per_s()
                  << " tokens/s\n";
    } catch (const infer::Unsupported& e) {
        std::cerr << "generate: " << e.what() << "\n";
        return 3;
    } catch (const std::exception& e) {
        std::cerr << "generate: " << e.what() << "\n";
        return 1;
    }
}
