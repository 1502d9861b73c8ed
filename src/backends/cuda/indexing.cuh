#pragma once
// Walking an output in row-major order while reading (or writing) N other tensors through their
// own strides: the one mechanism behind broadcasting, transposes, slices, expands and concats.
// Dimensions that every operand walks contiguously are merged first, so the common cases (same
// shapes, a bias broadcast along the last axis) split a position into one or two coordinates.
// Where every position and offset fits in 31 bits, the split uses 32-bit FastDivmod instead of
// 64-bit division, which is what keeps these kernels bound by memory rather than by index math.
#include "backends/cuda/fast_divmod.hpp"
#include "backends/cuda/kernel_support.hpp"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <vector>

namespace infer::cuda {

inline constexpr int kMaxRank = 8;

// Index = int64_t (any size) or int32_t (positions and offsets below 2^31).
template <int N, class Index = int64_t>
struct Indexer {
    using IndexType = Index;
    using Divisor = std::conditional_t<std::is_same_v<Index, int32_t>, FastDivmod, int64_t>;

    int rank = 0;
    Divisor dims[kMaxRank] = {};
    Index strides[N][kMaxRank] = {};

    // Element offsets of the row-major position `linear` in each operand.
    __device__ __forceinline__ void offsets(Index linear, Index (&offset)[N]) const {
#pragma unroll
        for (int k = 0; k < N; ++k) offset[k] = 0;
        for (int d = rank - 1; d > 0; --d) {
            Index q, size;
            if constexpr (std::is_same_v<Index, int32_t>) {
                q = static_cast<Index>(dims[d].quotient(static_cast<uint32_t>(linear)));
                size = static_cast<Index>(dims[d].divisor);
            } else {
                q = linear / dims[d];
                size = dims[d];
            }
            const Index index = linear - q * size;
            linear = q;
#pragma unroll
            for (int k = 0; k < N; ++k) offset[k] += index * strides[k][d];
        }
        if (rank > 0) {
#pragma unroll
            for (int k = 0; k < N; ++k) offset[k] += linear * strides[k][0];
        }
    }

    // The merged dimension that varies fastest, and an operand's stride along it.
    int64_t inner_size() const {
        if (rank == 0) return 1;
        if constexpr (std::is_same_v<Index, int32_t>) return dims[rank - 1].divisor;
        else return dims[rank - 1];
    }
    int64_t inner_stride(int k) const { return rank == 0 ? 0 : strides[k][rank - 1]; }
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

// Calls f(indexer) with the 32-bit form when it is safe, else with the 64-bit form. Safe: fewer
// than 2^30 positions (so that a grid-stride step past the end cannot wrap) and every offset
// reached within 31 bits, either sign (reversed slices walk backwards).
template <int N, class F>
void with_narrowest_indexer(const Indexer<N>& wide, int64_t n, F&& f) {
    bool fits = n < (int64_t{1} << 30);
    for (int k = 0; k < N && fits; ++k) {
        int64_t reach = 0;
        for (int d = 0; d < wide.rank; ++d) reach += (wide.dims[d] - 1) * std::llabs(wide.strides[k][d]);
        fits = reach < (int64_t{1} << 31);
    }
    if (!fits) return f(wide);
    Indexer<N, int32_t> narrow;
    narrow.rank = wide.rank;
    for (int d = 0; d < wide.rank; ++d) {
        narrow.dims[d] = FastDivmod(static_cast<uint32_t>(wide.dims[d]));
        for (int k = 0; k < N; ++k) narrow.strides[k][d] = static_cast<int32_t>(wide.strides[k][d]);
    }
    f(narrow);
}

// A grid-stride loop over positions [0, n) in the indexer's index type.
#define INFER_GRID_STRIDE_AS(Index, i, n)                                                     \
    for (Index i = static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x); i < (n);          \
         i += static_cast<Index>(gridDim.x * blockDim.x))

}  // namespace infer::cuda
