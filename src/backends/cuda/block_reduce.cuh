#pragma once
// Reductions across the threads of a block, in f32, for kernels that give one row to a block
// (reductions, softmax, layer norm).
#include <cuda_runtime.h>

namespace infer::cuda {

struct SumOp {
    __device__ float operator()(float a, float b) const { return a + b; }
    static constexpr float identity = 0.0f;
};

// Propagates NaN, as the ONNX reference's max does.
struct MaxOp {
    __device__ float operator()(float a, float b) const { return (a > b || a != a) ? a : b; }
    static constexpr float identity = -__builtin_huge_valf();
};

template <class Op>
__device__ __forceinline__ float warp_reduce(float value, Op op) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2)
        value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
    return value;
}

// Every thread of the block gets the reduction of `value` over the block. blockDim.x must be a
// multiple of 32; `scratch` holds 32 floats of shared memory and may be reused right after.
template <class Op>
__device__ float block_reduce(float value, Op op, float* scratch) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int warps = blockDim.x / 32;
    value = warp_reduce(value, op);
    __syncthreads();  // a previous call may still be reading scratch
    if (lane == 0) scratch[warp] = value;
    __syncthreads();
    value = lane < warps ? scratch[lane] : Op::identity;
    return warp_reduce(value, op);
}

}  // namespace infer::cuda
