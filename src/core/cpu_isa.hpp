#pragma once
// The instruction-set level the CPU backend's kernels were compiled for (CMake INFER_CPU_ISA)
// is a floor: on a CPU below it they would die of an illegal instruction. The core, compiled
// for the baseline, refuses such a CPU first, with an error that says how to rebuild.
#include <infer/error.hpp>

#include <string>

namespace infer::detail {

inline void require_cpu_isa(const std::string& level, bool supported) {
    if (!supported)
        throw DeviceError("the CPU backend was built for " + level +
                          " (AVX2, FMA and F16C from x86-64-v3 on) and this CPU lacks it; rebuild infer with "
                          "-DINFER_CPU_ISA=x86-64");
}

}  // namespace infer::detail
