// ArgMax and ArgMin along one axis (keepdims, select_last_index), i64 indices. One block per
// line; each thread scans a strided part of the line, then the block merges the candidates.
// Generation uses ArgMax to choose the next tokens on the device, so that only their ids cross
// to the host instead of a [rows, vocabulary] row of logits.
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/kernel_support.hpp"

#include <algorithm>

namespace infer::cuda {

namespace {

// A candidate: its value and its index along the line; index -1 is none. The merge reproduces
// the CPU kernel's left-to-right scan: a NaN at index 0 is kept (nothing compares better than
// it), a NaN elsewhere is never chosen, and equal values go to the first index (or the last,
// with select_last_index).
struct Candidate {
    float value;
    int64_t index;
};

template <bool kMax>
__device__ __forceinline__ Candidate better_of(Candidate a, Candidate b, bool last) {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    if (a.index == 0 && a.value != a.value) return a;
    if (b.index == 0 && b.value != b.value) return b;
    const bool b_better = kMax ? b.value > a.value : b.value < a.value;
    if (b_better) return b;
    if (b.value == a.value && (last ? b.index > a.index : b.index < a.index)) return b;
    return a;
}

template <bool kMax>
__device__ Candidate warp_best(Candidate c, bool last) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        Candidate other{__shfl_xor_sync(0xffffffffu, c.value, offset),
                        static_cast<int64_t>(__shfl_xor_sync(0xffffffffu, static_cast<long long>(c.index), offset))};
        c = better_of<kMax>(c, other, last);
    }
    return c;
}

constexpr int kUnroll = 4;

template <bool kMax, class T>
__global__ void arg_reduce_kernel(const T* in, int64_t* out, int64_t lines, int64_t length, int64_t inner, bool last) {
    __shared__ float values[32];
    __shared__ int64_t indices[32];
    for (int64_t line = blockIdx.x; line < lines; line += gridDim.x) {
        const int64_t outer = line / inner, within = line % inner;
        const T* x = in + outer * length * inner + within;
        Candidate best{0.0f, -1};
        // Four loads in flight per thread before any comparison: one block scans a generation
        // step's logits row (50 257 for GPT-2) alone, and one load at a time waited on memory
        // 196 times per thread (65 µs a step on the H200).
        const int64_t step = blockDim.x;
        for (int64_t j0 = threadIdx.x; j0 < length; j0 += kUnroll * step) {
            float v[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int64_t j = j0 + u * step;
                v[u] = j < length ? load_float(x[j * inner]) : 0.0f;
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                const int64_t j = j0 + u * step;
                if (j >= length || (v[u] != v[u] && j != 0)) continue;  // a NaN past the first element is never chosen
                best = better_of<kMax>(best, Candidate{v[u], j}, last);
            }
        }
        best = warp_best<kMax>(best, last);
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        __syncthreads();  // the previous line's merge may still read the scratch
        if (lane == 0) {
            values[warp] = best.value;
            indices[warp] = best.index;
        }
        __syncthreads();
        if (warp == 0) {
            Candidate c = lane < static_cast<int>(blockDim.x / 32) ? Candidate{values[lane], indices[lane]} : Candidate{0.0f, -1};
            c = warp_best<kMax>(c, last);
            if (lane == 0) out[line] = c.index;
        }
    }
}

template <bool kMax>
void run_arg_reduce(const Launch& l) {
    const Tensor& x = l.ctx.input(0);
    const Shape& shape = x.shape();
    const size_t axis = shape.normalize_axis(l.ctx.attrs().get_int("axis", 0));
    const bool last = l.ctx.attrs().get_int("select_last_index", 0) != 0;
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= shape[d];
    for (size_t d = axis + 1; d < shape.rank(); ++d) inner *= shape[d];
    const int64_t length = shape[axis], lines = outer * inner;
    if (lines == 0) return;
    if (length == 0) l.unsupported("ArgMax/ArgMin over an empty axis");
    // Short lines waste most of a big block; 64 threads still cover a warp pair. A vocabulary
    // row gets the largest block (32 warps: the merge's scratch holds 32).
    const unsigned threads = length >= 16384 ? 1024 : length >= 1024 ? 256 : 64;
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(lines, int64_t{1} << 20));
    dispatch_float(x.dtype(), l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        arg_reduce_kernel<kMax, T><<<blocks, threads, 0, l.handle()>>>(static_cast<const T*>(l.in(0)),
                                                                        static_cast<int64_t*>(l.out(0)), lines, length, inner, last);
    });
    l.check_launch(kMax ? "arg_reduce_kernel<max>" : "arg_reduce_kernel<min>");
}

}  // namespace

void register_arg_reduce_kernels(KernelRegistrar& r) {
    r.add("ArgMax", kFloatTypes, run_arg_reduce<true>);
    r.add("ArgMin", kFloatTypes, run_arg_reduce<false>);
}

}  // namespace infer::cuda
