// infer-bench: is the CPU or the GPU faster for this model at this batch size, by how much,
// and why? Measures every device × precision × host memory × batch with the timing rules of
// infer/measure.hpp, prints a table, the crossover and a recommendation, and writes JSON and a
// self-contained HTML report. With --generate, a GPT-2 or T5 folder's generation speed instead:
// prefill time and decode tokens per second per device, precision and batch (generation_sweep.hpp).
// See docs/benchmarking.md.
#include "generation_sweep.hpp"
#include "inputs.hpp"
#include "report.hpp"
#include "results.hpp"
#include "sweep.hpp"

#include <infer/infer.hpp>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;
using namespace infer;

namespace {

// The source tree's model cache (tools are built in build/bin/), or $INFER_MODEL_CACHE.
fs::path model_cache(const char* argv0) {
    if (const char* env = std::getenv("INFER_MODEL_CACHE"); env && *env) return env;
    std::error_code ec;
    fs::path program = fs::canonical("/proc/self/exe", ec);
    if (ec) program = fs::absolute(argv0);
    return (program.parent_path() / ".." / ".." / ".cache" / "models").lexically_normal();
}

// MODEL is a .onnx file, a folder holding model.onnx, a Hugging Face folder (config.json and
// safetensors: Graph::load builds it), or the name of a prepared model.
fs::path resolve_model(const std::string& model, const fs::path& cache) {
    fs::path path(model);
    if (fs::is_regular_file(path)) return path;
    if (fs::is_directory(path) && fs::exists(path / "config.json") &&
        (fs::exists(path / "model.safetensors") || fs::exists(path / "model.safetensors.index.json")))
        return path.lexically_normal() / "";
    if (fs::is_directory(path) && fs::exists(path / "model.onnx")) return path / "model.onnx";
    if (fs::exists(cache / model / "model.onnx")) return cache / model / "model.onnx";
    throw InvalidArgument("no model '" + model + "': not an .onnx file, a folder with model.onnx or a Hugging Face " +
                          "checkpoint, or a model in " +
                          cache.string() + " (prepare one with scripts/models/prepare.sh " + model + ")");
}

template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& text, Parse parse) {
    std::vector<T> values;
    std::stringstream stream(text);
    std::string item;
    while (std::getline(stream, item, ','))
        if (!item.empty()) values.push_back(parse(item));
    if (values.empty()) throw InvalidArgument("empty list '" + text + "'");
    return values;
}

int64_t parse_batch(const std::string& text) {
    try {
        size_t used = 0;
        const long long value = std::stoll(text, &used);
        if (used == text.size() && value >= 1) return value;
    } catch (const std::exception&) {
    }
    throw InvalidArgument("batch '" + text + "' is not a positive integer");
}

// One --host-memory choice: pinned, pageable, device, both (pinned and pageable) or all three.
std::string host_memory_choice(const std::string& text) {
    if (text == "pinned" || text == "pageable" || text == "device" || text == "both" || text == "all") return text;
    throw InvalidArgument("--host-memory '" + text + "': expected pinned, pageable, device, both or all");
}

