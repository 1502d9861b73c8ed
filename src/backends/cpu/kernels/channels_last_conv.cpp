// ChannelsLastConv: FusedConv over channel-last X, Z and Y ([N, H, W, C]; W as ONNX has it,
// [M, C/group, KH, KW]), made by passes/channels_last.cpp for the convolutions of an f32 CNN.
// Output positions are the product's rows and output channels its columns: Y [positions, M] =
// patches [positions, taps·C] · Wᵀ [taps·C, M]. In planes the rows were output channels and the
// columns positions, so a late ResNet stage (7x7 = 49 positions) filled its 64-column tiles to
// 77%; here the columns are 64 to 2048 channels, whole tiles. The patches are never copied: a
// patch is its taps' pixels, each C contiguous values of X (or of a zero-bordered copy when the
// layer pads), so the product reads A's row i at a_rows[i] and its K value k a_offsets[k]
// further (packed_float_gemm.hpp). Wᵀ is packed once per session. Each finished tile gets
// bias, residual and activation in registers (avx512) or while in cache. 3x3 stride-1 layers
// over enough positions go through Winograd's F(2x2, 3x3) (winograd_conv.hpp). Depthwise layers
// (one channel per group) sum their taps per pixel, channels in vectors.
#include "backends/cpu/kernels/channels_last_conv.hpp"

#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/winograd_conv.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace infer::cpu {

namespace {

// out[c] = act(acc[c] + bias[c] + z[c]) for c < cols (bias, z null when absent): the blas
// path's rows (INFER_FLOAT_GEMM=blas, or a CPU without AVX2). Our kernels' tiles write Y from
// their registers (ChannelOutput).
void finish_channels(const float* acc, const float* bias, const float* z, const ConvActivation& a, float* out, int64_t cols) {
    for (int64_t c = 0; c < cols; ++c) out[c] = a(acc[c] + (bias ? bias[c] : 0.0f) + (z ? z[c] : 0.0f));
}

// A product's tiles into Y [positions, M]: one group's columns start at `column`.
struct ChannelsLastWriter {
    float* y;
    int64_t ld;               // M
    int64_t column;           // the group's first output channel
    const float* bias;        // [M] or null
    const float* residual;    // Z, laid out as Y, or null
    ConvActivation activation;
    static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc, int64_t ld) {
        const auto& w = *static_cast<const ChannelsLastWriter*>(self);
        const int64_t first = w.column + col0;
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t at = (row0 + r) * w.ld + first;
            finish_channels(acc + r * ld, w.bias ? w.bias + first : nullptr, w.residual ? w.residual + at : nullptr,
                            w.activation, w.y + at, cols);
        }
    }
};

ChannelGeometry geometry(const KernelContext& ctx, const Shape& x, const Shape& w) {
    if (x.rank() != 4) unsupported(ctx, "channel-last convolutions are 2-D ([N, H, W, C]); got " + x.to_string());
    const int64_t group = ctx.attrs().get_int("group", 1);
    const ConvGeometry g = conv_geometry(ctx, channels_first(x), w, group);
    ChannelGeometry t{x[0], x[3], group, g.channels, w[0], w[0] / group, g.axes[0], g.axes[1], 0, 0, false};
    // The padding after the last window, as far as the windows reach (ONNX's pads may overhang).
    const auto padded = [](const SpatialAxis& a) {
        return std::max(a.in + a.pad_begin, (a.out - 1) * a.stride + (a.kernel - 1) * a.dilation + 1);
    };
    t.pads = t.rows.pad_begin > 0 || t.columns.pad_begin > 0 || padded(t.rows) > t.rows.in + t.rows.pad_begin ||
             padded(t.columns) > t.columns.in + t.columns.pad_begin;
    t.padded_h = t.pads ? padded(t.rows) : t.rows.in;
    t.padded_w = t.pads ? padded(t.columns) : t.columns.in;
    return t;
}

// Wᵀ of one group as the product's B [taps·Cg, Mg]: packed in panels for our kernels, as it is
// (rows Mg apart) for sgemm.
struct TransposedWeight {
    PackedFloatLayout layout;
    int64_t group_elements;  // floats per group

