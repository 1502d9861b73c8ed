#pragma once
// The spatial geometry of Conv and the pools, passed to kernels by value (up to 3 spatial axes),
// and the walk from a flat index to per-axis coordinates.
#include "backends/cuda/kernel_support.hpp"

#include "core/ops/shapes_neural.hpp"

#include <cstdint>
#include <vector>

namespace infer::cuda {

inline constexpr int kMaxSpatial = 3;

struct Window {
    int spatial = 0;
    int64_t in[kMaxSpatial] = {}, out[kMaxSpatial] = {}, kernel[kMaxSpatial] = {};
    int64_t stride[kMaxSpatial] = {}, dilation[kMaxSpatial] = {}, pad_begin[kMaxSpatial] = {};
    int64_t pad_end[kMaxSpatial] = {};
    int64_t in_size = 1, out_size = 1, kernel_size = 1;  // products over the spatial axes
};

// The geometry that `attrs` give over spatial input axes `in`; the kernel shape comes from the
// weights for Conv and from kernel_shape for the pools.
inline Window window_from(const Attributes& attrs, const std::vector<int64_t>& in,
                          const std::vector<int64_t>& kernel_from_weights) {
    Window w;
    w.spatial = static_cast<int>(in.size());
    const detail::WindowParams params = detail::read_window_params(attrs, in.size(), kernel_from_weights);
    const std::vector<detail::WindowGeometry> geometry = detail::window_geometry(params, in);
    for (int d = 0; d < w.spatial; ++d) {
        const auto s = static_cast<size_t>(d);
        w.in[d] = in[s];
        w.out[d] = geometry[s].out;
        w.kernel[d] = params.kernel[s];
        w.stride[d] = params.strides[s];
        w.dilation[d] = params.dilations[s];
        w.pad_begin[d] = geometry[s].pad_begin;
        w.pad_end[d] = geometry[s].pad_end;
        w.in_size *= w.in[d];
        w.out_size *= w.out[d];
        w.kernel_size *= w.kernel[d];
    }
    return w;
}

// The same for a node's [N, C, spatial...] input `x_shape`, refusing other ranks.
inline Window make_window(const Launch& l, const Shape& x_shape,
                          const std::vector<int64_t>& kernel_from_weights) {
    if (x_shape.rank() < 3 || x_shape.rank() > 2 + kMaxSpatial)
        l.unsupported("input " + x_shape.to_string() + ": 1 to 3 spatial axes are supported");
    return window_from(l.ctx.attrs(), std::vector<int64_t>(x_shape.dims().begin() + 2, x_shape.dims().end()),
                       kernel_from_weights);
}

// Splits a row-major flat index over `dims` (spatial axes) into coordinates.
__device__ __forceinline__ void unflatten(int64_t flat, const int64_t* dims, int spatial,
                                          int64_t* coordinate) {
    for (int d = spatial - 1; d >= 0; --d) {
        coordinate[d] = flat % dims[d];
        flat /= dims[d];
    }
}

}  // namespace infer::cuda
