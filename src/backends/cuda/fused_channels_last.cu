// ChannelsLastConv and ChannelsLastMaxPool (core/ops/table_fused.cpp) on the GPU: a CNN's
// stretch between its edges in [N, H, W, C] (passes/channels_last.cpp). Channel-last, a
// convolution of all images is one product whose rows are output pixels:
//   Y[N·OH·OW, M] = patches[N·OH·OW, KH·KW·C] · W'ᵀ,  W' = W reordered to [M, KH, KW, C],
// both rows padded with zeros to whole 16 bytes (ResNet's 3-colour stem has 147 per row: its
// product fell to a tensor-core kernel for unaligned operands, 0.33 ms at batch 64 on an H100),
// so the bias runs along Y's rows, where cuBLASLt's epilogue adds it (with ReLU, and the residual
// Z as the product's C), a 1x1 stride-1 layer reads X as its patches, and the patches of the
// others are copied a pixel's channels at a time (16 bytes per thread). In planes (neural_conv.cu)
// ResNet-50 f16 at batch 64 spent 3.5 ms of 10.9 unfolding patches one value per thread, 2.9 ms
// in a separate epilogue pass, and its products ran per image plane on tensor-core kernels
// for unaligned operands (H100).
// Depthwise layers run a direct kernel, a thread per output pixel and 16 bytes of channels.
// Other grouped convolutions are declined (cuda_backend.cpp's supports()): they stay in planes.
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/gemm.hpp"
#include "backends/cuda/gemm_lt.hpp"
#include "backends/cuda/packed.cuh"
#include "backends/cuda/window.cuh"

#include "core/ops/fused_conv_activation.hpp"

#include <algorithm>
#include <cstring>

namespace infer::cuda {

namespace {

using detail::ConvActivation;

// The patches of a chunk of images stay under this (the workspace the node asks for).
constexpr int64_t kPatchBytes = int64_t{128} << 20;

// A [N, H, W, C] tensor's pixels and channel groups of V (C / V of them) as 32-bit indices:
// thread i of a launch over pixels · groups takes group i % groups of pixel i / groups.
struct PixelGroups {
    uint32_t groups;
    FastDivmod by_groups;
    explicit PixelGroups(int64_t channels, int v)
        : groups(static_cast<uint32_t>(channels / v)), by_groups(static_cast<uint32_t>(channels / v)) {}
};

// An output pixel's image and (oh, ow) under window w.
struct OutputPixel {
    uint32_t image, oh, ow;
    __device__ OutputPixel(uint32_t pixel, const Window2d& w) {
        image = w.by_positions.quotient(pixel);
        const uint32_t o = pixel - image * static_cast<uint32_t>(w.positions);
        oh = w.by_out_w.quotient(o);
        ow = o - oh * static_cast<uint32_t>(w.out_w);
    }
};

// Pointer to the V channels of group g at input pixel (image, ih, iw), or null in the padding.
template <class T, int V>
__device__ __forceinline__ const Pack<T, V>* input_pack(const T* x, const Window2d& w, int channels, uint32_t image,
                                                       int ih, int iw, uint32_t g) {
    if (ih < 0 || ih >= w.in_h || iw < 0 || iw >= w.in_w) return nullptr;
    const size_t pixel = (static_cast<size_t>(image) * w.in_h + ih) * w.in_w + iw;
    return reinterpret_cast<const Pack<T, V>*>(x + pixel * channels) + g;
}

// Calls visit(pack, kh, kw) for each tap of output pixel `out`'s window that lies inside the
// input, with the V channels of group g there (the direct kernels skip the padding).
template <class T, int V, class Visit>
__device__ __forceinline__ void for_each_tap(const T* x, const Window2d& w, int channels, const OutputPixel& out,
                                             uint32_t g, Visit visit) {
    for (int kh = 0; kh < w.kernel_h; ++kh) {
        const int ih = static_cast<int>(out.oh) * w.stride_h - w.pad_top + kh * w.dilation_h;
        for (int kw = 0; kw < w.kernel_w; ++kw) {
            const int iw = static_cast<int>(out.ow) * w.stride_w - w.pad_left + kw * w.dilation_w;
            const Pack<T, V>* source = input_pack<T, V>(x, w, channels, out.image, ih, iw, g);
            if (source) visit(*source, kh, kw);
        }
    }
}

// patches[p][tap][c] = x at output pixel p's tap, channels c (zeros in the padding); a thread
// per (pixel, tap, channel group), so consecutive threads write consecutive 16 bytes. Rows are
// whole groups here (C a multiple of V), so they need no padding.
template <class T, int V>
__global__ void patches_kernel(const T* x, T* patches, uint32_t n, Window2d w, int channels, PixelGroups pg) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const uint32_t rest = pg.by_groups.quotient(i), g = i - rest * pg.groups;
        const uint32_t pixel = w.by_taps.quotient(rest), tap = rest - pixel * static_cast<uint32_t>(w.taps);
        const OutputPixel out(pixel, w);
        const uint32_t kh = w.by_kernel_w.quotient(tap), kw = tap - kh * static_cast<uint32_t>(w.kernel_w);
        const int ih = static_cast<int>(out.oh) * w.stride_h - w.pad_top + static_cast<int>(kh) * w.dilation_h;
        const int iw = static_cast<int>(out.ow) * w.stride_w - w.pad_left + static_cast<int>(kw) * w.dilation_w;
        const Pack<T, V>* source = input_pack<T, V>(x, w, channels, out.image, ih, iw, g);
        reinterpret_cast<Pack<T, V>*>(patches)[i] = source ? *source : Pack<T, V>{};
    }
}

