// ConvTranspose over [N, C, spatial...] with weights [C, M/group, kernel...]: per image and
// group one sgemm forms every (output channel, tap) x input position product, and col2im adds
// each into the output position it lands on (stride, dilation and padding applied there).
#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "core/ops/shapes_neural.hpp"


#include <algorithm>
#include <cstring>

namespace infer::cpu {

namespace {

using detail::TransposedAxis;

struct Sizes {
    int64_t taps = 1, in = 1, out = 1;  // products over the spatial axes
};

// Adds col [channels * taps, in positions] into y [channels, out positions]. Each task owns
// whole output channels, so no two threads add into one element.
void col2im(const float* col, const std::vector<TransposedAxis>& axes, const Sizes& z,
            int64_t channels, float* y) {
    const size_t rank = axes.size();
    parallel_for(channels, grain_for(z.taps * z.in), [&](int64_t begin, int64_t end) {
        std::vector<int64_t> tap(rank), at(rank);
        for (int64_t m = begin; m < end; ++m) {
            float* plane = y + m * z.out;
            for (int64_t t = 0; t < z.taps; ++t) {
                for (size_t d = rank, rest = static_cast<size_t>(t); d-- > 0;) {
                    tap[d] = static_cast<int64_t>(rest) % axes[d].kernel;
                    rest /= static_cast<size_t>(axes[d].kernel);
                }
                const float* row = col + (m * z.taps + t) * z.in;
                std::fill(at.begin(), at.end(), 0);
                for (int64_t p = 0; p < z.in; ++p) {
                    int64_t offset = 0;
                    bool inside = true;
                    for (size_t d = 0; d < rank; ++d) {
                        const TransposedAxis& a = axes[d];
                        const int64_t o = at[d] * a.stride + tap[d] * a.dilation - a.pad_begin;
                        inside = inside && o >= 0 && o < a.out;
                        offset = offset * a.out + o;
                    }
                    if (inside) plane[offset] += row[p];
                    for (size_t d = rank; d-- > 0;) {
                        if (++at[d] < axes[d].in) break;
                        at[d] = 0;
                    }
                }
            }
        }
    });
}

void conv_transpose_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    Tensor& y = ctx.output(0);
    require_same_dtype(ctx, 0, 1);
    const auto& xd = x.shape().dims();
    const auto& wd = w.shape().dims();
    const std::vector<TransposedAxis> axes = detail::conv_transpose_geometry(
        ctx.attrs(), {xd.begin() + 2, xd.end()}, {wd.begin() + 2, wd.end()});
    const int64_t group = ctx.attrs().get_int("group", 1);
    const int64_t images = xd[0], group_in = xd[1] / group, group_out = wd[1];
    const int64_t out_channels = group_out * group;
    Sizes z;
    for (const TransposedAxis& a : axes) {
        z.taps *= a.kernel;
        z.in *= a.in;
        z.out *= a.out;
    }
    float* py = y.data<float>();
    if (y.numel() == 0) return;
    std::memset(py, 0, y.nbytes());
    const int64_t rows = group_out * z.taps;
    auto* col = static_cast<float*>(ctx.workspace(sizeof(float) * rows * z.in));
    for (int64_t n = 0; n < images && group_in > 0; ++n) {
        for (int64_t g = 0; g < group; ++g) {
            // col [group_out * taps, in] = W_g^T [group_out * taps, group_in] x X_g [group_in, in]
            sgemm(true, false, rows, z.in, group_in, 1.0f, w.data<float>() + g * group_in * rows, rows,
                  x.data<float>() + (n * xd[1] + g * group_in) * z.in, z.in, 0.0f, col, z.in);
            col2im(col, axes, z, group_out, py + (n * out_channels + g * group_out) * z.out);
        }
    }
    if (!ctx.has_input(2)) return;
    const float* bias = ctx.input(2).data<float>();
    parallel_for(images * out_channels, grain_for(z.out), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            float* plane = py + p * z.out;
            const float b = bias[p % out_channels];
            for (int64_t i = 0; i < z.out; ++i) plane[i] += b;
        }
    });
}

}  // namespace

void register_conv_transpose_kernels(KernelRegistry& r) {
    add_floating(r, "ConvTranspose", conv_transpose_kernel);
}

}  // namespace infer::cpu
