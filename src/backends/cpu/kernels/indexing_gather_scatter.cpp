// GatherElements, GatherND, ScatterElements (and its deprecated alias Scatter), ScatterND,
// TensorScatter.
// Index tensors are i64 or i32; negative indices count from the end of their axis.
#include "backends/cpu/kernels/indexing_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "core/ops/shapes_indexing.hpp"

#include <algorithm>
#include <cstring>
#include <string>

namespace infer::cpu {

namespace {

// For each element of an index tensor shaped like `shape`, the flat offset into a tensor of
// `target` shape at the same position but with `axis` replaced by the index.
std::vector<int64_t> element_offsets(const KernelContext& ctx, const Shape& shape,
                                     const Shape& target, size_t axis,
                                     const std::vector<int64_t>& indices) {
    const std::vector<int64_t> target_strides = strides_of(target);
    std::vector<int64_t> offsets(indices.size());
    std::vector<int64_t> position(shape.rank(), 0);
    for (size_t flat = 0; flat < indices.size(); ++flat) {
        int64_t offset = 0;
        for (size_t d = 0; d < shape.rank(); ++d) {
            const int64_t i = d == axis ? checked_index(ctx, indices[flat], target[d]) : position[d];
            offset += i * target_strides[d];
        }
        offsets[flat] = offset;
        for (size_t d = shape.rank(); d-- > 0;) {  // advance the position, last axis fastest
            if (++position[d] < shape[d]) break;
            position[d] = 0;
        }
    }
    return offsets;
}

void gather_elements_kernel(KernelContext& ctx) {
    const Tensor& data = ctx.input(0);
    Tensor& out = ctx.output(0);
    const size_t axis = data.shape().normalize_axis(ctx.attrs().get_int("axis", 0));
    const Shape& ishape = ctx.input(1).shape();
    for (size_t d = 0; d < ishape.rank(); ++d)
        if (d != axis && ishape[d] > data.shape()[d])
            invalid_argument(ctx, "indices " + ishape.to_string() + " exceed data " + data.shape().to_string());
    const std::vector<int64_t> offsets =
        element_offsets(ctx, ishape, data.shape(), axis, read_ints(ctx, 1));
    visit_word(ctx, data.dtype(), [&](auto word) {
        using W = decltype(word);
        const W* src = static_cast<const W*>(data.raw_data());
        W* dst = static_cast<W*>(out.raw_data());
        for (size_t i = 0; i < offsets.size(); ++i) dst[i] = src[offsets[i]];
    });
}

// How ScatterElements and ScatterND combine an update with the element already there.
template <class T>
T combine(const std::string& reduction, T old, T update) {
    if (reduction == "none") return update;
    const double a = to_double(old), b = to_double(update);
    if (reduction == "add") return from_double<T>(a + b);
    if (reduction == "mul") return from_double<T>(a * b);
    if (reduction == "max") return from_double<T>(std::max(a, b));
    return from_double<T>(std::min(a, b));
}

std::string read_reduction(const KernelContext& ctx) {
    std::string reduction = ctx.attrs().get_string("reduction", "none");
    if (reduction != "none" && reduction != "add" && reduction != "mul" && reduction != "max" &&
        reduction != "min")
        invalid_argument(ctx, "unknown reduction '" + reduction + "'");
    return reduction;
}

void scatter_elements_kernel(KernelContext& ctx) {
    const Tensor& data = ctx.input(0);
    Tensor& out = ctx.output(0);
    const size_t axis = data.shape().normalize_axis(ctx.attrs().get_int("axis", 0));
    const std::string reduction = read_reduction(ctx);
    const Shape& ishape = ctx.input(1).shape();
    for (size_t d = 0; d < ishape.rank(); ++d)
        if (d != axis && ishape[d] > data.shape()[d])
            invalid_argument(ctx, "indices " + ishape.to_string() + " exceed data " + data.shape().to_string());
    const std::vector<int64_t> offsets =
        element_offsets(ctx, ishape, data.shape(), axis, read_ints(ctx, 1));
    std::memcpy(out.raw_data(), data.raw_data(), data.nbytes());
    visit_type(data.dtype(), [&](auto type) {
        using T = decltype(type);
        const T* updates = static_cast<const T*>(ctx.input(2).raw_data());
        T* dst = static_cast<T*>(out.raw_data());
        for (size_t i = 0; i < offsets.size(); ++i)
            dst[offsets[i]] = combine(reduction, dst[offsets[i]], updates[i]);
    });
}

// Index tuples of GatherND/ScatterND resolved to flat element offsets of the slices they pick
// in data (`batch` leading dims shared by data and indices).
struct NdSlices {
    std::vector<int64_t> offsets;  // one per index tuple, in indices' order
    int64_t slice = 1;             // elements per slice
};
NdSlices nd_slices(const KernelContext& ctx, const Shape& data, const Shape& ishape, size_t batch) {
    const std::vector<int64_t> indices = read_ints(ctx, 1);
    const size_t depth = static_cast<size_t>(ishape[ishape.rank() - 1]);
    const std::vector<int64_t> strides = strides_of(data);
    NdSlices s;
    for (size_t d = batch + depth; d < data.rank(); ++d) s.slice *= data[d];
    const int64_t tuples = depth == 0 ? 0 : static_cast<int64_t>(indices.size() / depth);
    int64_t per_batch = 1;
    for (size_t d = batch; d + 1 < ishape.rank(); ++d) per_batch *= ishape[d];
    const int64_t batch_stride = batch == 0 ? 0 : strides[batch - 1];
    s.offsets.resize(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {
        int64_t offset = (t / per_batch) * batch_stride;
        for (size_t k = 0; k < depth; ++k)
            offset += checked_index(ctx, indices[static_cast<size_t>(t) * depth + k], data[batch + k]) *
                      strides[batch + k];
        s.offsets[static_cast<size_t>(t)] = offset;
    }
    return s;
}

void gather_nd_kernel(KernelContext& ctx) {
    const Tensor& data = ctx.input(0);
    const size_t batch = static_cast<size_t>(ctx.attrs().get_int("batch_dims", 0));
    const NdSlices s = nd_slices(ctx, data.shape(), ctx.input(1).shape(), batch);
    const size_t bytes = static_cast<size_t>(s.slice) * dtype_size(data.dtype());
    const auto* src = static_cast<const char*>(data.raw_data());
    auto* dst = static_cast<char*>(ctx.output(0).raw_data());
    for (size_t t = 0; t < s.offsets.size(); ++t)
        std::memcpy(dst + t * bytes, src + static_cast<size_t>(s.offsets[t]) * dtype_size(data.dtype()), bytes);
}

void scatter_nd_kernel(KernelContext& ctx) {
    const Tensor& data = ctx.input(0);
    Tensor& out = ctx.output(0);
    const std::string reduction = read_reduction(ctx);
    const NdSlices s = nd_slices(ctx, data.shape(), ctx.input(1).shape(), 0);
    if (ctx.input(2).numel() != static_cast<int64_t>(s.offsets.size()) * s.slice)
        invalid_argument(ctx, "updates " + ctx.input(2).shape().to_string() + " do not match indices");
    std::memcpy(out.raw_data(), data.raw_data(), data.nbytes());
    visit_type(data.dtype(), [&](auto type) {
        using T = decltype(type);
        const T* updates = static_cast<const T*>(ctx.input(2).raw_data());
        T* dst = static_cast<T*>(out.raw_data());
        for (size_t t = 0; t < s.offsets.size(); ++t)
            for (int64_t k = 0; k < s.slice; ++k) {
                T& slot = dst[s.offsets[t] + k];
                slot = combine(reduction, slot, updates[static_cast<int64_t>(t) * s.slice + k]);
            }
    });
}

// The cache is copied only when the output is not the past cache's own buffer: in place (the
// planner's reuse, or a caller binding one tensor as both), a step writes just its new rows.
void tensor_scatter_kernel(KernelContext& ctx) {
    const Tensor& past = ctx.input(0);
    const Tensor& update = ctx.input(1);
    Tensor& out = ctx.output(0);
    const size_t axis = detail::tensor_scatter_axis(ctx.attrs(), past.rank());
    const bool circular = ctx.attrs().get_string("mode", "linear") == "circular";
    const int64_t capacity = past.shape()[axis], length = update.shape()[axis];
    const int64_t batch = past.shape()[0];
    std::vector<int64_t> starts(static_cast<size_t>(batch), 0);
    if (ctx.has_input(2)) starts = read_ints(ctx, 2);
    for (int64_t b = 0; b < batch; ++b) {
        const int64_t start = starts[static_cast<size_t>(b)];
        if (start < 0 || (!circular && start + length > capacity) || (circular && start >= capacity))
            invalid_argument(ctx, "write index " + std::to_string(start) + " of batch row " + std::to_string(b) +
                                      " puts " + std::to_string(length) + " rows outside the cache's " +
                                      std::to_string(capacity));
    }
    if (out.raw_data() != past.raw_data()) std::memcpy(out.raw_data(), past.raw_data(), past.nbytes());
    int64_t prefixes = 1, inner = 1;
    for (size_t d = 0; d < axis; ++d) prefixes *= past.shape()[d];
    for (size_t d = axis + 1; d < past.rank(); ++d) inner *= past.shape()[d];
    const int64_t per_batch = prefixes / batch;
    const size_t row_bytes = static_cast<size_t>(inner) * dtype_size(past.dtype());
    const auto* src = static_cast<const char*>(update.raw_data());
    auto* dst = static_cast<char*>(out.raw_data());
    for (int64_t p = 0; p < prefixes; ++p) {
        const int64_t start = starts[static_cast<size_t>(p / per_batch)];
        for (int64_t i = 0; i < length; ++i) {
            const int64_t row = circular ? (start + i) % capacity : start + i;
            std::memcpy(dst + static_cast<size_t>(p * capacity + row) * row_bytes,
                        src + static_cast<size_t>(p * length + i) * row_bytes, row_bytes);
        }
    }
}

}  // namespace

void register_indexing_gather_scatter(KernelRegistry& r) {
    for (DType t : kAllDTypes) {
        r.add("GatherElements", t, gather_elements_kernel);
        r.add("GatherND", t, gather_nd_kernel);
        r.add("ScatterElements", t, scatter_elements_kernel);
        r.add("Scatter", t, scatter_elements_kernel);
        r.add("ScatterND", t, scatter_nd_kernel);
        r.add("TensorScatter", t, tensor_scatter_kernel);
    }
}

}  // namespace infer::cpu