// The same for channels that do not fill whole groups (the stem's 3 colours): a thread per
// (pixel, tap) copies the tap's C values; the pixel's last tap also zeroes the row's padding
// up to `row` values (6 divisions per value made the stem's patches 0.6 ms at batch 64).
template <class T>
__global__ void patch_rows_kernel(const T* x, T* patches, uint32_t n, Window2d w, int channels, int row) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const uint32_t pixel = w.by_taps.quotient(i), tap = i - pixel * static_cast<uint32_t>(w.taps);
        const OutputPixel out(pixel, w);
        const uint32_t kh = w.by_kernel_w.quotient(tap), kw = tap - kh * static_cast<uint32_t>(w.kernel_w);
        const int ih = static_cast<int>(out.oh) * w.stride_h - w.pad_top + static_cast<int>(kh) * w.dilation_h;
        const int iw = static_cast<int>(out.ow) * w.stride_w - w.pad_left + static_cast<int>(kw) * w.dilation_w;
        const T* source = reinterpret_cast<const T*>(input_pack<T, 1>(x, w, channels, out.image, ih, iw, 0));
        T* target = patches + static_cast<size_t>(pixel) * row + static_cast<size_t>(tap) * channels;
        for (int c = 0; c < channels; ++c) target[c] = source ? source[c] : T{};
        if (tap + 1 == static_cast<uint32_t>(w.taps))
            for (int c = w.taps * channels; c < row; ++c) patches[static_cast<size_t>(pixel) * row + c] = T{};
    }
}

// What follows the product: y = clamp(y + bias[c] + z, low, high), z of y's layout.
template <class T>
struct Epilogue {
    const T* bias;      // [M] or null
    const T* residual;  // like y, or null
    float low, high;
};

template <class T, int V>
__device__ __forceinline__ Pack<T, V> finish(const float (&sum)[V], const Epilogue<T>& e, uint32_t g, uint32_t i) {
    Pack<T, V> b{}, z{};
    if (e.bias) b = reinterpret_cast<const Pack<T, V>*>(e.bias)[g];
    if (e.residual) z = reinterpret_cast<const Pack<T, V>*>(e.residual)[i];
    Pack<T, V> y;
#pragma unroll
    for (int j = 0; j < V; ++j) {
        float v = sum[j];
        if (e.bias) v += load_float(b.v[j]);
        if (e.residual) v += load_float(z.v[j]);
        v = v < e.low ? e.low : (v > e.high ? e.high : v);  // NaN stays NaN, as on the CPU
        y.v[j] = store<T>(static_cast<Compute<T>>(v));
    }
    return y;
}

// The epilogue after a product that could not take it: a thread per group of V output channels.
template <class T, int V>
__global__ void epilogue_kernel(T* y, uint32_t n, PixelGroups pg, Epilogue<T> e) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const uint32_t g = i - pg.by_groups.quotient(i) * pg.groups;
        const Pack<T, V> in = reinterpret_cast<const Pack<T, V>*>(y)[i];
        float sum[V];
