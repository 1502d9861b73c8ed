// Softmax along one axis: exp(x - max) / sum, with the max and the sum kept in f32.
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/device_types.cuh"

#include <algorithm>

namespace infer::cuda {

namespace {

// The axis is the innermost one and rows are at most 32 * kPerLane long (attention scores are
// as long as the sequence): a warp per row, the row held in registers, so it is read from memory
// once and reduced with shuffles alone, with no shared memory and no block barriers.
template <class T, int kPerLane>
__global__ void softmax_warp_rows_kernel(const T* in, T* out, int64_t rows, int length) {
    const int lane = static_cast<int>(threadIdx.x) % 32;
    const int64_t warps_per_block = blockDim.x / 32;
    for (int64_t row = blockIdx.x * warps_per_block + threadIdx.x / 32; row < rows;
         row += gridDim.x * warps_per_block) {
        const T* x = in + row * length;
        T* y = out + row * length;
        float v[kPerLane];
        float max = MaxOp::identity;
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) {
            const int i = lane + 32 * j;
            v[j] = i < length ? load_float(x[i]) : MaxOp::identity;
            max = MaxOp{}(max, v[j]);
        }
        max = warp_reduce(max, MaxOp{});
        float sum = 0.0f;
#pragma unroll
        for (int j = 0; j < kPerLane; ++j) {
            v[j] = lane + 32 * j < length ? expf(v[j] - max) : 0.0f;
            sum += v[j];
        }
        const float inverse = 1.0f / warp_reduce(sum, SumOp{});
#pragma unroll
        for (int j = 0; j < kPerLane; ++j)
            if (lane + 32 * j < length) y[lane + 32 * j] = store<T>(static_cast<Compute<T>>(v[j] * inverse));
    }
}

template <class T, int kPerLane>
void launch_warp_rows(const Launch& l, const T* x, T* y, int64_t rows, int64_t length) {
    constexpr int kWarpsPerBlock = kBlock / 32;
    const auto blocks = static_cast<unsigned>(std::min<int64_t>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock, int64_t{1} << 20));
    softmax_warp_rows_kernel<T, kPerLane><<<blocks, kBlock, 0, l.handle()>>>(x, y, rows, static_cast<int>(length));
    l.check_launch("softmax_warp_rows_kernel");
}

// Longer rows: a block per row, reading the row coalesced.
template <class T>
__global__ void softmax_rows_kernel(const T* in, T* out, int64_t rows, int64_t length) {
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T* x = in + row * length;
        T* y = out + row * length;
        float max = MaxOp::identity;
        for (int64_t i = threadIdx.x; i < length; i += blockDim.x) max = MaxOp{}(max, load_float(x[i]));
        max = block_reduce(max, MaxOp{}, scratch);
        float sum = 0.0f;
        for (int64_t i = threadIdx.x; i < length; i += blockDim.x) sum += expf(load_float(x[i]) - max);
        sum = block_reduce(sum, SumOp{}, scratch);
        const float inverse = 1.0f / sum;
        for (int64_t i = threadIdx.x; i < length; i += blockDim.x)
            y[i] = store<T>(static_cast<Compute<T>>(expf(load_float(x[i]) - max) * inverse));
    }
}

// The axis has inner dimensions after it: a thread per (outer, inner) column, so that
// neighbouring threads read neighbouring elements.
template <class T>
__global__ void softmax_columns_kernel(const T* in, T* out, int64_t outer, int64_t length,
                                       int64_t inner) {
    INFER_GRID_STRIDE(column, outer * inner) {
        const int64_t o = column / inner, i = column % inner;
        const T* x = in + o * length * inner + i;
        T* y = out + o * length * inner + i;
        float max = MaxOp::identity;
        for (int64_t k = 0; k < length; ++k) max = MaxOp{}(max, load_float(x[k * inner]));
        float sum = 0.0f;
        for (int64_t k = 0; k < length; ++k) sum += expf(load_float(x[k * inner]) - max);
        const float inverse = 1.0f / sum;
        for (int64_t k = 0; k < length; ++k)
            y[k * inner] = store<T>(static_cast<Compute<T>>(expf(load_float(x[k * inner]) - max) * inverse));
    }
}

void run_softmax(const Launch& l) {
    const Shape& shape = l.ctx.input(0).shape();
    if (shape.rank() == 0) l.unsupported("a scalar input");
    const size_t axis = shape.normalize_axis(l.ctx.attrs().get_int("axis", -1));
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) outer *= shape[d];
    for (size_t d = axis + 1; d < shape.rank(); ++d) inner *= shape[d];
    const int64_t length = shape[axis];
    dispatch_float(l.ctx.input(0).dtype(), l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* x = static_cast<const T*>(l.in(0));
        auto* y = static_cast<T*>(l.out(0));
        if (inner == 1 && length <= 1024) {
            if (length <= 32) return launch_warp_rows<T, 1>(l, x, y, outer, length);
            if (length <= 64) return launch_warp_rows<T, 2>(l, x, y, outer, length);
            if (length <= 128) return launch_warp_rows<T, 4>(l, x, y, outer, length);
            if (length <= 256) return launch_warp_rows<T, 8>(l, x, y, outer, length);
            if (length <= 512) return launch_warp_rows<T, 16>(l, x, y, outer, length);
            return launch_warp_rows<T, 32>(l, x, y, outer, length);
        }
        if (inner == 1) {
            const auto blocks = static_cast<unsigned>(std::min<int64_t>(outer, int64_t{1} << 20));
            softmax_rows_kernel<<<blocks, kBlock, 0, l.handle()>>>(x, y, outer, length);
            l.check_launch("softmax_rows_kernel");
        } else {
            softmax_columns_kernel<<<grid_for(outer * inner), kBlock, 0, l.handle()>>>(
                x, y, outer, length, inner);
            l.check_launch("softmax_columns_kernel");
        }
    });
}

}  // namespace

void register_softmax_kernels(KernelRegistrar& r) { r.add("Softmax", kFloatTypes, run_softmax); }

}  // namespace infer::cuda
