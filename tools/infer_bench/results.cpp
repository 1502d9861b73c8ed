#include "results.hpp"

#include <infer/version.hpp>

#include <cstdio>
#include <fstream>
#include <thread>

namespace infer::bench {

namespace {

std::string cpu_model() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line))
        if (line.rfind("model name", 0) == 0) {
            const size_t colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    return "unknown CPU";
}

nlohmann::json series_crossover(const DeviceAdvisor& advisor, std::optional<int64_t> batch) {
    nlohmann::json out = {{"batch", batch ? nlohmann::json(*batch) : nlohmann::json(nullptr)}};
    if (batch) {
        const Advice advice = advisor.advise(*batch);
        out["gpu"] = advice.config;
        out["cpu"] = advice.alternative ? nlohmann::json(*advice.alternative) : nlohmann::json(nullptr);
    }
    return out;
}

// The ops that took the most device time in a profiled run, largest first.
nlohmann::json top_ops(const Measurement& m) {
    nlohmann::json ops = nlohmann::json::array();
    for (size_t i = 0; i < m.op_ms.size() && i < 6; ++i) ops.push_back({{"op", m.op_ms[i].first}, {"ms", m.op_ms[i].second}});
    return ops;
}

// A lowered point's accuracy against f32 (accuracy.hpp), or null.
nlohmann::json accuracy_json(const std::optional<Accuracy>& a) {
    if (!a) return nullptr;
    return {{"relative_error", a->relative_error}, {"least_cosine", a->least_cosine},
            {"argmax_agreement", a->argmax_agreement ? nlohmann::json(*a->argmax_agreement) : nlohmann::json(nullptr)}};
}

nlohmann::json optional_number(std::optional<double> value) {
    return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json machine_json() {
    nlohmann::json gpus = nlohmann::json::array();
    for (const Device& device : available_devices()) {
        if (device.type != "cuda") continue;
        const DeviceProperties p = device_properties(device);
        gpus.push_back({{"device", device.to_string()}, {"name", p.name}, {"driver", p.driver},
                        {"memory_bytes", p.total_memory_bytes}, {"compute_capability", p.compute_capability},
                        {"multiprocessors", p.cores}});
    }
    return {{"cpu_model", cpu_model()},
            {"cpu_cores", std::thread::hardware_concurrency()},
            {"cpu_blas", device_properties(Device::CPU).driver},
            {"gpu_present", !gpus.empty()},
            {"gpus", gpus}};
}

DeviceAdvisor advisor_for(const std::vector<Record>& records) {
    DeviceAdvisor advisor;
    for (const Record& r : records)
        advisor.add({r.series.label(), r.series.device, r.batch, r.measurement.latency.median_ms});
    return advisor;
}

nlohmann::json results_json(const Graph& graph, const ModelInfo& model, const SweepOptions& options,
                            const std::vector<Record>& records, const std::vector<std::string>& notes) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const TensorInfo& info : graph.inputs())
        inputs.push_back({{"name", info.name}, {"dtype", dtype_name(info.dtype)}, {"shape", info.shape.dims()}});
    nlohmann::json measurements = nlohmann::json::array();
    for (const Record& r : records) {
        const Measurement& m = r.measurement;
        measurements.push_back({
            {"device", r.series.device.to_string()},
            {"precision", precision_name(r.series.precision)},
            {"batch", r.batch},
            {"host_memory", r.series.host_memory ? nlohmann::json(host_memory_name(*r.series.host_memory))
                                                 : nlohmann::json(nullptr)},
            {"runs", m.latency.runs},
            {"latency_ms", {{"min", m.latency.min_ms}, {"median", m.latency.median_ms}, {"p90", m.latency.p90_ms},
                            {"p99", m.latency.p99_ms}, {"mean", m.latency.mean_ms}}},
            {"throughput_per_s", m.throughput_per_s},
            {"breakdown_ms", {{"h2d", m.h2d_ms}, {"compute", m.compute_ms}, {"d2h", m.d2h_ms}}},
            {"cold_start_ms", r.cold_start_ms},
            {"runtime_start_ms", r.runtime_start_ms ? nlohmann::json(*r.runtime_start_ms) : nlohmann::json(nullptr)},
            {"memory_bytes", {{"weights", r.memory.weights_bytes}, {"activations", r.memory.activations_bytes},
                              {"workspace", r.memory.workspace_bytes}}},
            {"gpu_busy_fraction", r.series.device.is_cpu() ? nlohmann::json(nullptr)
                                                           : optional_number(m.accelerator_busy_fraction)},
            {"fallback_nodes", r.fallback_nodes},
            {"accuracy_vs_f32", accuracy_json(r.accuracy)},
            {"top_ops_ms", top_ops(m)},
        });
    }
    nlohmann::json document = {
        {"schema", "infer-bench/1"},
        {"library", {{"name", "infer"}, {"version", kVersion}, {"built_with_cuda", kBuiltWithCuda}}},
        {"machine", machine_json()},
        {"model",
         {{"name", model.name}, {"path", model.path}, {"sequence", model.sequence}, {"vocabulary", model.vocabulary},
          {"inputs", inputs}}},
        {"settings", {{"warmup", options.measure.warmup}, {"min_time_s", options.measure.min_time_s},
                      {"min_runs", options.measure.min_runs}, {"profiled_runs", options.measure.profiled_runs},
                      {"threads", options.threads}}},
        {"measurements", measurements},
        {"notes", notes},
    };
    const DeviceAdvisor advisor = advisor_for(records);
    bool any_gpu = false;
    for (const Record& r : records) any_gpu = any_gpu || !r.series.device.is_cpu();
    document["crossover"] = any_gpu ? nlohmann::json{{"latency", series_crossover(advisor, advisor.latency_crossover())},
                                                     {"throughput", series_crossover(advisor, advisor.throughput_crossover())}}
                                    : nlohmann::json(nullptr);
    document["recommendation"] = records.empty() ? "nothing was measured" : advisor.recommendation();
    return document;
}

