#pragma once
// The CPU backend: host memory, OpenBLAS GEMM, and kernels for every op in the op table.
#include <infer/backend.hpp>

#include <memory>

namespace infer::cpu {

std::shared_ptr<Backend> make_cpu_backend();

}  // namespace infer::cpu
