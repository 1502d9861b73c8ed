// ReduceSum, ReduceMean, ReduceMax over any set of axes (the axes input), f32 accumulation.
#include "backends/cuda/reduce.hpp"

#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/indexing.cuh"

#include <algorithm>
#include <set>

namespace infer::cuda {

namespace {

// Below this many elements per output a thread reduces alone; above it a block shares the work.
constexpr int64_t kThreadReduceLimit = 64;

template <class T, class Op>
__global__ void reduce_thread_kernel(const T* in, T* out, int64_t outputs, int64_t count,
                                     Indexer<1> kept, Indexer<1> reduced, float scale, Op op) {
    INFER_GRID_STRIDE(o, outputs) {
        int64_t base[1];
        kept.offsets(o, base);
        float acc = Op::identity;
        for (int64_t r = 0; r < count; ++r) {
            int64_t offset[1];
            reduced.offsets(r, offset);
            acc = op(acc, load_float(in[base[0] + offset[0]]));
        }
        out[o] = store<T>(static_cast<Compute<T>>(acc * scale));
    }
}

template <class T, class Op>
__global__ void reduce_block_kernel(const T* in, T* out, int64_t outputs, int64_t count,
                                    Indexer<1> kept, Indexer<1> reduced, float scale, Op op) {
    __shared__ float scratch[32];
    for (int64_t o = blockIdx.x; o < outputs; o += gridDim.x) {
        int64_t base[1];
        kept.offsets(o, base);
        float acc = Op::identity;
        for (int64_t r = threadIdx.x; r < count; r += blockDim.x) {
            int64_t offset[1];
            reduced.offsets(r, offset);
            acc = op(acc, load_float(in[base[0] + offset[0]]));
        }
        acc = block_reduce(acc, op, scratch);
        if (threadIdx.x == 0) out[o] = store<T>(static_cast<Compute<T>>(acc * scale));
    }
}

template <class T, class Op>
void launch_typed(const Launch& l, const T* in, T* out, int64_t outputs, int64_t count,
                  const Indexer<1>& kept, const Indexer<1>& reduced, float scale, Op op) {
    if (count <= kThreadReduceLimit) {
        reduce_thread_kernel<<<grid_for(outputs), kBlock, 0, l.handle()>>>(
            in, out, outputs, count, kept, reduced, scale, op);
        l.check_launch("reduce_thread_kernel");
    } else {
        const auto blocks = static_cast<unsigned>(std::min<int64_t>(outputs, int64_t{1} << 20));
        reduce_block_kernel<<<blocks, kBlock, 0, l.handle()>>>(in, out, outputs, count, kept,
                                                               reduced, scale, op);
        l.check_launch("reduce_block_kernel");
    }
}

template <ReduceKind kKind>
void run_reduce(const Launch& l) {
    const Tensor& x = l.ctx.input(0);
    std::vector<int64_t> axes;
    if (l.ctx.has_input(1)) axes = l.ints(1);
    const bool noop = axes.empty() && l.ctx.attrs().get_int("noop_with_empty_axes", 0) != 0;
    if (noop) {
        INFER_CUDA_CHECK(cudaMemcpyAsync(l.out(0), l.in(0), x.nbytes(), cudaMemcpyDeviceToDevice,
                                         l.handle()),
                         l.where() + ", " + std::to_string(x.nbytes()) + " bytes");
        return;
    }
    std::set<size_t> unique;
    if (axes.empty())
        for (size_t i = 0; i < x.rank(); ++i) unique.insert(i);
    for (int64_t axis : axes) unique.insert(x.shape().normalize_axis(axis));
    launch_reduce(l, x.dtype(), kKind, l.in(0), l.out(0), x.shape().dims(),
                  {unique.begin(), unique.end()});
}

}  // namespace

void launch_reduce(const Launch& l, DType type, ReduceKind kind, const void* in, void* out,
                   const std::vector<int64_t>& dims, const std::vector<size_t>& axes) {
    const std::vector<int64_t> strides = Shape(dims).contiguous_strides();
    std::vector<int64_t> kept_dims, kept_strides, reduced_dims, reduced_strides;
    for (size_t d = 0; d < dims.size(); ++d) {
        const bool reduced = std::binary_search(axes.begin(), axes.end(), d);
        (reduced ? reduced_dims : kept_dims).push_back(dims[d]);
        (reduced ? reduced_strides : kept_strides).push_back(strides[d]);
    }
    int64_t outputs = 1, count = 1;
    for (int64_t d : kept_dims) outputs *= d;
    for (int64_t d : reduced_dims) count *= d;
    if (count == 0) l.unsupported("reducing an empty axis");
    const auto kept = make_indexer<1>(kept_dims, {kept_strides}, l);
    const auto reduced = make_indexer<1>(reduced_dims, {reduced_strides}, l);
    const float scale = kind == ReduceKind::mean ? 1.0f / static_cast<float>(count) : 1.0f;
    dispatch_float(type, l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* x = static_cast<const T*>(in);
        auto* y = static_cast<T*>(out);
        if (kind == ReduceKind::max)
            launch_typed(l, x, y, outputs, count, kept, reduced, 1.0f, MaxOp{});
        else
            launch_typed(l, x, y, outputs, count, kept, reduced, scale, SumOp{});
    });
}

void register_reduce_kernels(KernelRegistrar& r) {
    r.add("ReduceSum", kFloatTypes, run_reduce<ReduceKind::sum>);
    r.add("ReduceMean", kFloatTypes, run_reduce<ReduceKind::mean>);
    r.add("ReduceMax", kFloatTypes, run_reduce<ReduceKind::max>);
}

}  // namespace infer::cuda
