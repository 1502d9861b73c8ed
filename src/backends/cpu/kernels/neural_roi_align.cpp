// RoiAlign: for each region of interest, a fixed output_height × output_width grid of bins over
// the region of its image's feature map, each bin the average (or maximum) of bilinearly
// interpolated samples, sampling_ratio per side (or as many as the bin is wide, rounded up).
// Regions are x1, y1, x2, y2 in input coordinates times spatial_scale; half_pixel (opset 16's
// default) shifts them by half a pixel, output_half_pixel (opset 10's behaviour) does not and
// makes every region at least one pixel wide. Max mode takes, per sample, the largest of the four
// weighted corners, as ONNX's reference and ONNX Runtime do.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <cmath>

namespace infer::cpu {

namespace {

// One sample's four neighbours and their bilinear weights; weights 0 outside the map.
template <class T>
struct Sample {
    int64_t offsets[4] = {0, 0, 0, 0};
    T weights[4] = {0, 0, 0, 0};
};

template <class T>
Sample<T> sample_at(T y, T x, int64_t height, int64_t width) {
    Sample<T> s;
    if (y < T(-1) || y > T(height) || x < T(-1) || x > T(width)) return s;  // outside: contributes 0
    y = std::max(y, T(0));
    x = std::max(x, T(0));
    auto y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x);
    int64_t y_high = y_low + 1, x_high = x_low + 1;
    if (y_low >= height - 1) y_high = y_low = height - 1, y = T(y_low);
    if (x_low >= width - 1) x_high = x_low = width - 1, x = T(x_low);
    const T ly = y - T(y_low), lx = x - T(x_low), hy = T(1) - ly, hx = T(1) - lx;
    s.offsets[0] = y_low * width + x_low;
    s.offsets[1] = y_low * width + x_high;
    s.offsets[2] = y_high * width + x_low;
    s.offsets[3] = y_high * width + x_high;
    s.weights[0] = hy * hx;
    s.weights[1] = hy * lx;
    s.weights[2] = ly * hx;
    s.weights[3] = ly * lx;
    return s;
}

template <class T>
void roi_align_kernel(KernelContext& ctx) {
    const Tensor& input = ctx.input(0);
    const Tensor& rois = ctx.input(1);
    const auto& dims = input.shape().dims();
    const int64_t batches = dims[0], channels = dims[1], height = dims[2], width = dims[3];
    const int64_t regions = rois.shape()[0];
    const int64_t out_h = ctx.attrs().get_int("output_height", 1), out_w = ctx.attrs().get_int("output_width", 1);
    const int64_t ratio = ctx.attrs().get_int("sampling_ratio", 0);
    const T scale = static_cast<T>(ctx.attrs().get_float("spatial_scale", 1.0f));
    const bool max_mode = ctx.attrs().get_string("mode", "avg") == "max";
    const std::string transform = ctx.attrs().get_string("coordinate_transformation_mode", "half_pixel");
    if (transform != "half_pixel" && transform != "output_half_pixel")
        invalid_argument(ctx, "coordinate_transformation_mode must be half_pixel or output_half_pixel, got '" + transform + "'");
    const bool half_pixel = transform == "half_pixel";
    const T* x = input.data<T>();
    const T* boxes = rois.data<T>();
    const std::vector<int64_t> images = read_ints(ctx, 2);
    T* y = ctx.output(0).data<T>();
    for (int64_t r = 0; r < regions; ++r)
        if (images[static_cast<size_t>(r)] < 0 || images[static_cast<size_t>(r)] >= batches)
            invalid_argument(ctx, "batch index " + std::to_string(images[static_cast<size_t>(r)]) + " of region " +
                                      std::to_string(r) + " is outside the batch of " + std::to_string(batches));

    parallel_for(regions * channels, grain_for(out_h * out_w * 16), [&](int64_t begin, int64_t end) {
        for (int64_t rc = begin; rc < end; ++rc) {
            const int64_t r = rc / channels, c = rc % channels;
            const T* box = boxes + r * 4;
            const T offset = half_pixel ? T(0.5) : T(0);
            const T start_w = box[0] * scale - offset, start_h = box[1] * scale - offset;
            T roi_w = box[2] * scale - offset - start_w, roi_h = box[3] * scale - offset - start_h;
            if (!half_pixel) {
                roi_w = std::max(roi_w, T(1));
                roi_h = std::max(roi_h, T(1));
            }
            const T bin_h = roi_h / T(out_h), bin_w = roi_w / T(out_w);
            const int64_t grid_h = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(roi_h / T(out_h)));
            const int64_t grid_w = ratio > 0 ? ratio : static_cast<int64_t>(std::ceil(roi_w / T(out_w)));
            const T count = T(std::max<int64_t>(grid_h * grid_w, 1));
            const T* map = x + (images[static_cast<size_t>(r)] * channels + c) * height * width;
            T* out = y + rc * out_h * out_w;
            for (int64_t ph = 0; ph < out_h; ++ph)
                for (int64_t pw = 0; pw < out_w; ++pw) {
                    T acc = T(0);
                    bool first = true;
                    for (int64_t iy = 0; iy < grid_h; ++iy) {
                        const T sy = start_h + T(ph) * bin_h + (T(iy) + T(0.5)) * bin_h / T(grid_h);
                        for (int64_t ix = 0; ix < grid_w; ++ix) {
                            const T sx = start_w + T(pw) * bin_w + (T(ix) + T(0.5)) * bin_w / T(grid_w);
                            const Sample<T> s = sample_at(sy, sx, height, width);
                            if (max_mode) {
                                for (int k = 0; k < 4; ++k) {
                                    const T v = s.weights[k] * map[s.offsets[k]];
                                    acc = first ? v : std::max(acc, v);
                                    first = false;
                                }
                            } else {
                                for (int k = 0; k < 4; ++k) acc += s.weights[k] * map[s.offsets[k]];
                            }
                        }
                    }
                    out[ph * out_w + pw] = max_mode ? acc : acc / count;
                }
        }
    });
}

}  // namespace

void register_roi_align_kernels(KernelRegistry& r) {
    add_floating(r, "RoiAlign", roi_align_kernel<float>);
    r.add("RoiAlign", DType::f64, roi_align_kernel<double>);
}

}  // namespace infer::cpu