#pragma unroll
        for (int j = 0; j < V; ++j) sum[j] = load_float(in.v[j]);
        reinterpret_cast<Pack<T, V>*>(y)[i] = finish<T, V>(sum, e, g, i);
    }
}

// Depthwise (one filter per channel, weights [C, 1, KH, KW]): a thread per output pixel and
// group of V channels, f32 sums, the epilogue in it.
template <class T, int V>
__global__ void depthwise_kernel(const T* x, const T* weights, T* y, uint32_t n, Window2d w, int channels,
                                 PixelGroups pg, Epilogue<T> e) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const uint32_t pixel = pg.by_groups.quotient(i), g = i - pixel * pg.groups;
        const OutputPixel out(pixel, w);
        float sum[V] = {};
        const T* group_filters = weights + static_cast<size_t>(g) * V * w.taps;
        for_each_tap<T, V>(x, w, channels, out, g, [&](const Pack<T, V>& v, int kh, int kw) {
            const T* filter = group_filters + kh * w.kernel_w + kw;
#pragma unroll
            for (int j = 0; j < V; ++j) sum[j] += load_float(v.v[j]) * load_float(filter[j * w.taps]);
        });
        reinterpret_cast<Pack<T, V>*>(y)[i] = finish<T, V>(sum, e, g, i);
    }
}

// W [M, C, KH, KW] → W' [M, row] with W'[m][tap · C + c] = W[m][c][tap] and zeros past KH·KW·C,
// so that a row of W' meets a row of patches in order. A thread per value of W'.
template <class T>
__global__ void reorder_weights_kernel(const T* w, T* reordered, uint32_t n, uint32_t channels, uint32_t taps,
                                       uint32_t row) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const uint32_t m = i / row, j = i % row, tap = j / channels, c = j % channels;
        reordered[i] = j < taps * channels ? w[(static_cast<size_t>(m) * channels + c) * taps + tap] : T{};
    }
}

// The same on the host, by bytes, for a constant weight prepacked once per session.
Tensor reorder_weights_on_host(const Tensor& w, int64_t row) {
    const Tensor host = w.contiguous();
    const auto& d = host.shape().dims();
    const int64_t m = d[0], channels = d[1], taps = d[2] * d[3];
    const size_t element = dtype_size(host.dtype());
    Tensor reordered = Tensor::empty(host.dtype(), Shape({m, row}));
    const auto* from = static_cast<const char*>(host.raw_data());
    auto* to = static_cast<char*>(reordered.raw_data());
    std::memset(to, 0, static_cast<size_t>(m * row) * element);
    for (int64_t o = 0; o < m; ++o)
        for (int64_t c = 0; c < channels; ++c)
            for (int64_t tap = 0; tap < taps; ++tap)
                std::memcpy(to + (o * row + tap * channels + c) * element, from + ((o * channels + c) * taps + tap) * element,
                            element);
    return reordered;
}

// A node's geometry: X [N, H, W, C], W [M, C/group, KH, KW], Y [N, OH, OW, M].
struct ConvShape {
    int64_t batch, channels, out_channels;
    Window w;
    bool depthwise, pointwise;
    int64_t row;            // values per row of patches and W': KH·KW·C padded to 16 bytes
    bool reordered;         // whether the product reads W' (a window, or padded rows)
    int64_t chunk_images;   // images whose patches are made at once
    size_t patch_bytes;     // workspace for them
    size_t reorder_bytes;   // workspace for W' of a weight known only at run time
};

