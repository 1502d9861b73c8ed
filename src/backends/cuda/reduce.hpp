#pragma once
// The reduction launcher, shared with the pools (GlobalAveragePool is a mean over spatial axes).
#include "backends/cuda/kernel_support.hpp"

#include <cstdint>
#include <vector>

namespace infer::cuda {

enum class ReduceKind { sum, mean, max };

// Reduces the contiguous tensor `in` of shape `dims` over `axes` (sorted, unique) into `out`,
// whose elements are the kept dimensions in order. Accumulates in f32.
void launch_reduce(const Launch& launch, DType type, ReduceKind kind, const void* in, void* out,
                   const std::vector<int64_t>& dims, const std::vector<size_t>& axes);

}  // namespace infer::cuda
