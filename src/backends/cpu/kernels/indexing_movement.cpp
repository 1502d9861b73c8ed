// Ops that only move bytes: the reshaping family, Transpose, Expand and Slice. They depend on
// element size alone, so one kernel serves every dtype.
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/indexing_kernels.hpp"
#include "backends/cpu/kernels/strided_copy.hpp"
#include "core/ops/shapes_indexing.hpp"

#include <numeric>

namespace infer::cpu {

namespace {

// Reshape, Flatten, Squeeze, Unsqueeze and Identity: same bytes, another shape (already set
// on the output).
void copy_kernel(KernelContext& ctx) {
    parallel_copy(ctx.output(0).raw_data(), ctx.input(0).raw_data(), ctx.input(0).nbytes());
}

void transpose_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    std::vector<int64_t> perm(in.rank());
    std::iota(perm.rbegin(), perm.rend(), 0);
    perm = ctx.attrs().get_ints("perm", perm);
    const std::vector<int64_t> in_strides = in.shape().contiguous_strides();
    std::vector<int64_t> strides;
    for (int64_t p : perm) strides.push_back(in_strides[in.shape().normalize_axis(p)]);
    strided_copy(out.raw_data(), in.raw_data(), out.shape().dims(), strides,
                 dtype_size(in.dtype()));
}

void expand_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    broadcast_copy(out.raw_data(), out.shape(), in.raw_data(), in.shape(), dtype_size(in.dtype()));
}

void slice_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    const std::vector<int64_t> starts = read_ints(ctx, 1), ends = read_ints(ctx, 2);
    std::vector<int64_t> axes(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
    if (ctx.has_input(3)) axes = read_ints(ctx, 3);
    std::vector<int64_t> steps(starts.size(), 1);
    if (ctx.has_input(4)) steps = read_ints(ctx, 4);
    if (out.numel() == 0) return;
    std::vector<int64_t> strides = in.shape().contiguous_strides();
    int64_t offset = 0;
    for (size_t i = 0; i < starts.size(); ++i) {
        const size_t axis = in.shape().normalize_axis(axes[i]);
        const detail::SliceRange range =
            detail::resolve_slice(in.shape()[axis], starts[i], ends[i], steps[i]);
        offset += range.start * strides[axis];
        strides[axis] *= range.step;
    }
    const size_t element = dtype_size(in.dtype());
    strided_copy(out.raw_data(), static_cast<const char*>(in.raw_data()) + offset * element,
                 out.shape().dims(), strides, element);
}

}  // namespace

void register_indexing_movement(KernelRegistry& r) {
    for (DType t : kAllDTypes) {
        for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"})
            r.add(op, t, copy_kernel);
        r.add("Transpose", t, transpose_kernel);
        r.add("Expand", t, expand_kernel);
        r.add("Slice", t, slice_kernel);
    }
}

}  // namespace infer::cpu