ConvShape conv_shape(const Attributes& attrs, const Shape& x, const Shape& weights, size_t element) {
    ConvShape s{};
    s.batch = x[0];
    s.channels = x[3];
    s.out_channels = weights[0];
    s.w = window_from(attrs, {x[1], x[2]}, {weights[2], weights[3]});
    s.depthwise = attrs.get_int("group", 1) != 1;  // supports() lets only depthwise groups through
    s.pointwise = s.w.kernel_size == 1;
    for (int d = 0; d < 2; ++d)
        s.pointwise = s.pointwise && s.w.stride[d] == 1 && s.w.pad_begin[d] == 0 && s.w.pad_end[d] == 0;
    s.row = s.w.kernel_size * s.channels;
    if (s.depthwise || s.pointwise) return s;  // no patches: X is read in place
    const auto per_16_bytes = static_cast<int64_t>(16 / element);
    s.row = (s.row + per_16_bytes - 1) / per_16_bytes * per_16_bytes;
    s.reordered = s.w.kernel_size > 1 || s.row != s.channels;
    if (s.reordered) s.reorder_bytes = static_cast<size_t>(s.out_channels * s.row) * element;
    if (s.batch == 0 || s.w.out_size == 0) return s;
    const int64_t image_bytes = s.w.out_size * s.row * static_cast<int64_t>(element);
    s.chunk_images = std::clamp<int64_t>(kPatchBytes / std::max<int64_t>(image_bytes, 1), 1, s.batch);
    s.patch_bytes = static_cast<size_t>(s.chunk_images * image_bytes);
    return s;
}

// Elements of T per 16-byte access when every channel row and pointer allows it, else 1.
template <class T>
bool packs_fit(int64_t channels, std::initializer_list<const void*> pointers) {
    constexpr int V = kPackWidth<T>;
    if (channels % V != 0) return false;
    for (const void* p : pointers)
        if (p && !is_aligned(p, sizeof(T) * V)) return false;
    return true;
}

// Runs go(integral_constant<int, V>) with V = kPackWidth<T> where packs_fit, else with V = 1.
template <class T, class Go>
void with_pack_width(int64_t channels, std::initializer_list<const void*> pointers, Go go) {
    if (packs_fit<T>(channels, pointers)) go(std::integral_constant<int, kPackWidth<T>>{});
    else go(std::integral_constant<int, 1>{});
}

const Attributes& attributes_of(const NodeSignature& node) {
    static const Attributes none;
    return node.attributes ? *node.attributes : none;
}

uint32_t checked_count(const Launch& l, int64_t n) {
    if (n >= (int64_t{1} << 31)) l.unsupported("more than 2^31 work items in one launch");
    return static_cast<uint32_t>(n);
}

class ChannelsLastConv {
public:
    explicit ChannelsLastConv(const CompileContext& c) : activation_(ConvActivation::of(attributes_of(c.node()))) {
        const Tensor* w = c.constant(1);
        const NodeSignature& node = c.node();
        if (!w || node.input_shapes.size() < 2 || node.input_shapes[0].rank() != 4 || w->rank() != 4) return;
        const ConvShape s = conv_shape(attributes_of(node), node.input_shapes[0], w->shape(), dtype_size(w->dtype()));
        if (!s.reordered) return;
        const Device device = c.device();
        const int64_t row = s.row;
        reordered_ = c.prepacked(1, "cuda/channels-last-filters/" + std::to_string(row), [device, row](const Tensor& host) {
            return reorder_weights_on_host(host, row).to(device);
        });
    }

    void operator()(const Launch& l) const {
        const Tensor& x = l.ctx.input(0);
        const Tensor& weights = l.ctx.input(1);
        if (weights.dtype() != x.dtype()) l.unsupported("weights " + weights.describe());
        if (x.rank() != 4 || weights.rank() != 4) l.unsupported("X " + x.describe() + " and W " + weights.describe() + " (4-D only)");
        if (activation_.hard_swish) l.unsupported("activation HardSwish");
        if (l.ctx.output(0).numel() == 0) return;
        const ConvShape s = conv_shape(l.ctx.attrs(), x.shape(), weights.shape(), dtype_size(x.dtype()));
        if (s.w.in_size >= (int64_t{1} << 31)) l.unsupported("X " + x.describe() + ": planes beyond 2^31 pixels");
        dispatch_float(x.dtype(), l, [&](auto tag) {
            using T = typename decltype(tag)::type;
            const Epilogue<T> e{l.ctx.has_input(2) ? static_cast<const T*>(l.in(2)) : nullptr,
                                l.ctx.has_input(3) ? static_cast<const T*>(l.in(3)) : nullptr, activation_.low,
                                activation_.high};
            if (s.depthwise) return depthwise<T>(l, s, e);
            product<T>(l, s, e);
        });
    }

private:
    template <class T>
    void depthwise(const Launch& l, const ConvShape& s, const Epilogue<T>& e) const {
        const auto* x = static_cast<const T*>(l.in(0));
        auto* y = static_cast<T*>(l.out(0));
        const Window2d w(s.w);
        const int channels = static_cast<int>(s.channels);
        with_pack_width<T>(s.channels, {x, y, e.bias, e.residual}, [&](auto v_tag) {
            constexpr int V = decltype(v_tag)::value;
            const PixelGroups pg(s.channels, V);
            const uint32_t n = checked_count(l, s.batch * s.w.out_size * pg.groups);
            depthwise_kernel<T, V><<<grid_for(n), kBlock, 0, l.handle()>>>(x, static_cast<const T*>(l.in(1)), y, n, w,
                                                                          channels, pg, e);
            l.check_launch("depthwise_kernel");
        });
    }

