#include "sweep.hpp"

#include "inputs.hpp"
#include "progress.hpp"

#include <infer/error.hpp>
#include <infer/graph.hpp>

#include <chrono>
#include <optional>
#include <set>
#include <vector>

namespace infer::bench {

const char* host_memory_name(HostMemory memory) {
    switch (memory) {
        case HostMemory::pinned: return "pinned";
        case HostMemory::pageable: return "pageable";
        case HostMemory::device: return "device";
    }
    return "?";
}

std::string Series::label() const {
    std::string text = device.to_string() + " " + std::string(precision_name(precision));
    if (host_memory) text += " " + std::string(host_memory_name(*host_memory));
    return text;
}

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Starts `device`'s runtime for `precision` with a small product and bias run once: the CUDA
// context, the backend's stream, memory pool and cuBLAS(Lt) are started once per process
// (cuBLASLt's first product alone took 80-140 ms on an H100), and were charged to whichever
// series came first, so that f16 and f32 cold starts compared differently in each order
// (DistilBERT: f16 took 1.18x to 1.62x f32 between runs and orders). cuBLASLt starts each
// element type apart: after an f32 start, the first f16 product still took 89-121 ms (76 ms of
// it choosing the algorithm for DistilBERT's first f16 product), so each precision of a device
// is started before its first series. 64 rows: fewer take our own kernel for few rows, not
// cuBLASLt. Returns the ms.
double start_runtime(const Device& device, Precision precision) {
    constexpr int64_t rows = 64, width = 64;
    GraphBuilder b("runtime_start");
    auto x = b.input("x", DType::f32, Shape({rows, width}));
    auto w = b.constant(Tensor::from_vector(std::vector<float>(width * width, 0.5f), Shape({width, width})), "w");
    auto bias = b.constant(Tensor::from_vector(std::vector<float>(width, 1.0f), Shape({width})), "bias");
    b.output("y", b.add(b.matmul(x, w), bias));
    const Graph graph = b.build();
    SessionOptions session_options;
    session_options.device = device;
    session_options.precision = precision;
    const auto start = std::chrono::steady_clock::now();
    Session session(graph, session_options);
    Batch inputs;
    inputs.set("x", Tensor::from_vector(std::vector<float>(rows * width, 1.0f), Shape({rows, width})));
    (void)session.run(inputs).at("y").to(Device::CPU);
    return ms_since(start);
}

}  // namespace

std::vector<Record> run_sweep(const Graph& graph, const SweepOptions& options, std::vector<std::string>& notes) {
    std::vector<Record> records;
    std::set<std::string> started;  // the devices and precisions start_runtime has started
    Progress progress(options.series.size() * options.batches.size());
    // Lowered points are compared with f32 on the CPU, run once per batch on the same inputs.
    std::optional<Session> f32;
    auto accuracy_of = [&](const Batch& inputs, const Batch& outputs) {
        if (!f32) {
            SessionOptions reference_options;
            reference_options.threads = options.threads;
            f32.emplace(graph, reference_options);
        }
        Batch host_inputs;
        for (const auto& [name, tensor] : inputs) host_inputs.set(name, tensor.to(Device::CPU));
        return compare_outputs(outputs, f32->run(host_inputs));
    };
    for (const Series& series : options.series) {
        for (int64_t batch : options.batches) {
            const std::string point = series.label() + " batch " + std::to_string(batch);
            progress.step(point);
            try {
                const bool pinned = series.host_memory == HostMemory::pinned;
                const bool on_device = series.host_memory == HostMemory::device;
                Batch inputs = make_inputs(graph, batch, options.sequence, pinned, series.device, options.ids);
                if (on_device)
                    for (const auto& [name, tensor] : Batch(inputs)) inputs.set(name, tensor.to(series.device));
                SessionOptions session_options;
                session_options.device = series.device;
                session_options.precision = series.precision;
                session_options.threads = options.threads;
                Record record;
                record.series = series;
                record.batch = batch;
                if (started.insert(series.device.to_string() + " " + std::string(precision_name(series.precision))).second)
                    record.runtime_start_ms = start_runtime(series.device, series.precision);
                // Cold start: what the first request after loading waits for, once the
                // process has started the device's runtime.
                const auto start = std::chrono::steady_clock::now();
                Session session(graph, session_options);
                MeasureOptions first = options.measure;
                Batch outputs = session.run(inputs);
                for (const auto& [name, tensor] : outputs) (void)tensor.to(Device::CPU);
                record.cold_start_ms = ms_since(start);
                first.pinned_outputs = pinned;
                first.outputs_on_device = on_device;
                record.measurement = measure(session, inputs, batch, first);
                record.memory = session.memory();
                record.fallback_nodes = session.placement().fallbacks();
                if (series.precision != Precision::f32) record.accuracy = accuracy_of(inputs, outputs);
                records.push_back(std::move(record));
            } catch (const Error& e) {
                notes.push_back(point + ": not measured: " + e.what());
            }
        }
    }
    progress.finish();
    return records;
}

}  // namespace infer::bench
