#pragma once
// The sweep: every device × precision × host memory × batch, each measured in a fresh session
// so that its cold start (session, plan, weight upload, first run) is its own.
#include "accuracy.hpp"
#include "inputs.hpp"

#include <infer/measure.hpp>
#include <infer/memory.hpp>
#include <infer/session.hpp>

#include <optional>
#include <string>
#include <vector>

namespace infer::bench {

// Where a GPU point's inputs come from and its outputs go: pinned or pageable host memory (the
// end-to-end time, copies included), or the device itself (compute only: inputs made there
// before timing, outputs left there; what PyTorch users usually time).
enum class HostMemory { pinned, pageable, device };
const char* host_memory_name(HostMemory memory);

struct Series {
    Device device;
    Precision precision;
    std::optional<HostMemory> host_memory;  // none on the CPU
    std::string label() const;              // "cpu f32", "cuda:0 f16 pinned"
};

struct Record {
    Series series;
    int64_t batch = 1;
    Measurement measurement;
    double cold_start_ms = 0;
    // Starting the device's runtime before this series, if it was the first on its device
    // (context, stream, memory pool, BLAS handles); not part of cold_start_ms.
    std::optional<double> runtime_start_ms;
    MemoryEstimate memory;
    size_t fallback_nodes = 0;
    std::optional<Accuracy> accuracy;  // against the CPU's f32 outputs; none for f32 points
};

struct SweepOptions {
    std::vector<Series> series;
    std::vector<int64_t> batches;
    int64_t sequence = 128;
    TokenIds ids;
    int threads = 0;
    MeasureOptions measure;
};

// Measures every point; a point that cannot run (too big for the device, unsupported) is
// skipped with a line in `notes`.
std::vector<Record> run_sweep(const Graph& graph, const SweepOptions& options, std::vector<std::string>& notes);

}  // namespace infer::bench