std::string results_table(const nlohmann::json& document) {
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%-22s %6s %9s %9s %9s %11s %8s %8s %8s %9s %6s %9s %9s\n", "series", "batch",
                  "median", "p90", "p99", "items/s", "h2d", "compute", "d2h", "cold", "busy", "memory", "vs f32");
    out += line;
    std::snprintf(line, sizeof line, "%-22s %6s %9s %9s %9s %11s %8s %8s %8s %9s %6s %9s %9s\n", "", "", "ms", "ms", "ms",
                  "", "ms", "ms", "ms", "ms", "%", "MiB", "rel.err");
    out += line;
    for (const auto& m : document["measurements"]) {
        std::string series = m["device"].get<std::string>() + " " + m["precision"].get<std::string>();
        if (!m["host_memory"].is_null()) series += " " + m["host_memory"].get<std::string>();
        const auto& mem = m["memory_bytes"];
        const double mib = (mem["weights"].get<double>() + mem["activations"].get<double>() +
                            mem["workspace"].get<double>()) / 1048576.0;
        char busy[16] = "-";
        if (!m["gpu_busy_fraction"].is_null())
            std::snprintf(busy, sizeof busy, "%.0f", 100.0 * m["gpu_busy_fraction"].get<double>());
        char accuracy[16] = "-";
        if (m.contains("accuracy_vs_f32") && !m["accuracy_vs_f32"].is_null())
            std::snprintf(accuracy, sizeof accuracy, "%.1e", m["accuracy_vs_f32"]["relative_error"].get<double>());
        std::snprintf(line, sizeof line, "%-22s %6lld %9.3f %9.3f %9.3f %11.1f %8.3f %8.3f %8.3f %9.1f %6s %9.1f %9s\n",
                      series.c_str(), static_cast<long long>(m["batch"].get<int64_t>()),
                      m["latency_ms"]["median"].get<double>(), m["latency_ms"]["p90"].get<double>(),
                      m["latency_ms"]["p99"].get<double>(), m["throughput_per_s"].get<double>(),
                      m["breakdown_ms"]["h2d"].get<double>(), m["breakdown_ms"]["compute"].get<double>(),
                      m["breakdown_ms"]["d2h"].get<double>(), m["cold_start_ms"].get<double>(), busy, mib, accuracy);
        out += line;
    }
    const auto& crossover = document["crossover"];
    if (!crossover.is_null()) {
        for (const char* kind : {"latency", "throughput"}) {
            const auto& c = crossover[kind];
            out += std::string("crossover (") + kind + "): ";
            out += c["batch"].is_null() ? std::string("the GPU never wins at the measured batches")
                                        : "from batch " + std::to_string(c["batch"].get<int64_t>()) + ", " +
                                              c["gpu"].get<std::string>() + " beats the CPU";
            out += "\n";
        }
    }
    for (const auto& m : document["measurements"])
        if (m.contains("runtime_start_ms") && !m["runtime_start_ms"].is_null()) {
            std::snprintf(line, sizeof line, "%s %s: runtime started in %.1f ms before its first series (not in its cold start)\n",
                          m["device"].get<std::string>().c_str(), m["precision"].get<std::string>().c_str(),
                          m["runtime_start_ms"].get<double>());
            out += line;
        }
    for (const auto& note : document["notes"]) out += "note: " + note.get<std::string>() + "\n";
    out += "recommendation: " + document["recommendation"].get<std::string>() + "\n";
    return out;
}

}  // namespace infer::bench
