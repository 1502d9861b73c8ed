// Concat, Split and Gather: copies of blocks chosen along one axis, for every dtype.
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/indexing_kernels.hpp"

#include <cstring>

namespace infer::cpu {

namespace {

// A tensor seen as [outer, axis, inner] around one axis.
struct AxisView {
    int64_t outer, extent, inner;
};
AxisView around_axis(const Shape& shape, size_t axis) {
    const std::vector<int64_t>& d = shape.dims();
    return {product(d, 0, axis), d[axis], product(d, axis + 1, d.size())};
}

void concat_kernel(KernelContext& ctx) {
    Tensor& out = ctx.output(0);
    const size_t axis = out.shape().normalize_axis(ctx.attrs().get_int("axis"));
    const size_t element = dtype_size(out.dtype());
    const AxisView o = around_axis(out.shape(), axis);
    const size_t out_row = static_cast<size_t>(o.extent * o.inner) * element;
    auto* dst = static_cast<char*>(out.raw_data());
    size_t column = 0;  // byte offset of the current input within an output row
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
        const Tensor& in = ctx.input(i);
        const size_t row = static_cast<size_t>(in.shape()[axis] * o.inner) * element;
        const auto* src = static_cast<const char*>(in.raw_data());
        parallel_for(o.outer, grain_for(static_cast<int64_t>(row)),
                     [&](int64_t begin, int64_t end) {
                         for (int64_t r = begin; r < end; ++r)
                             std::memcpy(dst + r * out_row + column, src + r * row, row);
                     });
        column += row;
    }
}

void split_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const size_t axis = in.shape().normalize_axis(ctx.attrs().get_int("axis", 0));
    const size_t element = dtype_size(in.dtype());
    const AxisView v = around_axis(in.shape(), axis);
    const size_t in_row = static_cast<size_t>(v.extent * v.inner) * element;
    const auto* src = static_cast<const char*>(in.raw_data());
    size_t column = 0;
    for (size_t i = 0; i < ctx.num_outputs(); ++i) {
        Tensor& out = ctx.output(i);
        const size_t row = static_cast<size_t>(out.shape()[axis] * v.inner) * element;
        auto* dst = static_cast<char*>(out.raw_data());
        parallel_for(v.outer, grain_for(static_cast<int64_t>(row)),
                     [&](int64_t begin, int64_t end) {
                         for (int64_t r = begin; r < end; ++r)
                             std::memcpy(dst + r * row, src + r * in_row + column, row);
                     });
        column += row;
    }
}

template <class Word>
void gather_words(const Word* data, const AxisView& v, const int64_t* indices, int64_t count,
                  Word* out) {
    parallel_for(v.outer * count, grain_for(v.inner), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const int64_t o = p / count, j = p % count;
            const Word* src = data + (o * v.extent + indices[j]) * v.inner;
            Word* dst = out + p * v.inner;
            for (int64_t k = 0; k < v.inner; ++k) dst[k] = src[k];
        }
    });
}

void gather_kernel(KernelContext& ctx) {
    const Tensor& data = ctx.input(0);
    Tensor& out = ctx.output(0);
    const size_t axis = data.shape().normalize_axis(ctx.attrs().get_int("axis", 0));
    const AxisView v = around_axis(data.shape(), axis);
    std::vector<int64_t> indices = read_ints(ctx, 1);
    for (int64_t& index : indices) {
        if (index < -v.extent || index >= v.extent)
            invalid_argument(ctx, "index " + std::to_string(index) + " is out of range for axis " +
                                      std::to_string(axis) + " of size " +
                                      std::to_string(v.extent));
        if (index < 0) index += v.extent;
    }
    if (out.numel() == 0) return;
    const int64_t count = static_cast<int64_t>(indices.size());
    const void* src = data.raw_data();
    void* dst = out.raw_data();
    const auto gather = [&](auto word) {
        using Word = decltype(word);
        gather_words(static_cast<const Word*>(src), v, indices.data(), count,
                     static_cast<Word*>(dst));
    };
    switch (dtype_size(data.dtype())) {
        case 1:
            return gather(uint8_t{});
        case 2:
            return gather(uint16_t{});
        case 4:
            return gather(uint32_t{});
        case 8:
            return gather(uint64_t{});
    }
    unsupported(ctx, "elements of " + std::to_string(dtype_size(data.dtype())) + " bytes");
}

}  // namespace

void register_indexing_concat_gather(KernelRegistry& r) {
    for (DType t : kAllDTypes) {
        r.add("Concat", t, concat_kernel);
        r.add("Split", t, split_kernel);
        r.add("Gather", t, gather_kernel);
    }
}

}  // namespace infer::cpu
