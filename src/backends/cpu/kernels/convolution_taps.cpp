#include "backends/cpu/kernels/convolution_taps.hpp"

#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <cstring>

namespace infer::cpu {

namespace {

// The product's tiles come over positions of the phase width; each output row's first
// `out_width` of them go to Y through the usual channel writer, the rest are dropped.
struct PhaseRowsWriter {
    ChannelBiasWriter channels;
    int64_t phase_width, out_width;
    static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc, int64_t ld) {
        auto& w = *static_cast<PhaseRowsWriter*>(self);
        for (int64_t n = col0, end = col0 + cols; n < end;) {
            const int64_t row = n / w.phase_width, column = n % w.phase_width;
            const int64_t row_end = std::min(end, (row + 1) * w.phase_width);
            if (column < w.out_width) {
                const int64_t count = std::min(row_end, row * w.phase_width + w.out_width) - n;
                ChannelBiasWriter::tile(&w.channels, row0, rows, row * w.out_width + column, count, acc + (n - col0), ld);
            }
            n = row_end;
        }
    }
};

// The padded image, split by the strides into phases: phase (a, b) of a channel holds padded
// rows a, a + sh, ... and columns b, b + sw, ... (with stride 1, the padded plane itself). Input
// value (oh·sh + i·dh, ow·sw + j·dw) under tap (i, j) is then element (oh + i·dh / sh,
// ow + j·dw / sw) of phase (i·dh mod sh, j·dw mod sw): for every tap, the output positions read
// one run of the phase laid out row after row, whatever the stride and dilation.
struct Phases {
    int64_t height, width, plane;  // of one phase
    int64_t per_channel;           // sh · sw phases
    size_t elements;               // every phase of every channel, and what the last dropped columns read past them
};

Phases phases_of(const ConvGeometry& g) {
    const SpatialAxis &h = g.axes[0], &v = g.axes[1];
    const auto phase_extent = [](const SpatialAxis& a) {
        const int64_t padded = (a.out - 1) * a.stride + (a.kernel - 1) * a.dilation + 1;  // what the outputs read
        return (padded + a.stride - 1) / a.stride;
    };
    Phases p{phase_extent(h), phase_extent(v), 0, h.stride * v.stride, 0};
    p.plane = p.height * p.width;
    // The last output row's dropped columns run on past the last phase by up to (kw-1)·dw / sw.
    p.elements = static_cast<size_t>(g.channels * p.per_channel * p.plane + (v.kernel - 1) * v.dilation / v.stride + 1);
    return p;
}

}  // namespace

bool convolution_by_taps_takes(const ConvGeometry& g, FloatGemmKernel kernel) {
    if (g.axes.size() != 2 || (kernel != FloatGemmKernel::avx512 && kernel != FloatGemmKernel::avx2)) return false;
    return g.axes[0].out > 0 && g.axes[1].out > 0;
}

size_t convolution_by_taps_bytes(const ConvGeometry& g) {
    return phases_of(g).elements * sizeof(float) + static_cast<size_t>(g.channels * g.taps) * sizeof(int64_t);
}

void convolution_by_taps(const float* x, const float* w, const ChannelBiasWriter& finish, const ConvGeometry& g,
                         int64_t images, int64_t out_channels, FloatGemmKernel kernel, void* scratch) {
    const SpatialAxis &h = g.axes[0], &v = g.axes[1];
    const int64_t channels = g.channels;
    const Phases ph = phases_of(g);
    auto* offsets = static_cast<int64_t*>(scratch);  // first: the 8-byte values keep their alignment
    float* buffer = reinterpret_cast<float*>(offsets + channels * g.taps);
    for (int64_t c = 0, k = 0; c < channels; ++c)
        for (int64_t i = 0; i < h.kernel; ++i)
            for (int64_t j = 0; j < v.kernel; ++j) {
                const int64_t row = i * h.dilation, column = j * v.dilation;
                const int64_t phase = (row % h.stride) * v.stride + column % v.stride;
                offsets[k++] = (c * ph.per_channel + phase) * ph.plane + row / h.stride * ph.width + column / v.stride;
            }
    const int64_t filled = channels * ph.per_channel * ph.plane;
    std::fill(buffer + filled, buffer + ph.elements, 0.0f);

    PackedFloatLayout layout = packed_float_layout(kernel, channels * g.taps, h.out * ph.width);
    layout.row_offsets = offsets;
    for (int64_t n = 0; n < images; ++n) {
        const float* image = x + n * channels * g.input_size;
        parallel_for(channels * ph.per_channel, grain_for(ph.plane), [&](int64_t begin, int64_t end) {
            for (int64_t p = begin; p < end; ++p) {
                const int64_t c = p / ph.per_channel, a = p % ph.per_channel / v.stride, b = p % v.stride;
                const float* from = image + c * g.input_size;
                float* to = buffer + p * ph.plane;
                // Phase column q reads input column q·sw + b - pad; those inside the row:
                // [first, last).
                const int64_t first = std::clamp<int64_t>((v.pad_begin - b + v.stride - 1) / v.stride, 0, ph.width);
                const int64_t last =
                    std::clamp<int64_t>((v.in + v.pad_begin - b + v.stride - 1) / v.stride, first, ph.width);
                for (int64_t r = 0; r < ph.height; ++r, to += ph.width) {
                    const int64_t in_row = r * h.stride + a - h.pad_begin;
                    if (in_row < 0 || in_row >= h.in) {
                        std::fill(to, to + ph.width, 0.0f);
                        continue;
                    }
                    const float* row = from + in_row * v.in + b - v.pad_begin;
                    std::fill(to, to + first, 0.0f);
                    if (v.stride == 1)
                        std::memcpy(to + first, row + first, static_cast<size_t>(last - first) * sizeof(float));
                    else
                        for (int64_t q = first; q < last; ++q) to[q] = row[q * v.stride];
                    std::fill(to + last, to + ph.width, 0.0f);
                }
            }
        });
        PhaseRowsWriter writer{finish, ph.width, v.out};
        const int64_t image_planes = n * out_channels * g.positions;
        writer.channels.y = static_cast<float*>(finish.y) + image_planes;
        if (finish.residual) writer.channels.residual = static_cast<const float*>(finish.residual) + image_planes;
        gemm_packed_float(layout, buffer, w, channels * g.taps, out_channels, &PhaseRowsWriter::tile, &writer);
    }
}

}  // namespace infer::cpu
