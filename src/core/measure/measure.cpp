#include <infer/error.hpp>
#include <infer/measure.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <numeric>

namespace infer {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Host tensors the outputs are copied into, made once so the timed loop allocates nothing.
class HostOutputs {
public:
    HostOutputs(const Batch& outputs, bool pinned) {
        for (const auto& [name, tensor] : outputs) {
            if (tensor.device().is_cpu()) continue;
            targets_.emplace_back(name, pinned ? Tensor::empty_pinned(tensor.dtype(), tensor.shape(), tensor.device())
                                               : Tensor::empty(tensor.dtype(), tensor.shape()));
        }
    }
    // Copies every device output to the host; returns when the copies are complete.
    void copy(const Batch& outputs) {
        for (auto& [name, target] : targets_) target.copy_from(outputs[name]);
    }
    // Outputs that already live on the host need no copy, so none is timed for them.
    bool empty() const { return targets_.empty(); }

private:
    std::vector<std::pair<std::string, Tensor>> targets_;
};

}  // namespace

LatencyStats LatencyStats::from_samples(std::vector<double> samples_ms) {
    if (samples_ms.empty()) throw InvalidArgument("LatencyStats: no samples");
    std::sort(samples_ms.begin(), samples_ms.end());
    const size_t n = samples_ms.size();
    const auto rank = [&](double p) {
        const size_t r = static_cast<size_t>(std::ceil(p * static_cast<double>(n)));
        return samples_ms[std::clamp<size_t>(r, 1, n) - 1];
    };
    LatencyStats s;
    s.runs = n;
    s.min_ms = samples_ms.front();
    s.median_ms = median(samples_ms);
    s.p90_ms = rank(0.90);
    s.p99_ms = rank(0.99);
    s.mean_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / static_cast<double>(n);
    return s;
}

Measurement measure(const Session& session, const Batch& inputs, int64_t batch, const MeasureOptions& options) {
    if (batch < 1) throw InvalidArgument("measure: batch must be >= 1, got " + std::to_string(batch));
    if (options.warmup < 0 || options.min_runs < 1 || options.max_runs < options.min_runs || options.profiled_runs < 0)
        throw InvalidArgument("measure: warmup and profiled_runs must be >= 0 and 1 <= min_runs <= max_runs");
    // The first run also sizes the host buffers; it counts as warm-up.
    Batch outputs = session.run(inputs);
    HostOutputs host(options.outputs_on_device ? Batch{} : outputs, options.pinned_outputs);
    host.copy(outputs);
    for (int i = 1; i < options.warmup; ++i) host.copy(session.run(inputs));

    std::vector<double> samples;
    const auto loop_start = Clock::now();
    while (static_cast<int>(samples.size()) < options.max_runs &&
           (static_cast<int>(samples.size()) < options.min_runs || ms_since(loop_start) < 1000.0 * options.min_time_s)) {
        const auto start = Clock::now();
        host.copy(session.run(inputs));
        samples.push_back(ms_since(start));
    }

    Measurement m;
    m.batch = batch;
    m.latency = LatencyStats::from_samples(samples);
    m.throughput_per_s = 1000.0 * static_cast<double>(batch) / m.latency.median_ms;
    std::vector<double> h2d, d2h, busy;
    std::map<std::string, std::vector<double>> per_op;
    for (int i = 0; i < options.profiled_runs; ++i) {
        RunProfile profile;
        Batch result = session.run(inputs, profile);
        double host_copy_ms = 0;
        if (!host.empty()) {
            const auto copy_start = Clock::now();
            host.copy(result);
            host_copy_ms = ms_since(copy_start);
        }
        h2d.push_back(profile.h2d_ms);
        d2h.push_back(profile.d2h_ms + host_copy_ms);
        if (profile.used_accelerator) busy.push_back(profile.accelerator_busy_ms);
        std::map<std::string, double> op_total;
        for (const StepTiming& step : profile.steps)
            if (step.kind == StepKind::kernel) op_total[step.op] += step.ms;
        for (const auto& [op, ms] : op_total) per_op[op].push_back(ms);
    }
    m.h2d_ms = median(h2d);
    m.d2h_ms = median(d2h);
    m.compute_ms = std::max(0.0, m.latency.median_ms - m.h2d_ms - m.d2h_ms);
    if (!busy.empty()) m.accelerator_busy_fraction = std::min(1.0, median(busy) / m.latency.median_ms);
    for (const auto& [op, samples] : per_op) m.op_ms.emplace_back(op, median(samples));
    std::sort(m.op_ms.begin(), m.op_ms.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return m;
}

}  // namespace infer