    template <class T>
    void product(const Launch& l, const ConvShape& s, const Epilogue<T>& e) const {
        const DType type = l.ctx.input(0).dtype();
        const int64_t k = s.row, m = s.out_channels;
        const T* filters = static_cast<const T*>(l.in(1));
        char* workspace = nullptr;
        if (!s.pointwise) workspace = static_cast<char*>(l.ctx.workspace(s.patch_bytes + s.reorder_bytes));
        if (s.reordered) {
            if (reordered_.defined()) {
                filters = static_cast<const T*>(reordered_.raw_data());
            } else {
                T* reordered = reinterpret_cast<T*>(workspace + s.patch_bytes);
                const uint32_t n = checked_count(l, m * s.row);
                reorder_weights_kernel<<<grid_for(n), kBlock, 0, l.handle()>>>(
                    filters, reordered, n, static_cast<uint32_t>(s.channels), static_cast<uint32_t>(s.w.kernel_size),
                    static_cast<uint32_t>(s.row));
                l.check_launch("reorder_weights_kernel");
                filters = reordered;
            }
        }
        const auto* x = static_cast<const char*>(l.in(0));
        auto* y = static_cast<char*>(l.out(0));
        const int64_t image_in = s.w.in_size * s.channels * static_cast<int64_t>(sizeof(T));
        const int64_t image_out = s.w.out_size * m * static_cast<int64_t>(sizeof(T));
        const bool clamps = activation_.clamps();
        const bool relu = activation_.low == 0.0f && !(activation_.high < INFINITY);
        const int64_t chunk = s.pointwise ? s.batch : s.chunk_images;
        for (int64_t first = 0; first < s.batch; first += chunk) {
            const int64_t images = std::min(chunk, s.batch - first), rows = images * s.w.out_size;
            const void* patches = x + first * image_in;
            if (!s.pointwise) {
                make_patches<T>(l, s, reinterpret_cast<const T*>(patches), reinterpret_cast<T*>(workspace), images);
                patches = workspace;
            }
            T* y_chunk = reinterpret_cast<T*>(y + first * image_out);
            const T* z_chunk = e.residual ? reinterpret_cast<const T*>(reinterpret_cast<const char*>(e.residual) + first * image_out)
                                          : nullptr;
            const GemmOperand a{patches, k, 0, false}, b{filters, k, 0, true};
            // The whole epilogue in the product where cuBLASLt has it: bias, Z as C, ReLU.
            if (e.bias && (!clamps || relu) &&
                gemm_bias_epilogue(l, type, rows, m, k, 1.0f, a, b, e.bias, y_chunk,
                                   relu ? GemmEpilogue::bias_relu : GemmEpilogue::bias, z_chunk))
                continue;
            gemm_row_major(l, type, rows, m, k, 1.0f, a, b, 0.0f, y_chunk, m, 0, 1);
            if (e.bias || e.residual || clamps) finish_chunk<T>(l, y_chunk, rows, m, {e.bias, z_chunk, e.low, e.high});
        }
    }

    template <class T>
    void make_patches(const Launch& l, const ConvShape& s, const T* x, T* patches, int64_t images) const {
        const Window2d w(s.w);
        constexpr int V = kPackWidth<T>;
        if (packs_fit<T>(s.channels, {x, patches})) {  // then s.row is KH·KW·C already
            const PixelGroups pg(s.channels, V);
            const uint32_t n = checked_count(l, images * s.w.out_size * s.w.kernel_size * pg.groups);
            patches_kernel<T, V><<<grid_for(n), kBlock, 0, l.handle()>>>(x, patches, n, w, static_cast<int>(s.channels), pg);
            l.check_launch("patches_kernel");
            return;
        }
        const uint32_t n = checked_count(l, images * s.w.out_size * s.w.kernel_size);
        patch_rows_kernel<T><<<grid_for(n), kBlock, 0, l.handle()>>>(x, patches, n, w, static_cast<int>(s.channels),
                                                                    static_cast<int>(s.row));
        l.check_launch("patch_rows_kernel");
    }