    TransposedWeight(FloatGemmKernel kernel, const ChannelGeometry& g)
        : layout(packed_f32_layout(kernel, g.taps() * g.group_channels, g.group_out)),
          group_elements(layout.packed ? packed_elements(layout) : layout.k * layout.n) {}

    // B_g[(tap·Cg + c), o] = W[g·Mg + o, c, tap], the groups one after another.
    void pack(const float* w, const ChannelGeometry& g, float* out) const {
        const int64_t taps = g.taps();
        std::fill_n(out, group_elements * g.group, 0.0f);
        for (int64_t grp = 0; grp < g.group; ++grp) {
            float* to = out + grp * group_elements;
            for (int64_t o = 0; o < g.group_out; ++o)
                for (int64_t c = 0; c < g.group_channels; ++c)
                    for (int64_t t = 0; t < taps; ++t) {
                        const int64_t k = t * g.group_channels + c;
                        *(layout.packed ? f32_panel_element(layout, to, k, o) : to + k * g.group_out + o) =
                            w[((grp * g.group_out + o) * g.group_channels + c) * taps + t];
                    }
        }
    }
};

// Depthwise weights [taps, C]: each tap's C values together, as a pixel's channels are.
void pack_depthwise_weight(const float* w, const ChannelGeometry& g, float* out) {
    const int64_t taps = g.taps();
    for (int64_t c = 0; c < g.channels; ++c)
        for (int64_t t = 0; t < taps; ++t) out[t * g.channels + c] = w[c * taps + t];
}

// Every output position's first input pixel (in elements of the image read) and every K
// value's offset from there: tap (kh, kw), channel c of the group.
void patch_offsets(const ChannelGeometry& g, int64_t* rows, int64_t* offsets) {
    int64_t i = 0;
    for (int64_t n = 0; n < g.images; ++n)
        for (int64_t oh = 0; oh < g.rows.out; ++oh)
            for (int64_t ow = 0; ow < g.columns.out; ++ow)
                rows[i++] = ((n * g.padded_h + oh * g.rows.stride) * g.padded_w + ow * g.columns.stride) * g.channels;
    for (int64_t kh = 0, k = 0; kh < g.rows.kernel; ++kh)
        for (int64_t kw = 0; kw < g.columns.kernel; ++kw)
            for (int64_t c = 0; c < g.group_channels; ++c)
                offsets[k++] = (kh * g.rows.dilation * g.padded_w + kw * g.columns.dilation) * g.channels + c;
}

