#include <infer/profile.hpp>

namespace infer {

std::string_view step_kind_name(StepKind kind) {
    switch (kind) {
        case StepKind::kernel: return "kernel";
        case StepKind::host_to_device: return "host_to_device";
        case StepKind::device_to_host: return "device_to_host";
        case StepKind::device_to_device: return "device_to_device";
    }
    return "?";
}

std::optional<double> RunProfile::accelerator_busy_fraction() const {
    if (!used_accelerator || wall_ms <= 0) return std::nullopt;
    return accelerator_busy_ms / wall_ms;
}

}  // namespace infer
