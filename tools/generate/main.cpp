// generate: text generation with a GPT-2 or T5 checkpoint folder (config.json + model.safetensors).
//   generate MODEL --prompt "Once upon a time" [--prompt ...] [--device cuda] [--precision f16]
//            [--max-new-tokens N] [--beams K] [--sample --temperature T --top-k K --top-p P --seed S]
//            [--repetition-penalty R] [--tokenizer PATH]
//   generate MODEL --prompt-ids 464,2068,7586 ...            (ids, no tokenizer needed)
//   generate MODEL --random-prompt 32 --batch 8             (random ids, for a quick look at speed)
// Text prompts need the model's tokenizer (tokenizer.json: GPT-2's byte-level BPE or T5's
// unigram model; or GPT-2's vocab.json + merges.txt) in the model folder or at --tokenizer. With one prompt and greedy search or sampling the text is printed as
// it is made. Then the prefill time and the decode speed: the prompt pass (with its first token)
// and the tokens per second of every later step, summed over the batch.
// Speed measured properly (warm-up, medians, fixed lengths, a profiled step): infer-bench --generate.
#include <infer/infer.hpp>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
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

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"generate: text generation with a key/value cache (GPT-2 checkpoints)"};
    std::string model, device = "cpu", precision = "f32", tokenizer_path;
    std::vector<std::string> prompts, prompt_ids;
    size_t batch = 1, random_prompt = 0;
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