// Depthwise: per line of output pixels and vector of channels, each pixel's taps summed, X
// read where it is (no padded copy: a pixel whose window crosses the border skips the taps
// outside). With a KH x KW kernel known at compile time (3x3, 5x5: MobileNets, EfficientNets)
// the taps' weight vectors stay in registers along the line; then bias, residual, activation.
template <class V, int KH, int KW>
__attribute__((always_inline)) inline void depthwise_lines(const float* x, const float* w, const ChannelGeometry& g,
                                                           const float* bias, const float* z, const ConvActivation& a,
                                                           float* y, int64_t begin, int64_t end) {
    constexpr bool fixed = KH > 0;
    const int64_t kh_count = fixed ? KH : g.rows.kernel, kw_count = fixed ? KW : g.columns.kernel;
    const int64_t channels = g.channels, vectors = channels / kLanes<V> * kLanes<V>;
    const SpatialAxis &ah = g.rows, &aw = g.columns;
    // The output columns whose window lies inside the line: [inner_begin, inner_end).
    const int64_t inner_begin = std::min(aw.out, (aw.pad_begin + aw.stride - 1) / aw.stride);
    const int64_t reach = (kw_count - 1) * aw.dilation;
    const int64_t inner_end = std::max(inner_begin, std::min(aw.out, aw.in - reach + aw.pad_begin > 0
                                                                          ? (aw.in - reach + aw.pad_begin - 1) / aw.stride + 1
                                                                          : 0));
    V held[fixed ? KH * KW : 1];
    for (int64_t line = begin; line < end; ++line) {
        const int64_t n = line / ah.out, oh = line % ah.out, ih0 = oh * ah.stride - ah.pad_begin;
        // The kernel rows inside the image.
        int64_t kh_first = 0, kh_last = kh_count;
        while (kh_first < kh_count && ih0 + kh_first * ah.dilation < 0) ++kh_first;
        while (kh_last > kh_first && ih0 + (kh_last - 1) * ah.dilation >= ah.in) --kh_last;
        const bool all_rows = kh_first == 0 && kh_last == kh_count;
        const float* image = x + n * ah.in * aw.in * channels;
        float* out = y + line * aw.out * channels;
        const float* residual = z ? z + line * aw.out * channels : nullptr;
        // A pixel's sums for channels [c, c + lanes) with the taps' columns [kw_first, kw_last).
        const auto pixel = [&](int64_t ow, int64_t c, int64_t kw_first, int64_t kw_last, float* sums, int64_t lanes) {
            const int64_t iw0 = ow * aw.stride - aw.pad_begin;
            for (int64_t l = 0; l < lanes; ++l) sums[l] = bias ? bias[c + l] : 0.0f;
            for (int64_t kh = kh_first; kh < kh_last; ++kh)
                for (int64_t kw = kw_first; kw < kw_last; ++kw) {
                    const float* px = image + ((ih0 + kh * ah.dilation) * aw.in + iw0 + kw * aw.dilation) * channels + c;
                    const float* pw = w + (kh * kw_count + kw) * channels + c;
                    for (int64_t l = 0; l < lanes; ++l) sums[l] += px[l] * pw[l];
                }
        };
        const auto finish = [&](int64_t ow, int64_t c, const float* sums, int64_t lanes) {
            for (int64_t l = 0; l < lanes; ++l)
                out[ow * channels + c + l] = a(sums[l] + (residual ? residual[ow * channels + c + l] : 0.0f));
        };
        const auto edge = [&](int64_t ow, int64_t c, int64_t lanes) {
            const int64_t iw0 = ow * aw.stride - aw.pad_begin;
            int64_t kw_first = 0, kw_last = kw_count;
            while (kw_first < kw_count && iw0 + kw_first * aw.dilation < 0) ++kw_first;
            while (kw_last > kw_first && iw0 + (kw_last - 1) * aw.dilation >= aw.in) --kw_last;
            float sums[kLanes<V>];
            pixel(ow, c, kw_first, kw_last, sums, lanes);
            finish(ow, c, sums, lanes);
        };
        for (int64_t c = 0; c < vectors; c += kLanes<V>) {
            for (int64_t ow = 0; ow < inner_begin; ++ow) edge(ow, c, kLanes<V>);
            if (fixed && all_rows) {
                for (int i = 0; i < (fixed ? KH * KW : 1); ++i) held[i] = load<V>(w + i * channels + c);
                const V first = bias ? load<V>(bias + c) : V{};
                // Steps in elements, out of the loop: recomputed from the geometry per tap, they
                // cost more than the sums (3x3 over 56x56x144 channels at 22 GFLOP/s on a Zen 3 core).
                const int64_t row_step = ah.dilation * aw.in * channels, tap_step = aw.dilation * channels,
                              pixel_step = aw.stride * channels;
                const float* px = image + (ih0 * aw.in + inner_begin * aw.stride - aw.pad_begin) * channels + c;
                for (int64_t ow = inner_begin; ow < inner_end; ++ow, px += pixel_step) {
                    // A partial sum per kernel row: KH short chains of FMAs rather than one long one.
                    V part[KH];
#pragma GCC unroll 5
                    for (int kh = 0; kh < KH; ++kh) {
                        const float* taps = px + kh * row_step;
                        V sum = kh == 0 ? first : V{};
#pragma GCC unroll 5
                        for (int kw = 0; kw < KW; ++kw) sum += load<V>(taps + kw * tap_step) * held[kh * KW + kw];
                        part[kh] = sum;
                    }
                    V sum = part[0];
#pragma GCC unroll 5
                    for (int kh = 1; kh < KH; ++kh) sum += part[kh];
                    if (residual) sum += load<V>(residual + ow * channels + c);
                    store(out + ow * channels + c, activate(sum, a));
                }
            } else {
                for (int64_t ow = inner_begin; ow < inner_end; ++ow) {
                    alignas(64) float sums[kLanes<V>];
                    pixel(ow, c, 0, kw_count, sums, kLanes<V>);
                    finish(ow, c, sums, kLanes<V>);
                }
            }
            for (int64_t ow = inner_end; ow < aw.out; ++ow) edge(ow, c, kLanes<V>);
        }
        if (vectors < channels)
            for (int64_t ow = 0; ow < aw.out; ++ow) edge(ow, vectors, channels - vectors);
    }
}

