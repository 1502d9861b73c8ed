#pragma once
// Small helpers every CPU kernel uses: error messages that name the node, and reading the
// integer tensors that carry shapes, axes and indices.
#include <infer/backend.hpp>
#include <infer/error.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace infer::cpu {

inline std::string node_label(const KernelContext& ctx) {
    return "node '" + ctx.node_name() + "' (" + ctx.op() + ")";
}

[[noreturn]] inline void unsupported(const KernelContext& ctx, const std::string& what) {
    throw Unsupported(node_label(ctx) + " on cpu: " + what);
}

[[noreturn]] inline void invalid_argument(const KernelContext& ctx, const std::string& what) {
    throw InvalidArgument(node_label(ctx) + ": " + what);
}

// The values of an i64 or i32 tensor, such as Reshape's shape or Slice's starts.
inline std::vector<int64_t> read_ints(const KernelContext& ctx, size_t input) {
    const Tensor& t = ctx.input(input);
    std::vector<int64_t> values(static_cast<size_t>(t.numel()));
    if (t.dtype() == DType::i64) {
        const int64_t* p = t.data<int64_t>();
        values.assign(p, p + values.size());
    } else if (t.dtype() == DType::i32) {
        const int32_t* p = t.data<int32_t>();
        values.assign(p, p + values.size());
    } else {
        invalid_argument(ctx, "input " + std::to_string(input) + " must be i64 or i32, got " +
                                  std::string(dtype_name(t.dtype())));
    }
    return values;
}

// Binary ops take both operands in one dtype; the core keys the kernel by the first.
inline void require_same_dtype(const KernelContext& ctx, size_t a, size_t b) {
    if (ctx.input(a).dtype() != ctx.input(b).dtype())
        invalid_argument(ctx, "inputs " + std::to_string(a) + " and " + std::to_string(b) +
                                  " differ in dtype (" +
                                  std::string(dtype_name(ctx.input(a).dtype())) + " vs " +
                                  std::string(dtype_name(ctx.input(b).dtype())) + ")");
}

// Product of dims[begin, end).
inline int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
    int64_t p = 1;
    for (size_t i = begin; i < end; ++i) p *= dims[i];
    return p;
}

// [N, spatial..., C] as [N, C, spatial...]: the shape a channel-last tensor has read channel-first
// (the channel-last kernels reuse the channel-first window geometry).
inline Shape channels_first(const Shape& channels_last) {
    std::vector<int64_t> dims{channels_last[0], channels_last[channels_last.rank() - 1]};
    dims.insert(dims.end(), channels_last.dims().begin() + 1, channels_last.dims().end() - 1);
    return Shape(dims);
}

}  // namespace infer::cpu
