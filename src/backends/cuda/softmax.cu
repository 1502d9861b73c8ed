// Softmax along one axis: exp(x - max) / sum, with the max and the sum kept in f32.
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/device_types.cuh"

#include <algorithm>

namespace infer::cuda {

namespace {

// The axis is the innermost one: a block per row, reading the row coalesced.
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