template <class V>
__attribute__((always_inline)) inline void depthwise_rows(const float* x, const float* w, const ChannelGeometry& g,
                                                          const float* bias, const float* z, const ConvActivation& a,
                                                          float* y, int64_t begin, int64_t end) {
    if (g.rows.kernel == 3 && g.columns.kernel == 3) return depthwise_lines<V, 3, 3>(x, w, g, bias, z, a, y, begin, end);
    if (g.rows.kernel == 5 && g.columns.kernel == 5) return depthwise_lines<V, 5, 5>(x, w, g, bias, z, a, y, begin, end);
    depthwise_lines<V, 0, 0>(x, w, g, bias, z, a, y, begin, end);
}

__attribute__((target("avx512f"))) void depthwise_avx512(const float* x, const float* w, const ChannelGeometry& g,
                                                         const float* bias, const float* z, const ConvActivation& a,
                                                         float* y, int64_t begin, int64_t end) {
    depthwise_rows<Float16>(x, w, g, bias, z, a, y, begin, end);
}
__attribute__((target("avx2,fma"))) void depthwise_avx2(const float* x, const float* w, const ChannelGeometry& g,
                                                        const float* bias, const float* z, const ConvActivation& a,
                                                        float* y, int64_t begin, int64_t end) {
    depthwise_rows<Float8>(x, w, g, bias, z, a, y, begin, end);
}
void depthwise_portable(const float* x, const float* w, const ChannelGeometry& g, const float* bias, const float* z,
                        const ConvActivation& a, float* y, int64_t begin, int64_t end) {
    depthwise_rows<float __attribute__((vector_size(16)))>(x, w, g, bias, z, a, y, begin, end);
}

// Without a kernel of our own (INFER_FLOAT_GEMM=blas, or a CPU without AVX2): a chunk of
// positions' patches gathered into rows, sgemm by Wᵀ, then the epilogue per row.
void gemm_by_blas(const float* image, const int64_t* rows, const int64_t* offsets, const float* b, int64_t k, int64_t m,
                  int64_t positions, ChannelsLastWriter writer) {
    constexpr int64_t kChunk = 64;
    std::vector<float> patches(static_cast<size_t>(kChunk * k)), sums(static_cast<size_t>(kChunk * m));
    for (int64_t p0 = 0; p0 < positions; p0 += kChunk) {
        const int64_t count = std::min(kChunk, positions - p0);
        for (int64_t i = 0; i < count; ++i)
            for (int64_t j = 0; j < k; ++j) patches[static_cast<size_t>(i * k + j)] = image[rows[p0 + i] + offsets[j]];
        sgemm(false, false, count, m, k, 1.0f, patches.data(), k, b, m, 0.0f, sums.data(), m);
        ChannelsLastWriter::tile(&writer, p0, count, 0, m, sums.data(), m);
    }
}

// Parts of one workspace, each on a 64-byte boundary.
struct WorkspaceParts {
    size_t total = 0;
    size_t add(size_t bytes) {
        const size_t at = total;
        total += (bytes + 63) / 64 * 64;
        return at;
    }
};

