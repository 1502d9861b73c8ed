#pragma once
// The spatial geometry of Conv and the pools, passed to kernels by value (up to 3 spatial axes),
// and the walk from a flat index to per-axis coordinates.
#include "backends/cuda/fast_divmod.hpp"
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

// The 2-D geometry with 32-bit indices and divisions by multiplication (fast_divmod.hpp), for
// the conv and pool kernels' common case: 64-bit divisions, several per element, cost more
// than the memory traffic they serve.
struct Window2d {
    int in_h, in_w, out_w, kernel_h, kernel_w;
    int stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left, pad_bottom, pad_right;
    int positions, taps;  // out_h · out_w, kernel_h · kernel_w
    FastDivmod by_out_w, by_kernel_w, by_positions, by_taps;

    // Whether `elements` (the flat index range of a launch) and one input plane fit 31 bits.
    static bool fits(const Window& w, int64_t elements) {
        return w.spatial == 2 && elements < (int64_t{1} << 31) && w.in_size < (int64_t{1} << 31);
    }
    explicit Window2d(const Window& w)
        : in_h(static_cast<int>(w.in[0])), in_w(static_cast<int>(w.in[1])), out_w(static_cast<int>(w.out[1])),
          kernel_h(static_cast<int>(w.kernel[0])), kernel_w(static_cast<int>(w.kernel[1])),
          stride_h(static_cast<int>(w.stride[0])), stride_w(static_cast<int>(w.stride[1])),
          dilation_h(static_cast<int>(w.dilation[0])), dilation_w(static_cast<int>(w.dilation[1])),
          pad_top(static_cast<int>(w.pad_begin[0])), pad_left(static_cast<int>(w.pad_begin[1])),
          pad_bottom(static_cast<int>(w.pad_end[0])), pad_right(static_cast<int>(w.pad_end[1])),
          positions(static_cast<int>(w.out_size)), taps(static_cast<int>(w.kernel_size)),
          by_out_w(static_cast<uint32_t>(w.out[1])), by_kernel_w(static_cast<uint32_t>(w.kernel[1])),
          by_positions(static_cast<uint32_t>(w.out_size)), by_taps(static_cast<uint32_t>(w.kernel_size)) {}
};

// Splits a row-major flat index over `dims` (spatial axes) into coordinates.
__device__ __forceinline__ void unflatten(int64_t flat, const int64_t* dims, int spatial,
                                          int64_t* coordinate) {
    for (int d = spatial - 1; d >= 0; --d) {
        coordinate[d] = flat % dims[d];
        flat /= dims[d];
    }
}

}  // namespace infer::cuda
