#include "backends/cpu/kernels/convolution_taps.hpp"

#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <cstring>

namespace infer::cpu {

TapPhases TapPhases::of(const ConvGeometry& g) {
    const SpatialAxis &h = g.axes[0], &v = g.axes[1];
    const auto phase_extent = [](const SpatialAxis& a) {
        const int64_t padded = (a.out - 1) * a.stride + (a.kernel - 1) * a.dilation + 1;  // what the outputs read
        return (padded + a.stride - 1) / a.stride;
    };
    TapPhases p;
    p.height = phase_extent(h);
    p.width = phase_extent(v);
    p.plane = p.height * p.width;
    p.per_channel = h.stride * v.stride;
    // The last output row's dropped columns run on past the last phase by up to (kw-1)·dw / sw.
    p.elements = static_cast<size_t>(g.channels * p.per_channel * p.plane + (v.kernel - 1) * v.dilation / v.stride + 1);
    return p;
}

void TapPhases::offsets(const ConvGeometry& g, int64_t* offsets) const {
    const SpatialAxis &h = g.axes[0], &v = g.axes[1];
    for (int64_t c = 0, k = 0; c < g.channels; ++c)
        for (int64_t i = 0; i < h.kernel; ++i)
            for (int64_t j = 0; j < v.kernel; ++j) {
                const int64_t row = i * h.dilation, column = j * v.dilation;
                const int64_t phase = (row % h.stride) * v.stride + column % v.stride;
                offsets[k++] = (c * per_channel + phase) * plane + row / h.stride * width + column / v.stride;
            }
}

template <class T>
void TapPhases::fill(const T* image, const ConvGeometry& g, T* buffer) const {
    const SpatialAxis &h = g.axes[0], &v = g.axes[1];
    const int64_t filled = g.channels * per_channel * plane;
    std::fill(buffer + filled, buffer + elements, T{0});
    parallel_for(g.channels * per_channel, grain_for(plane), [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p) {
            const int64_t c = p / per_channel, a = p % per_channel / v.stride, b = p % v.stride;
            const T* from = image + c * g.input_size;
            T* to = buffer + p * plane;
            // Phase column q reads input column q·sw + b - pad; those inside the row: [first, last).
            const int64_t first = std::clamp<int64_t>((v.pad_begin - b + v.stride - 1) / v.stride, 0, width);
            const int64_t last = std::clamp<int64_t>((v.in + v.pad_begin - b + v.stride - 1) / v.stride, first, width);
            for (int64_t r = 0; r < height; ++r, to += width) {
                const int64_t in_row = r * h.stride + a - h.pad_begin;
                if (in_row < 0 || in_row >= h.in) {
                    std::fill(to, to + width, T{0});
                    continue;
                }
                const T* row = from + in_row * v.in + b - v.pad_begin;
                std::fill(to, to + first, T{0});
                if (v.stride == 1)
                    std::memcpy(to + first, row + first, static_cast<size_t>(last - first) * sizeof(T));
                else
                    for (int64_t q = first; q < last; ++q) to[q] = row[q * v.stride];
                std::fill(to + last, to + width, T{0});
            }
        }
    });
}

template void TapPhases::fill<float>(const float*, const ConvGeometry&, float*) const;
template void TapPhases::fill<uint16_t>(const uint16_t*, const ConvGeometry&, uint16_t*) const;

void PhaseRowsWriter::tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc,
                           int64_t ld) {
    auto& w = *static_cast<PhaseRowsWriter*>(self);
    for (int64_t n = w.first + col0, end = w.first + col0 + cols; n < end;) {
        const int64_t row = n / w.phase_width, column = n % w.phase_width;
        const int64_t row_end = std::min(end, (row + 1) * w.phase_width);
        if (column < w.out_width) {
            const int64_t count = std::min(row_end, row * w.phase_width + w.out_width) - n;
            ChannelBiasWriter::tile(&w.channels, row0, rows, row * w.out_width + column, count,
                                    acc + (n - w.first - col0), ld);
        }
        n = row_end;
    }
}

bool convolution_by_taps_takes(const ConvGeometry& g, FloatGemmKernel kernel) {
    if (g.axes.size() != 2 || (kernel != FloatGemmKernel::avx512 && kernel != FloatGemmKernel::avx2)) return false;
    return g.axes[0].out > 0 && g.axes[1].out > 0;
}

size_t convolution_by_taps_bytes(const ConvGeometry& g) {
    return TapPhases::of(g).elements * sizeof(float) + static_cast<size_t>(g.channels * g.taps) * sizeof(int64_t);
}

void convolution_by_taps(const float* x, const float* w, const ChannelBiasWriter& finish, const ConvGeometry& g,
                         int64_t images, int64_t out_channels, FloatGemmKernel kernel, void* scratch) {
    const TapPhases phases = TapPhases::of(g);
    auto* offsets = static_cast<int64_t*>(scratch);  // first: the 8-byte values keep their alignment
    auto* buffer = reinterpret_cast<float*>(offsets + g.channels * g.taps);
    phases.offsets(g, offsets);
    PackedFloatLayout layout = packed_float_layout(kernel, g.channels * g.taps, phases.positions(g));
    layout.row_offsets = offsets;
    for (int64_t n = 0; n < images; ++n) {
        phases.fill(x + n * g.channels * g.input_size, g, buffer);
        PhaseRowsWriter writer{finish, phases.width, g.axes[1].out};
        const int64_t image_planes = n * out_channels * g.positions;
        writer.channels.y = static_cast<float*>(finish.y) + image_planes;
        if (finish.residual) writer.channels.residual = static_cast<const float*>(finish.residual) + image_planes;
        gemm_packed_float(layout, buffer, w, g.channels * g.taps, out_channels, &PhaseRowsWriter::tile, &writer);
    }
}

}  // namespace infer::cpu