class ChannelsLastFloatConv final : public CompiledKernel {
public:
    explicit ChannelsLastFloatConv(const CompileContext& c)
        : kernel_(f32_gemm_kernel()),
          winograd_(winograd_takes(*c.node().attributes, c.node().input_shapes[0], c.node().input_shapes[1], kernel_)) {
        const Tensor* w = c.constant(1);
        if (!w || w->dtype() != DType::f32 || w->rank() != 4) return;  // packed at every run instead
        const Shape x = c.node().input_shapes[0];
        const int64_t group = c.node().attributes->get_int("group", 1);
        if (x.rank() != 4 || group < 1 || w->shape()[0] % group != 0 || w->shape()[1] * group != x[3]) return;  // run() says why
        const ChannelGeometry g = weight_geometry(w->shape(), group);
        const FloatGemmKernel kernel = kernel_;
        const bool winograd = winograd_;
        const std::string layout = g.depthwise() ? "depthwise"
                                   : winograd    ? "winograd/" + std::string(float_gemm_kernel_name(kernel))
                                                 : "transposed/" + std::string(float_gemm_kernel_name(kernel));
        weight_ = c.prepacked(1, "channels-last-conv/" + layout, [g, kernel, winograd](const Tensor& value) {
            if (winograd) {
                const WinogradWeights u(kernel, g.channels, g.out_channels);
                Tensor packed = Tensor::empty(DType::f32, Shape({u.elements()}));
                u.pack(value.data<float>(), packed.data<float>());
                return packed;
            }
            if (g.depthwise()) {
                Tensor packed = Tensor::empty(DType::f32, Shape({value.numel()}));
                pack_depthwise_weight(value.data<float>(), g, packed.data<float>());
                return packed;
            }
            const TransposedWeight t(kernel, g);
            Tensor packed = Tensor::empty(DType::f32, Shape({t.group_elements * g.group}));
            t.pack(value.data<float>(), g, packed.data<float>());
            return packed;
        });
    }

    void run(KernelContext& ctx) const override {
        const Tensor& x = ctx.input(0);
        const Tensor& w = ctx.input(1);
        require_same_dtype(ctx, 0, 1);
        ChannelGeometry g = geometry(ctx, x.shape(), w.shape());
        const bool winograd = winograd_;  // decided for the plan's shapes, as the weight was packed
        if (winograd) {  // the tiles read two rows and columns per tile, and two more
            g.padded_h = std::max(g.padded_h, winograd_image_extent(g.rows));
            g.padded_w = std::max(g.padded_w, winograd_image_extent(g.columns));
            g.pads = true;
        }
        Tensor& y = ctx.output(0);
        if (y.numel() == 0) return;
        const float* bias = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
        const float* residual = ctx.has_input(3) ? ctx.input(3).data<float>() : nullptr;
        const ConvActivation activation = ConvActivation::of(ctx.attrs());
        const int64_t k = g.taps() * g.group_channels, positions = g.positions();

        WorkspaceParts parts;
        const bool padded = g.pads && !g.depthwise();  // the depthwise sums skip taps outside instead
        const size_t image_at = parts.add(padded ? sizeof(float) * static_cast<size_t>(g.images * g.padded_h * g.padded_w * g.channels) : 0);
        const TransposedWeight transposed(kernel_, g);
        const WinogradWeights transformed(kernel_, g.channels, g.out_channels);
        const int64_t weight_elements = g.depthwise() ? w.numel() : winograd ? transformed.elements() : transposed.group_elements * g.group;
        const size_t weight_at = parts.add(weight_.defined() ? 0 : sizeof(float) * static_cast<size_t>(weight_elements));
        const bool offsets_needed = !g.depthwise() && !winograd;  // (the pixels path leaves them unwritten)
        const size_t rows_at = parts.add(offsets_needed ? sizeof(int64_t) * static_cast<size_t>(positions) : 0);
        const size_t offsets_at = parts.add(offsets_needed ? sizeof(int64_t) * static_cast<size_t>(k) : 0);
        const size_t tiles_at = parts.add(winograd ? winograd_workspace_bytes(g) : 0);
        auto* workspace = static_cast<char*>(ctx.workspace(parts.total));

        const float* image = x.data<float>();
        if (padded) {
            pad_image(image, g, reinterpret_cast<float*>(workspace + image_at));
            image = reinterpret_cast<const float*>(workspace + image_at);
        }
        const float* packed = weight_.defined() ? weight_.data<float>() : reinterpret_cast<float*>(workspace + weight_at);
        if (!weight_.defined()) {
            auto* to = reinterpret_cast<float*>(workspace + weight_at);
            if (g.depthwise())
                pack_depthwise_weight(w.data<float>(), g, to);
            else if (winograd)
                transformed.pack(w.data<float>(), to);
            else
                transposed.pack(w.data<float>(), g, to);
        }
        float* py = y.data<float>();
        const FloatGemmKernel kernel = kernel_;

        if (g.depthwise()) {
            const auto sum = kernel == FloatGemmKernel::avx512 ? depthwise_avx512
                             : kernel == FloatGemmKernel::avx2 ? depthwise_avx2
                                                               : depthwise_portable;
            parallel_for(g.images * g.rows.out, grain_for(g.columns.out * g.channels * g.taps()), [&](int64_t begin, int64_t end) {
                sum(image, packed, g, bias, residual, activation, py, begin, end);
            });
            return;
        }

        if (winograd) {
            winograd_conv(image, packed, transformed, g, kernel, bias, residual, activation, py,
                          reinterpret_cast<float*>(workspace + tiles_at));
            return;
        }

        auto* rows = reinterpret_cast<int64_t*>(workspace + rows_at);
        auto* offsets = reinterpret_cast<int64_t*>(workspace + offsets_at);
        // A 1x1 layer without stride or padding reads X's pixels as A's rows, C apart (on our
        // kernels: sgemm's patches are gathered through the offsets).
        const bool pixels = g.taps() == 1 && !g.pads && g.rows.stride == 1 && g.columns.stride == 1 && g.group == 1 &&
                            kernel != FloatGemmKernel::blas;
        if (!pixels) patch_offsets(g, rows, offsets);
        for (int64_t grp = 0; grp < g.group; ++grp) {
            ChannelsLastWriter writer{py, g.out_channels, grp * g.group_out, bias, residual, activation};
            const float* b = packed + grp * transposed.group_elements;
            const float* a = image + grp * g.group_channels;
            if (kernel == FloatGemmKernel::blas) {
                gemm_by_blas(a, rows, offsets, b, k, g.group_out, positions, writer);
                continue;
            }
            const int64_t column = grp * g.group_out;
            const ChannelOutput output{py + column, g.out_channels, bias ? bias + column : nullptr,
                                       residual ? residual + column : nullptr, activation};
            if (pixels)
                gemm_packed_float_to_channels(transposed.layout, b, a, g.channels, positions, &ChannelsLastWriter::tile, &writer,
                                              output);
            else
                gemm_packed_float_rows(transposed.layout, b, a, rows, offsets, positions, &ChannelsLastWriter::tile, &writer,
                                       &output);
        }
    }

private:
    // The weight's geometry as far as packing needs it: groups, channels, kernel.
    static ChannelGeometry weight_geometry(const Shape& w, int64_t group) {
        ChannelGeometry g{};
        g.group = group;
        g.group_channels = w[1];
        g.channels = w[1] * group;
        g.out_channels = w[0];
        g.group_out = w[0] / group;
        g.rows.kernel = w[2];
        g.columns.kernel = w[3];
        return g;
    }

