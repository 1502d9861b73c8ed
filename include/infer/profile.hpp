#pragma once
// Where the time of one run went, measured the way asynchronous devices must be measured: each
// step is bracketed by timing marks on its device's own stream (CUDA events), read only after
// the run has synchronized, and the run's wall time is taken on the host clock after the final
// synchronization. Profiling adds two marks per step, a few microseconds each on a GPU: time
// latency with plain runs and use profiled runs for the breakdown.
#include <infer/device.hpp>

#include <optional>
#include <string>
#include <vector>

namespace infer {

enum class StepKind {
    kernel,            // a node's kernel (on the requested device or a CPU fallback)
    host_to_device,    // an input or a CPU result copied onto an accelerator
    device_to_host,    // an accelerator result copied to the host
    device_to_device,  // between two accelerators
};
std::string_view step_kind_name(StepKind kind);

struct StepTiming {
    std::string node;  // the node's name; for copies, "copy"
    std::string op;    // the op, or the kind of copy
    Device device;     // where it ran (for copies: the accelerator's side)
    StepKind kind;
    double ms = 0;     // on that device's clock, from its start mark to its end mark
};

struct RunProfile {
    double wall_ms = 0;  // host clock, from the call to the synchronized end of the run
    double h2d_ms = 0;   // sum of host_to_device steps
    double d2h_ms = 0;   // sum of device_to_host steps (outputs stay on the device: a caller's
                         // own copy of them to the host is not part of the run)
    // The rest of the wall time: kernels, launch overhead, and host work between them.
    double compute_ms = 0;
    // Sum of the steps that ran on accelerators. A step's interval starts when the device
    // reaches its start mark, so time the device spent waiting for the host to enqueue the
    // step's work is counted as busy only within the step; gaps between steps are idle.
    double accelerator_busy_ms = 0;
    bool used_accelerator = false;
    // Buffers the run allocated on any device: outputs the caller did not bind, and working
    // memory that had to grow. Zero in a steady run with every output bound.
    size_t allocations = 0;
    // Copies between devices (the copy steps) and into bound outputs that live elsewhere.
    size_t copies = 0;
    std::vector<StepTiming> steps;

    // accelerator_busy_ms / wall_ms when an accelerator ran steps; nothing otherwise.
    std::optional<double> accelerator_busy_fraction() const;
};

}  // namespace infer
