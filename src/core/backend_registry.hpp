#pragma once
// The process-wide backend registry's internal side.
#include <infer/backend.hpp>

#include <memory>
#include <string>
#include <vector>

namespace infer::detail {

// The backends built into libinfer (the CPU's, and CUDA's where it was compiled), registered
// when the registry is first used. Defined in src/backends/builtin_backends.cpp, so the core
// includes no backend.
std::vector<std::shared_ptr<Backend>> builtin_backends();

// The backend registered under `name`, or nullptr; does not check device indices.
std::shared_ptr<Backend> backend_named(const std::string& name);

}  // namespace infer::detail
