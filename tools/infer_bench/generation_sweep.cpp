#include "generation_sweep.hpp"

#include "results.hpp"

#include <infer/error.hpp>
#include <infer/generate.hpp>
#include <infer/version.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>

namespace infer::bench {

namespace {

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Random prompts, one per sequence, the same for every point (seeded).
std::vector<std::vector<int64_t>> random_prompts(int64_t batch, int64_t length, int64_t vocabulary) {
    std::mt19937_64 random(0);
    std::uniform_int_distribution<int64_t> id(0, vocabulary - 1);
    std::vector<std::vector<int64_t>> prompts(static_cast<size_t>(batch), std::vector<int64_t>(static_cast<size_t>(length)));
    for (auto& prompt : prompts)
        for (int64_t& token : prompt) token = id(random);
    return prompts;
}

// The profiled step: wall and device time, copies, the host's share, and the ops by device time.
nlohmann::json step_json(const RunProfile& p, double choose_ms_per_step) {
    std::map<std::string, double> by_op;
    for (const StepTiming& step : p.steps) by_op[step.op] += step.ms;
    std::vector<std::pair<std::string, double>> ops(by_op.begin(), by_op.end());
    std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    nlohmann::json top = nlohmann::json::array();  // largest first, as the model sweep's top_ops_ms
    for (size_t i = 0; i < ops.size() && i < 8; ++i) top.push_back({{"op", ops[i].first}, {"ms", ops[i].second}});
    return {{"wall_ms", p.wall_ms}, {"device_busy_ms", p.accelerator_busy_ms}, {"h2d_ms", p.h2d_ms}, {"d2h_ms", p.d2h_ms},
            {"choose_ms_per_step", choose_ms_per_step}, {"top_ops_ms", top}};
}

nlohmann::json measure_point(const Generator& generator, const GenerationSweepOptions& options, int64_t batch) {
    const auto prompts = random_prompts(batch, options.prompt_tokens, generator.vocabulary_size());
    GenerationOptions generation;
    generation.max_new_tokens = options.new_tokens;
    generation.min_new_tokens = options.new_tokens;  // every sequence full length
    generator.generate(prompts, generation);          // warm-up: plans, uploads, graph capture
    std::vector<double> prefill, decode;
    for (size_t r = 0; r < options.runs; ++r) {
        const GenerationStats stats = generator.generate(prompts, generation).stats;
        prefill.push_back(stats.prefill_ms);
        decode.push_back(stats.decode_tokens_per_s());
    }
    RunProfile step;
    generation.step_profile = &step;
    const GenerationStats stats = generator.generate(prompts, generation).stats;
    return {{"batch", batch},
            {"prompt_tokens", options.prompt_tokens},
            {"new_tokens", options.new_tokens},
            {"prefill_ms", median(prefill)},
            {"decode_tokens_per_s", median(decode)},
            {"prefill_ms_runs", prefill},
            {"decode_tokens_per_s_runs", decode},
            {"runs", options.runs},
            {"step_profile", step_json(step, stats.choose_ms / static_cast<double>(stats.steps + 1))}};
}

}  // namespace

nlohmann::json run_generation_sweep(const std::string& folder, const GenerationSweepOptions& options,
                                    const std::vector<std::string>& given_notes) {
    if (options.runs == 0) throw InvalidArgument("--runs must be at least 1");
    if (options.new_tokens < 2) throw InvalidArgument("--new-tokens must be at least 2 (one prefill token, then decode steps)");
    if (options.prompt_tokens < 1) throw InvalidArgument("--prompt must be at least 1");
    std::vector<std::string> notes = given_notes;
    nlohmann::json measurements = nlohmann::json::array();
    for (const auto& [device, precision] : options.series) {
        SessionOptions session;
        session.device = device;
        session.precision = precision;
        session.threads = options.threads;
        const Generator generator = Generator::from_folder(folder, session);
        for (int64_t batch : options.batches) {
            std::fprintf(stderr, "infer-bench: %s %s batch %lld\n", device.to_string().c_str(),
                         std::string(precision_name(precision)).c_str(), static_cast<long long>(batch));
            try {
                nlohmann::json point = measure_point(generator, options, batch);
                point["device"] = device.to_string();
                point["precision"] = precision_name(precision);
                measurements.push_back(point);
            } catch (const OutOfMemory& e) {
                notes.push_back(device.to_string() + " " + std::string(precision_name(precision)) + " batch " +
                                std::to_string(batch) + " left out: " + e.what());
            }
        }
    }
    const std::filesystem::path path(folder);
    const std::string name = (path.filename().empty() ? path.parent_path() : path).filename().string();
    return {{"schema", "infer-bench-generation/1"},
            {"infer_version", kVersion},
            {"machine", machine_json()},
            {"model", {{"name", name}, {"path", folder}}},
            {"measurements", measurements},
            {"notes", notes}};
}

std::string generation_table(const nlohmann::json& document) {
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%-8s %-5s %6s %7s %6s | %11s %13s\n", "device", "prec", "batch", "prompt", "new",
                  "prefill ms", "decode tok/s");
    out += line;
    for (const auto& m : document["measurements"]) {
        std::snprintf(line, sizeof line, "%-8s %-5s %6lld %7lld %6lld | %11.2f %13.1f\n", m["device"].get<std::string>().c_str(),
                      m["precision"].get<std::string>().c_str(), m["batch"].get<long long>(), m["prompt_tokens"].get<long long>(),
                      m["new_tokens"].get<long long>(), m["prefill_ms"].get<double>(), m["decode_tokens_per_s"].get<double>());
        out += line;
        const auto& p = m["step_profile"];
        std::snprintf(line, sizeof line,
                      "    a decode step, profiled: wall %.3f ms, device busy %.3f ms, copies in %.3f / out %.3f ms, "
                      "choosing tokens %.3f ms (host); ops (ms):",
                      p["wall_ms"].get<double>(), p["device_busy_ms"].get<double>(), p["h2d_ms"].get<double>(),
                      p["d2h_ms"].get<double>(), p["choose_ms_per_step"].get<double>());
        out += line;
        for (const auto& op : p["top_ops_ms"]) {
            std::snprintf(line, sizeof line, " %s %.3f", op["op"].get<std::string>().c_str(), op["ms"].get<double>());
            out += line;
        }
        out += "\n";
    }
    for (const auto& note : document["notes"]) out += "note: " + note.get<std::string>() + "\n";
    return out;
}

}  // namespace infer::bench
