#pragma once
// Which device (and precision) to run a request of a given batch size on, decided from measured
// profiles rather than folklore: GPUs win on large batches, the CPU often wins on small ones, and
// where the crossover lies depends on the model, the machine and the copies. An application
// measures its configurations once (infer::measure, or infer-bench's JSON), then routes each
// request: small ones to the CPU, large ones to the GPU.
#include <infer/device.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infer {

// One measured configuration at one batch size.
struct ProfilePoint {
    std::string config;   // how it is named in advice: "cpu f32", "cuda:0 f16 pinned"
    Device device;
    int64_t batch = 1;
    double latency_ms = 0;  // median, for the whole batch
};

struct Advice {
    std::string config;
    Device device;
    double latency_ms = 0;     // expected for the batch (interpolated between measured batches)
    double throughput_per_s = 0;
    // The best configuration on the other kind of device (CPU vs accelerator), for comparison.
    std::optional<std::string> alternative;
    double alternative_latency_ms = 0;
};

class DeviceAdvisor {
public:
    DeviceAdvisor() = default;
    explicit DeviceAdvisor(std::vector<ProfilePoint> points);
    void add(ProfilePoint point);

    // The configuration with the lowest expected latency for a request of `batch` items. Between
    // measured batches latency is interpolated on log-log axes; beyond the largest it grows in
    // proportion to the batch; below the smallest it is the smallest's. Throws InvalidArgument
    // when nothing was measured or batch < 1.
    Advice advise(int64_t batch) const;

    // The smallest measured batch at which an accelerator configuration has lower latency than
    // every CPU configuration at that batch; none if it never does (or one kind is missing).
    std::optional<int64_t> latency_crossover() const;
    // The smallest measured batch at which an accelerator configuration's throughput exceeds the
    // best throughput any CPU configuration reached at any measured batch.
    std::optional<int64_t> throughput_crossover() const;

    // One plain sentence over the measured batches, e.g. "batch 1–2: cpu f32 (0.9 ms vs 1.4 ms on
    // cuda:0 f16 pinned); batch 4–256: cuda:0 f16 pinned (2.1 ms vs 5.3 ms on cpu f32)".
    std::string recommendation() const;

    const std::vector<ProfilePoint>& points() const { return points_; }

private:
    double expected_latency(const std::string& config, int64_t batch) const;
    std::vector<std::string> configs(bool accelerator) const;
    std::vector<int64_t> batches() const;

    std::vector<ProfilePoint> points_;
};

}  // namespace infer