    template <class T>
    void finish_chunk(const Launch& l, T* y, int64_t rows, int64_t m, const Epilogue<T>& e) const {
        with_pack_width<T>(m, {y, e.bias, e.residual}, [&](auto v_tag) {
            constexpr int V = decltype(v_tag)::value;
            const PixelGroups pg(m, V);
            const uint32_t n = checked_count(l, rows * pg.groups);
            epilogue_kernel<T, V><<<grid_for(n), kBlock, 0, l.handle()>>>(y, n, pg, e);
            l.check_launch("epilogue_kernel");
        });
    }

    ConvActivation activation_;
    Tensor reordered_;  // W' of a constant weight with a window, on the device
};

size_t channels_last_conv_workspace(const NodeSignature& node) {
    if (node.input_shapes.size() < 2 || node.input_shapes[0].rank() != 4 || node.input_shapes[1].rank() != 4) return 0;
    const ConvShape s = conv_shape(attributes_of(node), node.input_shapes[0], node.input_shapes[1],
                                   dtype_size(node.input_dtypes[0]));
    return s.pointwise ? 0 : s.patch_bytes + s.reorder_bytes;
}

// ChannelsLastMaxPool: a thread per output pixel and group of V channels; padding never wins
// (only taps inside the input are read) and NaN propagates, as in MaxPool.
template <class T, int V>
__global__ void max_pool_kernel(const T* x, T* y, uint32_t n, Window2d w, int channels, PixelGroups pg) {
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const uint32_t pixel = pg.by_groups.quotient(i), g = i - pixel * pg.groups;
        const OutputPixel out(pixel, w);
        float best[V];
#pragma unroll
        for (int j = 0; j < V; ++j) best[j] = MaxOp::identity;
        for_each_tap<T, V>(x, w, channels, out, g, [&](const Pack<T, V>& v, int, int) {
#pragma unroll
            for (int j = 0; j < V; ++j) best[j] = MaxOp{}(best[j], load_float(v.v[j]));
        });
        Pack<T, V> result;
#pragma unroll
        for (int j = 0; j < V; ++j) result.v[j] = store<T>(static_cast<Compute<T>>(best[j]));
        reinterpret_cast<Pack<T, V>*>(y)[i] = result;
    }
}

void run_max_pool(const Launch& l) {
    const Tensor& x = l.ctx.input(0);
    if (x.rank() != 4) l.unsupported("X " + x.describe() + " (4-D only)");
    const Shape& xs = x.shape();
    const Window window = window_from(l.ctx.attrs(), {xs[1], xs[2]}, {});
    const int64_t channels = xs[3], pixels = xs[0] * window.out_size;
    if (pixels * channels == 0) return;
    if (window.in_size >= (int64_t{1} << 31)) l.unsupported("X " + x.describe() + ": planes beyond 2^31 pixels");
    const Window2d w(window);
    dispatch_float(x.dtype(), l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const auto* in = static_cast<const T*>(l.in(0));
        auto* out = static_cast<T*>(l.out(0));
        with_pack_width<T>(channels, {in, out}, [&](auto v_tag) {
            constexpr int V = decltype(v_tag)::value;
            const PixelGroups pg(channels, V);
            const uint32_t n = checked_count(l, pixels * pg.groups);
            max_pool_kernel<T, V><<<grid_for(n), kBlock, 0, l.handle()>>>(in, out, n, w, static_cast<int>(channels), pg);
            l.check_launch("max_pool_kernel");
        });
    });
}

}  // namespace

void register_channels_last_kernels(KernelRegistrar& r) {
    for (const DType type : kFloatTypes)
        r.add_compiled("ChannelsLastConv", type, [](const CompileContext& c) -> CudaKernelFunction {
            return ChannelsLastConv(c);
        }, channels_last_conv_workspace);
    r.add("ChannelsLastMaxPool", kFloatTypes, run_max_pool);
}

}  // namespace infer::cuda
