#pragma once
// Measuring a session honestly: warm-up runs first (context creation, module loading, first
// allocations and plan making are not inference), every run synchronized before the host clock
// is read (Session::run returns only when the devices are done), outputs copied back to the
// host inside the timed region (a result still on the GPU is not a result, unless the caller
// asks for compute only: MeasureOptions::outputs_on_device), repeated until a
// minimum time and count, and reported as min / median / p90 / p99. The copy/compute split comes
// from separate profiled runs (device clocks), since profiling adds a little time of its own.
#include <infer/batch.hpp>
#include <infer/session.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace infer {

struct LatencyStats {
    size_t runs = 0;
    double min_ms = 0, median_ms = 0, p90_ms = 0, p99_ms = 0, mean_ms = 0;
    // Nearest-rank percentiles of the samples; throws InvalidArgument for no samples.
    static LatencyStats from_samples(std::vector<double> samples_ms);
};

struct MeasureOptions {
    int warmup = 3;              // untimed runs first
    double min_time_s = 1.0;     // keep timing until this much time has passed...
    int min_runs = 5;            // ...and at least this many runs
    int max_runs = 10000;
    int profiled_runs = 5;       // extra runs for the breakdown (0: none)
    bool pinned_outputs = false; // copy outputs into page-locked host memory
    // Compute only: leave device outputs where they are (with inputs already on the device, no
    // copy is timed). Session::run still returns only when the device is done.
    bool outputs_on_device = false;
};

struct Measurement {
    int64_t batch = 1;             // items per run, for throughput
    LatencyStats latency;          // the whole call, outputs on the host
    double throughput_per_s = 0;   // batch / median latency
    // Copies to and from the device: medians over the profiled runs (CUDA events time them
    // exactly). Compute is the rest of the median latency, so the three add up to it; taking it
    // from the profiled runs instead would count the profiling's own overhead as compute.
    double h2d_ms = 0, compute_ms = 0, d2h_ms = 0;
    // The accelerator's summed step time (median over profiled runs) over the median latency,
    // at most 1; none when no accelerator ran.
    std::optional<double> accelerator_busy_fraction;
    // Device time per op over the profiled runs (medians), the largest first: where the time goes.
    std::vector<std::pair<std::string, double>> op_ms;
};

// Runs `session` on `inputs` (already where the caller wants them: pageable or pinned host
// memory, or on the device) as described above. `batch` is the number of items in `inputs`.
Measurement measure(const Session& session, const Batch& inputs, int64_t batch,
                    const MeasureOptions& options = {});

}  // namespace infer