    FloatGemmKernel kernel_;  // chosen once: the packed weight is laid out for it
    bool winograd_;           // 3x3 stride 1 by Winograd's F(2x2, 3x3) (winograd_conv.hpp)
    Tensor weight_;           // Wᵀ per group (the depthwise [taps, C], Winograd's 16 matrices), when W is a constant
};

}  // namespace

// X into its zero-bordered image [N, padded_h, padded_w, C].
void pad_image(const float* x, const ChannelGeometry& g, float* padded) {
    const int64_t row = g.padded_w * g.channels, line = g.columns.in * g.channels;
    parallel_for(g.images * g.padded_h, grain_for(row), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            float* to = padded + r * row;
            const int64_t h = r % g.padded_h - g.rows.pad_begin;
            if (h < 0 || h >= g.rows.in) {
                std::fill_n(to, row, 0.0f);
                continue;
            }
            const int64_t before = g.columns.pad_begin * g.channels;
            std::fill_n(to, before, 0.0f);
            std::memcpy(to + before, x + ((r / g.padded_h) * g.rows.in + h) * line, sizeof(float) * static_cast<size_t>(line));
            std::fill(to + before + line, to + row, 0.0f);
        }
    });
}

void register_channels_last_conv_kernels(KernelRegistry& r) {
    r.add_compiled("ChannelsLastConv", DType::f32,
                   [](const CompileContext& c) { return std::make_unique<ChannelsLastFloatConv>(c); });
}

}  // namespace infer::cpu
