#pragma once
// The CPU backend: host memory, OpenBLAS GEMM, and kernels for every op in the op table.
#include <infer/backend.hpp>

#include <memory>

namespace infer::cpu {

std::shared_ptr<Backend> make_cpu_backend();
// Threads OpenBLAS and our own kernels may use; 0 = all cores. Process-wide.
void set_thread_count(int threads);

}  // namespace infer::cpu
