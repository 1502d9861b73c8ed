#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/f16_range.hpp"

#include <algorithm>

namespace infer::cuda {

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ unsigned magnitude(unsigned short bits) { return bits & 0x7fffu; }

// Each thread takes 8 values at a time (one 16-byte load where the data is aligned), the block
// reduces its threads' maxima and one atomicMax per block merges them into *largest.
__global__ void largest_magnitude_kernel(const unsigned short* values, size_t count, unsigned* largest) {
    unsigned best = 0;
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const bool aligned = reinterpret_cast<uintptr_t>(values) % 16 == 0;
    size_t scalar_from = 0;
    if (aligned) {
        const size_t vectors = count / 8;
        const auto* packs = reinterpret_cast<const uint4*>(values);
        for (size_t v = first; v < vectors; v += stride) {
            const uint4 p = packs[v];
            const unsigned words[4] = {p.x, p.y, p.z, p.w};
#pragma unroll
            for (int w = 0; w < 4; ++w) best = max(best, max(words[w] & 0x7fffu, (words[w] >> 16) & 0x7fffu));
        }
        scalar_from = vectors * 8;
    }
    for (size_t i = scalar_from + first; i < count; i += stride) best = max(best, magnitude(values[i]));
    // Across the warp, then one lane per warp.
    best = __reduce_max_sync(0xffffffffu, best);
    if (threadIdx.x % 32 == 0 && best > 0) atomicMax(largest, best);
}

}  // namespace

uint16_t largest_f16_magnitude(const void* data, size_t count, cudaStream_t stream, const std::string& where) {
    if (count == 0) return 0;
    const std::string what = "f16 range check on " + where;
    unsigned* largest = nullptr;
    // Stream-ordered, so the scratch word needs no lifetime beyond this call.
    INFER_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&largest), sizeof(unsigned), stream), what);
    unsigned result = 0;
    cudaError_t status = cudaMemsetAsync(largest, 0, sizeof(unsigned), stream);
    if (status == cudaSuccess) {
        int sms = 0, device = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        const size_t wanted = (count / 8 + kThreads - 1) / kThreads;
        const int blocks = static_cast<int>(std::clamp<size_t>(wanted, 1, static_cast<size_t>(std::max(sms, 1)) * 8));
        largest_magnitude_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const unsigned short*>(data), count,
                                                                  largest);
        status = cudaGetLastError();
    }
    if (status == cudaSuccess) status = cudaMemcpyAsync(&result, largest, sizeof result, cudaMemcpyDeviceToHost, stream);
    const cudaError_t freed = cudaFreeAsync(largest, stream);
    if (status == cudaSuccess) status = freed;
    if (status == cudaSuccess) status = cudaStreamSynchronize(stream);
    INFER_CUDA_CHECK(status, what);
    return static_cast<uint16_t>(result);
}

}  // namespace infer::cuda
