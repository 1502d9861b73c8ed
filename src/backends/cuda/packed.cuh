#pragma once
// Vector access for elementwise kernels: V neighbouring elements moved by one 16-byte load or
// store instead of V narrow ones. Scalar 2- and 4-byte accesses leave an H100/H200 well short of
// its memory bandwidth, and elementwise ops have nothing else to wait on.
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/indexing.cuh"

#include <algorithm>
#include <cstdint>

namespace infer::cuda {

template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
    T v[V];
};

// Elements of the wider of S and D per 16-byte access.
template <class S, class D = S>
inline constexpr int kPackWidth = static_cast<int>(16 / std::max(sizeof(S), sizeof(D)));

inline bool is_aligned(const void* pointer, size_t bytes) {
    return reinterpret_cast<uintptr_t>(pointer) % bytes == 0;
}

// Whether the indexer's positions split into whole groups of V neighbours along the innermost
// dimension (each group then shares one index computation).
template <int V, int N>
bool splits_into_groups(const Indexer<N, int32_t>& index) {
    return V > 1 && index.rank > 0 && index.inner_size() % V == 0;
}

// Whether operand k can move a group with one vector access: stride 1 along the innermost
// dimension, and every group starting on a Pack boundary.
template <int V, int N>
bool moves_groups_whole(const Indexer<N, int32_t>& index, int k, const void* base, size_t element_size) {
    if (index.inner_stride(k) != 1 || !is_aligned(base, element_size * V)) return false;
    for (int d = 0; d + 1 < index.rank; ++d)
        if (index.strides[k][d] % V != 0) return false;
    return true;
}

// out[i] = f(in[i]) for i in [0, n) over contiguous arrays: V at a time, then the n % V left over
// one by one. With V > 1 both arrays must be aligned to a whole Pack.
template <int V, class S, class D, class F>
__global__ void map_contiguous_kernel(const S* in, D* out, int64_t n, F f) {
    const int64_t packs = n / V;
    INFER_GRID_STRIDE(p, packs) {
        const Pack<S, V> x = reinterpret_cast<const Pack<S, V>*>(in)[p];
        Pack<D, V> y;
#pragma unroll
        for (int j = 0; j < V; ++j) y.v[j] = f(x.v[j]);
        reinterpret_cast<Pack<D, V>*>(out)[p] = y;
    }
    INFER_GRID_STRIDE(i, n - packs * V) out[packs * V + i] = f(in[packs * V + i]);
}

// Launches the map with vector access where the pointers allow it.
template <class S, class D, class F>
void launch_map_contiguous(const Launch& l, const S* in, D* out, int64_t n, F f, const char* name) {
    constexpr int V = kPackWidth<S, D>;
    if (is_aligned(in, sizeof(S) * V) && is_aligned(out, sizeof(D) * V))
        map_contiguous_kernel<V><<<grid_for(std::max<int64_t>(n / V, 1)), kBlock, 0, l.handle()>>>(in, out, n, f);
    else
        map_contiguous_kernel<1><<<grid_for(n), kBlock, 0, l.handle()>>>(in, out, n, f);
    l.check_launch(name);
}

}  // namespace infer::cuda
