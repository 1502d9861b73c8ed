#pragma once
// Walking an output in row-major order while reading (or writing) N other tensors through their
// own strides: the one mechanism behind broadcasting, transposes, slices, expands and concats.
// Dimensions that every operand walks contiguously are merged first, so the common cases (same
// shapes, a bias broadcast along the last axis) cost one or two divisions per element.
#include "backends/cuda/kernel_support.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace infer::cuda {

inline constexpr int kMaxRank = 8;

template <int N>
struct Indexer {
    int rank = 0;
    int64_t dims[kMaxRank] = {};
    int64_t strides[N][kMaxRank] = {};

    // Element offsets of the row-major position `linear` in each operand.
    __device__ __forceinline__ void offsets(int64_t linear, int64_t (&offset)[N]) const {
#pragma unroll
        for (int k = 0; k < N; ++k) offset[k] = 0;
        for (int d = rank - 1; d > 0; --d) {
            const int64_t q = linear / dims[d];
            const int64_t index = linear - q * dims[d];
            linear = q;
#pragma unroll
            for (int k = 0; k < N; ++k) offset[k] += index * strides[k][d];
        }
        if (rank > 0) {
#pragma unroll
            for (int k = 0; k < N; ++k) offset[k] += linear * strides[k][0];
        }
    }
};

// Builds an indexer over `dims` (row-major) with each operand's strides, merging and dropping
// dimensions where that changes no offset. Throws Unsupported above kMaxRank merged dims.
template <int N>
Indexer<N> make_indexer(const std::vector<int64_t>& dims,
                        const std::array<std::vector<int64_t>, N>& strides, const Launch& launch) {
    std::vector<int64_t> merged_dims;
    std::array<std::vector<int64_t>, N> merged_strides;
    for (size_t d = 0; d < dims.size(); ++d) {
        if (dims[d] == 1) continue;
        bool can_merge = !merged_dims.empty();
        for (int k = 0; k < N && can_merge; ++k)
            can_merge = merged_strides[k].back() == strides[k][d] * dims[d];
        if (can_merge) {
            merged_dims.back() *= dims[d];
            for (int k = 0; k < N; ++k) merged_strides[k].back() = strides[k][d];
        } else {
            merged_dims.push_back(dims[d]);
            for (int k = 0; k < N; ++k) merged_strides[k].push_back(strides[k][d]);
        }
    }
    if (merged_dims.size() > static_cast<size_t>(kMaxRank))
        launch.unsupported("more than " + std::to_string(kMaxRank) + " non-mergeable dimensions");
    Indexer<N> indexer;
    indexer.rank = static_cast<int>(merged_dims.size());
    for (int d = 0; d < indexer.rank; ++d) {
        indexer.dims[d] = merged_dims[static_cast<size_t>(d)];
        for (int k = 0; k < N; ++k) indexer.strides[k][d] = merged_strides[k][static_cast<size_t>(d)];
    }
    return indexer;
}

}  // namespace infer::cuda