void write_file(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (!out) throw Error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"infer-bench: CPU versus GPU for one model, measured honestly (warm-up, synchronized "
                 "clocks, copies included, percentiles), with the crossover batch and a recommendation"};
    std::string model = "all-MiniLM-L6-v2", devices_text = "cpu,cuda", batches_text = "1,2,4,8,16,32,64",
                precisions_text = "f32", cpu_precisions_text, host_memory = "pinned", json_path, report_path,
                from_json;
    int64_t sequence = 128;
    int threads = 0;
    bool estimate = false;
    MeasureOptions measure_options;
    app.add_option("model", model, "a .onnx file, a folder with model.onnx, or a prepared model's name")
        ->capture_default_str();
    app.add_option("--devices,--device", devices_text, "devices to compare, comma-separated")->capture_default_str();
    app.add_option("--batch", batches_text, "batch sizes, comma-separated")->capture_default_str();
    app.add_option("--seq", sequence, "length of every dynamic dimension after the batch")->capture_default_str();
    int64_t vocabulary = 0;
    app.add_option("--vocabulary", vocabulary,
                   "token ids are drawn below this (default: a Hugging Face folder's vocab_size; ids in [1000, 2000) "
                   "when at least 2000)");
    app.add_option("--precision", precisions_text, "f32, f16, bf16, int8, comma-separated")->capture_default_str();
    app.add_option("--cpu-precision", cpu_precisions_text, "precisions on the CPU, if not those of --precision");
    app.add_option("--threads", threads, "CPU threads (0: all cores)")->capture_default_str();
    app.add_option("--warmup", measure_options.warmup, "untimed runs per point")->capture_default_str();
    app.add_option("--min-time", measure_options.min_time_s, "seconds of timed runs per point")->capture_default_str();
    app.add_option("--min-runs", measure_options.min_runs, "timed runs per point, at least")->capture_default_str();
    app.add_option("--profiled-runs", measure_options.profiled_runs, "extra runs for the copy/compute split")
        ->capture_default_str();
    app.add_option("--host-memory", host_memory,
                   "where GPU inputs come from and outputs go, comma-separated: pinned or pageable host memory "
                   "(end to end, copies timed), device (compute only, both stay on the GPU), both (pinned,pageable), "
                   "all")
        ->capture_default_str();
    app.add_option("--json", json_path, "write the results as JSON");
    app.add_option("--report", report_path, "write a self-contained HTML report");
    app.add_flag("--estimate", estimate, "print the memory estimate per device, precision and batch, run nothing");
    app.add_option("--from-json", from_json, "no measuring: print and report the results of an earlier --json");
    bool generate = false;
    bench::GenerationSweepOptions generation;
    app.add_flag("--generate", generate, "generation speed of a GPT-2 or T5 Hugging Face folder (prefill, decode tokens/s)");
    app.add_option("--prompt", generation.prompt_tokens, "--generate: prompt tokens per sequence")->capture_default_str();
    app.add_option("--new-tokens", generation.new_tokens, "--generate: new tokens per sequence")->capture_default_str();
    app.add_option("--runs", generation.runs, "--generate: timed calls per point")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    try {
        nlohmann::json document;
        if (!from_json.empty()) {
            std::ifstream in(from_json);
            if (!in) throw InvalidArgument("cannot read " + from_json);
            document = nlohmann::json::parse(in);
        } else {
            const fs::path path = resolve_model(model, model_cache(argv[0]));
            const auto batches = parse_list<int64_t>(batches_text, parse_batch);
            const auto precisions = parse_list<Precision>(precisions_text, parse_precision);
            const auto cpu_precisions = cpu_precisions_text.empty()
                                            ? precisions
                                            : parse_list<Precision>(cpu_precisions_text, parse_precision);
            const auto host_memories = parse_list<std::string>(host_memory, host_memory_choice);
            const auto requested = parse_list<Device>(devices_text, Device::parse);
            std::vector<std::string> notes;
            std::vector<Device> devices;
            for (const Device& device : requested) {
                const auto present = available_devices();
                if (std::find(present.begin(), present.end(), device) != present.end()) devices.push_back(device);
                else if (device.type == "cuda")
                    notes.push_back(device.to_string() + ": no GPU present" +
                                    (kBuiltWithCuda ? "" : " (infer was built without CUDA)") +
                                    ", so only the CPU was measured");
                else throw DeviceError("device " + device.to_string() + " is not available");
            }
            const std::string cpu_blas = device_properties(Device::CPU).driver;
            if (std::find(devices.begin(), devices.end(), Device::CPU) != devices.end() &&
                cpu_blas.find("generic for this CPU") != std::string::npos)
                notes.push_back("cpu: " + cpu_blas + "; the CPU figures are slower than this machine allows");
            if (generate) {
                if (!report_path.empty() || estimate) throw InvalidArgument("--generate writes no HTML report and has no --estimate");
                if (!fs::is_directory(path)) throw InvalidArgument("--generate needs a Hugging Face folder (GPT-2 or T5), not " + path.string());
                for (const Device& device : devices)
                    for (Precision precision : device.is_cpu() ? cpu_precisions : precisions)
                        generation.series.emplace_back(device, precision);
                generation.batches = batches;
                generation.threads = threads;
                const nlohmann::json results = bench::run_generation_sweep(path.string(), generation, notes);
                std::printf("%s: generation\n%s", results["model"]["name"].get<std::string>().c_str(),
                            bench::generation_table(results).c_str());
                if (!json_path.empty()) {
                    write_file(json_path, results.dump(1) + "\n");
                    std::printf("wrote %s\n", json_path.c_str());
                }
                return results["measurements"].empty() ? 1 : 0;
            }
            const Graph graph = Graph::load(path.string());
            if (estimate) {
                int status = 0;
                for (const Device& device : devices)
                    for (Precision precision : precisions)
                        for (int64_t batch : batches) {
                            SessionOptions options;
                            options.device = device;
                            options.precision = precision;
                            const MemoryEstimate m = estimate_memory(graph, options, bench::input_shapes(graph, batch, sequence));
                            std::printf("%s %s batch %lld: %s\n", device.to_string().c_str(),
                                        std::string(precision_name(precision)).c_str(), static_cast<long long>(batch),
                                        m.to_string().c_str());
                            if (!m.fits()) status = 4;
                        }
                for (const auto& note : notes) std::printf("note: %s\n", note.c_str());
                return status;
            }
            bench::SweepOptions options;
            options.batches = batches;
            options.sequence = sequence;
            if (vocabulary == 0) vocabulary = bench::folder_vocabulary(path.string());
            options.ids = bench::TokenIds::below(vocabulary);
            options.threads = threads;
            options.measure = measure_options;
            for (const Device& device : devices)
                for (Precision precision : device.is_cpu() ? cpu_precisions : precisions) {
                    if (device.is_cpu()) {
                        options.series.push_back({device, precision, std::nullopt});
                        continue;
                    }
                    for (const std::string& memory : host_memories) {
                        if (memory == "pinned" || memory == "both" || memory == "all")
                            options.series.push_back({device, precision, bench::HostMemory::pinned});
                        if (memory == "pageable" || memory == "both" || memory == "all")
                            options.series.push_back({device, precision, bench::HostMemory::pageable});
                        if (memory == "device" || memory == "all")
                            options.series.push_back({device, precision, bench::HostMemory::device});
                    }
                }
            const auto records = bench::run_sweep(graph, options, notes);
            bench::ModelInfo info{path.parent_path().filename().string(), path.string(), sequence, vocabulary};
            if (path.has_filename() && path.filename() != "model.onnx") info.name = path.stem().string();
            document = bench::results_json(graph, info, options, records, notes);
        }
        const auto& m = document["machine"];
        std::printf("%s on %s (%d cores)", document["model"]["name"].get<std::string>().c_str(),
                    m["cpu_model"].get<std::string>().c_str(), m["cpu_cores"].get<int>());
        for (const auto& gpu : m["gpus"]) std::printf(", %s", gpu["name"].get<std::string>().c_str());
        if (m.contains("cpu_blas")) std::printf("\nCPU matrix products: %s", m["cpu_blas"].get<std::string>().c_str());
        std::printf("\n%s", bench::results_table(document).c_str());
        if (!json_path.empty()) {
            write_file(json_path, document.dump(1) + "\n");
            std::printf("wrote %s\n", json_path.c_str());
        }
        if (!report_path.empty()) {
            write_file(report_path, bench::render_html_report(document));
            std::printf("wrote %s\n", report_path.c_str());
        }
        return document["measurements"].empty() ? 1 : 0;
    } catch (const Error& e) {
        std::fprintf(stderr, "infer-bench: %s\n", e.what());
        return 2;
    } catch (const nlohmann::json::exception& e) {
        std::fprintf(stderr, "infer-bench: malformed results JSON: %s\n", e.what());
        return 2;
    }
}
