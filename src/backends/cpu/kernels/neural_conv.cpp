// Conv over [N, C, spatial...] with any number of spatial axes: im2col into the workspace, then
// one product per image and group (packed_float_gemm.hpp's f32 kernel, the bias added per tile;
// or sgemm, then the bias per output channel). Depthwise 1-D and 2-D convolutions, where that
// GEMM would have a single row, are summed directly instead (depthwise_conv.cpp).
#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/conv_columns.hpp"
#include "backends/cpu/kernels/convolution_taps.hpp"
#include "backends/cpu/kernels/depthwise_conv.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace infer::cpu {

namespace {

// One product per image and group: weights [M/group, C/group * taps] x columns. On our own f32
// kernel (bias, residual and ReLU per tile) a 2-D convolution reads its columns from the
// image's phases (convolution_taps.hpp), a group at a time; others unfold their columns
// and multiply a chunk of output positions at a time, the chunks spread over the threads, or
// read X in place for a 1x1 kernel; sgemm takes the whole column matrix. Returns whether the tiles were finished (bias,
// residual, ReLU) already.
bool grouped_gemm(const KernelContext& ctx, const float* x, const float* w, const ChannelBiasWriter& finish,
                  const ConvGeometry& g, int64_t images, int64_t out_channels, int64_t group, float* y) {
    const int64_t group_out = out_channels / group, rows = g.channels * g.taps;
    const bool direct = reads_input_directly(g);
    const FloatGemmKernel kernel = f32_gemm_kernel();
    const bool blas = kernel == FloatGemmKernel::blas;
    if (!direct && convolution_by_taps_takes(g, kernel)) {
        void* scratch = ctx.workspace(convolution_by_taps_bytes(g));
        if (group == 1) {
            convolution_by_taps(x, w, finish, g, images, out_channels, kernel, scratch);
            return true;
        }
        for (int64_t n = 0; n < images; ++n)  // each group a convolution of its own channels
            for (int64_t k = 0; k < group; ++k) {
                const int64_t plane = (n * out_channels + k * group_out) * g.positions;
                ChannelBiasWriter writer = finish;
                writer.y = static_cast<float*>(finish.y) + plane;
                if (finish.bias) writer.bias = finish.bias + k * group_out;
                if (finish.residual) writer.residual = static_cast<const float*>(finish.residual) + plane;
                convolution_by_taps(x + (n * group + k) * g.channels * g.input_size, w + k * group_out * rows, writer, g, 1,
                                    group_out, kernel, scratch);
            }
        return true;
    }
    auto* col = direct || !blas ? nullptr : static_cast<float*>(ctx.workspace(sizeof(float) * rows * g.positions));
    const int64_t chunk = column_chunk(g, sizeof(float)), chunks = (g.positions + chunk - 1) / chunk;
    for (int64_t n = 0; n < images; ++n) {
        for (int64_t k = 0; k < group; ++k) {
            const float* in = x + (n * group + k) * g.channels * g.input_size;
            const float* weights = w + k * group_out * rows;
            const int64_t plane = (n * out_channels + k * group_out) * g.positions;
            if (blas) {
                if (!direct) im2col(in, g, 0, g.positions, col);
                sgemm(false, false, group_out, g.positions, rows, 1.0f, weights, rows, direct ? in : col, g.positions,
                      0.0f, y + plane, g.positions);
                continue;
            }
            // The tiles of positions [p0, p1) from columns `b` (rows `ldb` apart).
            const auto multiply = [&](const float* b, int64_t ldb, int64_t p0, int64_t p1) {
                ChannelBiasWriter writer = finish;
                writer.y = y + plane + p0;
                if (finish.bias) writer.bias = finish.bias + k * group_out;
                if (finish.residual) writer.residual = static_cast<const float*>(finish.residual) + plane + p0;
                gemm_packed_float(packed_float_layout(kernel, rows, p1 - p0, ldb), b, weights, rows, group_out,
                                  &ChannelBiasWriter::tile, &writer);
            };
            if (direct) {
                multiply(in, g.positions, 0, g.positions);
                continue;
            }
            parallel_for(chunks, 1, [&](int64_t first, int64_t last) {
                thread_local std::vector<float> columns;  // one chunk: bounded by kColumnChunkBytes
                columns.resize(static_cast<size_t>(rows * chunk));
                for (int64_t c = first; c < last; ++c) {
                    const int64_t p0 = c * chunk, p1 = std::min(g.positions, p0 + chunk);
                    im2col(in, g, p0, p1, columns.data());
                    multiply(columns.data(), p1 - p0, p0, p1);
                }
            });
        }
    }
    return !blas;
}

// Conv, and FusedConv: act(Conv(X, W, B) + Z).
void conv_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    Tensor& y = ctx.output(0);
    require_same_dtype(ctx, 0, 1);
    const int64_t group = ctx.attrs().get_int("group", 1);
    const ConvGeometry g = conv_geometry(ctx, x.shape(), w.shape(), group);
    const int64_t images = x.shape()[0], out_channels = w.shape()[0];
    float* py = y.data<float>();
    if (y.numel() == 0) return;
    const float* bias = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
    const float* residual = ctx.has_input(3) ? ctx.input(3).data<float>() : nullptr;
    const ConvActivation activation = ConvActivation::of(ctx.attrs());
    bool finished = false;
    if (g.channels == 0)
        std::memset(py, 0, y.nbytes());  // no taps: sgemm would leave the output unwritten
    else if (g.channels == 1 && group > 1 && g.axes.size() == 2)
        finished = depthwise(x.data<float>(), w.data<float>(), g, images, out_channels, out_channels / group, bias,
                             residual, activation, py);
    else
        finished = grouped_gemm(ctx, x.data<float>(), w.data<float>(), {py, false, g.positions, bias, residual, activation}, g,
                                images, out_channels, group, py);
    if (!finished) finish_conv_planes(py, bias, residual, activation, images * out_channels, out_channels, g.positions);
}

}  // namespace

void register_conv_kernels(KernelRegistry& r) {
    for (const char* op : {"Conv", "FusedConv"}) {
        add_floating(r, op, conv_kernel);
        register_bf16_conv_kernel(r, op);
    }
}

}  // namespace infer::cpu
