// ConvInteger, QLinearConv and ConvIntegerToFloat: a direct N-D convolution over u8/i8 data
// widened to i32, less zero points (the weights' may be per output channel), with i32
// accumulation. QLinearConv adds its i32 bias and requantizes with x_scale * w_scale[m] /
// y_scale; ConvIntegerToFloat scales to f32 and adds its bias (then Y's grid, if given). With constant weights and one
// group they run as products on the packed int8 kernel instead (PackedIntegerConv).
// ChannelsLastQLinearConv is QLinearConv with X and Y channel-last ([N, spatial..., C]): the
// packed kernel reads and writes that layout as it is; the direct loops go through a
// channel-first copy.
#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/int8_gemm.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/transpose8x8.hpp"
#include "backends/cpu/kernels/transpose_bytes.hpp"
#include "core/ops/shapes_neural.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

namespace infer::cpu {

namespace {

// QLinear ops read their scales as f32.
void require_f32_scales(const KernelContext& ctx) {
    for (size_t i : {1, 4, 6})
        if (ctx.input(i).dtype() != DType::f32)
            unsupported(ctx, "scale of dtype " + std::string(dtype_name(ctx.input(i).dtype())));
}

int32_t element(const KernelContext& ctx, const Tensor& t, int64_t i) {
    switch (t.dtype()) {
        case DType::u8: return t.data<uint8_t>()[i];
        case DType::i8: return t.data<int8_t>()[i];
        case DType::i32: return t.data<int32_t>()[i];
        default: unsupported(ctx, "operand dtype " + std::string(dtype_name(t.dtype())));
    }
}

// `data` less its zero point; `per` elements share one zero point entry (when it has several).
std::vector<int32_t> widen(const KernelContext& ctx, size_t input, size_t zero_input, int64_t per) {
    const Tensor& t = ctx.input(input);
    std::vector<int32_t> out(static_cast<size_t>(t.numel()));
    const Tensor* zero = ctx.has_input(zero_input) ? &ctx.input(zero_input) : nullptr;
    if (zero && zero->dtype() != t.dtype()) invalid_argument(ctx, "zero point and operand differ in dtype");
    for (int64_t i = 0, count = t.numel(); i < count; ++i)
        out[static_cast<size_t>(i)] =
            element(ctx, t, i) - (zero ? element(ctx, *zero, zero->numel() == 1 ? 0 : i / per) : 0);
    return out;
}

struct Axis {
    int64_t in, kernel, stride, dilation, pad_begin, out;
};

// A convolution's spatial axes and the sizes both kernels need: pixels per input plane, kernel
// taps, output positions.
struct ConvAxes {
    std::vector<Axis> axes;
    int64_t in_size = 1, taps = 1, positions = 1;
};

ConvAxes conv_axes(const KernelContext& ctx, const Shape& x, const Shape& w) {
    const auto& xd = x.dims();
    const auto& wd = w.dims();
    const size_t spatial = xd.size() - 2;
    const detail::WindowParams p = detail::read_window_params(ctx.attrs(), spatial, {wd.begin() + 2, wd.end()});
    const auto geometry = detail::window_geometry(p, {xd.begin() + 2, xd.end()});
    ConvAxes g;
    for (size_t i = 0; i < spatial; ++i) {
        g.axes.push_back({xd[i + 2], wd[i + 2], p.strides[i], p.dilations[i], geometry[i].pad_begin, geometry[i].out});
        g.in_size *= xd[i + 2];
        g.taps *= wd[i + 2];
        g.positions *= geometry[i].out;
    }
    return g;
}

// to[n, j, i] = from[n, i, j] for `rows` i and `cols` j: [N, spatial, C] to [N, C, spatial] and back.
template <class T>
void swap_last_two(const T* from, int64_t images, int64_t rows, int64_t cols, T* to) {
    for (int64_t n = 0; n < images; ++n, from += rows * cols, to += rows * cols)
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j) to[j * rows + i] = from[i * cols + j];
}

// X (input x, less its zero point) widened to i32 in planes, [N, C, spatial...] = x_shape, from
// a channel-last X ([N, spatial..., C]) when channels_last.
std::vector<int32_t> widened_planes(const KernelContext& ctx, size_t x, size_t zero, const Shape& x_shape,
                                    bool channels_last) {
    std::vector<int32_t> widened = widen(ctx, x, zero, ctx.input(x).numel());
    if (!channels_last) return widened;
    std::vector<int32_t> planes(widened.size());
    const int64_t spatial = ctx.input(x).numel() / std::max<int64_t>(x_shape[0] * x_shape[1], 1);
    swap_last_two(widened.data(), x_shape[0], spatial, x_shape[1], planes.data());
    return planes;
}

// acc[n, m, out positions] = sum over the group's channels and taps of x * w; x [N, C, spatial...].
std::vector<int32_t> integer_conv(const KernelContext& ctx, const Shape& x, const Tensor& w,
                                  const std::vector<int32_t>& xv, const std::vector<int32_t>& wv) {
    const auto& xd = x.dims();
    const auto& wd = w.shape().dims();
    const size_t spatial = xd.size() - 2;
    const int64_t group = ctx.attrs().get_int("group", 1);
    const ConvAxes g = conv_axes(ctx, x, w.shape());
    const std::vector<Axis>& axes = g.axes;
    const int64_t in_size = g.in_size, taps = g.taps, positions = g.positions;
    const int64_t images = xd[0], channels = xd[1], out_channels = wd[0];
    const int64_t group_in = channels / group, group_out = out_channels / group;
    std::vector<int32_t> acc(static_cast<size_t>(images * out_channels * positions), 0);
    parallel_for(images * out_channels, 1, [&](int64_t begin, int64_t end) {
        std::vector<int64_t> at(spatial), tap(spatial);
        for (int64_t plane = begin; plane < end; ++plane) {
            const int64_t n = plane / out_channels, m = plane % out_channels, g = m / group_out;
            std::fill(at.begin(), at.end(), 0);
            for (int64_t o = 0; o < positions; ++o) {
                int32_t sum = 0;
                for (int64_t t = 0; t < taps; ++t) {
                    int64_t offset = 0;
                    bool inside = true;
                    for (size_t d = spatial, rest = static_cast<size_t>(t); d-- > 0;) {
                        tap[d] = static_cast<int64_t>(rest) % axes[d].kernel;
                        rest /= static_cast<size_t>(axes[d].kernel);
                    }
                    for (size_t d = 0; d < spatial; ++d) {
                        const Axis& a = axes[d];
                        const int64_t i = at[d] * a.stride - a.pad_begin + tap[d] * a.dilation;
                        inside = inside && i >= 0 && i < a.in;
                        offset = offset * a.in + i;
                    }
                    if (!inside) continue;
                    for (int64_t c = 0; c < group_in; ++c)
                        sum += xv[static_cast<size_t>((n * channels + g * group_in + c) * in_size + offset)] *
                               wv[static_cast<size_t>((m * group_in + c) * taps + t)];
                }
                acc[static_cast<size_t>(plane * positions + o)] = sum;
                for (size_t d = spatial; d-- > 0;) {
                    if (++at[d] < axes[d].out) break;
                    at[d] = 0;
                }
            }
        }
    });
    return acc;
}

void conv_integer_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const int64_t per_channel = w.numel() / std::max<int64_t>(w.shape()[0], 1);
    const std::vector<int32_t> acc =
        integer_conv(ctx, x.shape(), w, widen(ctx, 0, 2, x.numel()), widen(ctx, 1, 3, per_channel));
    std::copy(acc.begin(), acc.end(), ctx.output(0).data<int32_t>());
}

// acc [N, M, positions] plus the bias, requantized into py in the same order.
template <class Q>
void requantize(const KernelContext& ctx, const std::vector<int32_t>& acc, int64_t images, int64_t out_channels, Q* py) {
    const float x_scale = ctx.input(1).data<float>()[0], y_scale = ctx.input(6).data<float>()[0];
    const Tensor& w_scale = ctx.input(4);
    const int32_t zero = ctx.input(7).data<Q>()[0];
    const int32_t* bias = ctx.has_input(8) ? ctx.input(8).data<int32_t>() : nullptr;
    const int64_t positions = static_cast<int64_t>(acc.size()) / std::max<int64_t>(images * out_channels, 1);
    for (size_t i = 0; i < acc.size(); ++i) {
        const int64_t m = static_cast<int64_t>(i) / positions % out_channels;
        const double scale = double(x_scale) * w_scale.data<float>()[w_scale.numel() == 1 ? 0 : m] / y_scale;
        const double v = std::nearbyint((acc[i] + (bias ? bias[m] : 0)) * scale) + zero;
        py[i] = static_cast<Q>(std::clamp(v, double(std::numeric_limits<Q>::min()), double(std::numeric_limits<Q>::max())));
    }
}

// QLinearConv by the direct loops; channel-last X and Y (ChannelsLastQLinearConv) through
// channel-first copies.
template <bool kChannelsLast>
void qlinear_conv_kernel(KernelContext& ctx) {
    require_f32_scales(ctx);
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(3);
    if (ctx.input(1).numel() != 1 || ctx.input(6).numel() != 1) unsupported(ctx, "per-axis x or y scales");
    const int64_t per_channel = w.numel() / std::max<int64_t>(w.shape()[0], 1);
    const Shape x_shape = kChannelsLast ? channels_first(x.shape()) : x.shape();
    const std::vector<int32_t> acc =
        integer_conv(ctx, x_shape, w, widened_planes(ctx, 0, 2, x_shape, kChannelsLast), widen(ctx, 3, 5, per_channel));
    Tensor& y = ctx.output(0);
    const int64_t images = x_shape[0], m = w.shape()[0], positions = y.numel() / std::max<int64_t>(images * m, 1);
    const auto write = [&]<class Q>(Q* py) {
        if (!kChannelsLast) return requantize<Q>(ctx, acc, images, m, py);
        std::vector<Q> planes(acc.size());
        requantize<Q>(ctx, acc, images, m, planes.data());
        swap_last_two(planes.data(), images, m, positions, py);
    };
    if (y.dtype() == DType::u8) write(y.data<uint8_t>());
    else if (y.dtype() == DType::i8) write(y.data<int8_t>());
    else unsupported(ctx, "output dtype " + std::string(dtype_name(y.dtype())));
}

// What an integer convolution writes: i32 sums (ConvInteger), sums requantized to u8/i8 with an
// i32 bias (QLinearConv), or sums dequantized to f32 with an f32 bias (ConvIntegerToFloat).
enum class ConvOutput { sums, requantized, dequantized };

// Where a convolution's operands are among a node's inputs: ConvInteger (x, w, their zero
// points), QLinearConv (x, its scale and zero point, w, its scales and zero points, y's scale
// and zero point, the i32 bias) and ConvIntegerToFloat (x, w, the combined scales, the zero
// points, the f32 bias, y's scale and zero point).
// ChannelsLastQLinearConv and ChannelsLastConvIntegerToFloat are the forms over channel-last X
// and Y.
struct IntegerConvForm {
    size_t x, x_zero, w, w_zero;
    ConvOutput output;
    bool channels_last = false;
};
constexpr IntegerConvForm kConvInteger{0, 2, 1, 3, ConvOutput::sums};
constexpr IntegerConvForm kQLinearConv{0, 2, 3, 5, ConvOutput::requantized};
constexpr IntegerConvForm kChannelsLastQLinearConv{0, 2, 3, 5, ConvOutput::requantized, true};
constexpr IntegerConvForm kConvIntegerToFloat{0, 3, 1, 4, ConvOutput::dequantized};
constexpr IntegerConvForm kChannelsLastConvIntegerToFloat{0, 3, 1, 4, ConvOutput::dequantized, true};

// ConvIntegerToFloat where the packed kernel does not take it (groups, weights computed at run
// time): the direct loops' i32 sums, then each times its channel's scale plus the bias, through
// Y's grid if given; channel-last X and Y (ChannelsLastConvIntegerToFloat) through
// channel-first copies.
template <bool kChannelsLast>
void conv_integer_to_float_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const int64_t m = w.shape()[0];
    const int64_t per_channel = w.numel() / std::max<int64_t>(m, 1);
    const Shape x_shape = kChannelsLast ? channels_first(x.shape()) : x.shape();
    const std::vector<int32_t> acc =
        integer_conv(ctx, x_shape, w, widened_planes(ctx, 0, 3, x_shape, kChannelsLast), widen(ctx, 1, 4, per_channel));
    const Tensor& scale = ctx.input(2);
    const float* ps = scale.data<float>();
    const float* bias = ctx.has_input(5) ? ctx.input(5).data<float>() : nullptr;
    const std::optional<YGrid> grid = ctx.has_input(6) ? std::optional(YGrid::of(ctx.input(6), ctx.input(7))) : std::nullopt;
    Tensor& y = ctx.output(0);
    const int64_t images = x_shape[0], positions = y.numel() / std::max<int64_t>(images * m, 1);
    std::vector<float> planes(kChannelsLast ? acc.size() : 0);
    float* out = kChannelsLast ? planes.data() : y.data<float>();
    for (size_t i = 0; i < acc.size(); ++i) {
        const int64_t channel = static_cast<int64_t>(i) / positions % m;
        const float value = static_cast<float>(acc[i]) * ps[scale.numel() == 1 ? 0 : channel] + (bias ? bias[channel] : 0.0f);
        out[i] = grid ? grid->round(value) : value;
    }
    if (kChannelsLast) swap_last_two(planes.data(), images, m, positions, y.data<float>());
}

// requantized() on 8 sums: times the multiplier, rounded to nearest even, plus the zero point,
// clamped to [lowest, highest], as i32.
__attribute__((target("avx512f,avx512vl"))) inline __m256i requantize8(__m256i sums, __m512d multiplier, __m512d zero,
                                                                      __m512d lowest, __m512d highest) {
    const __m512d q = _mm512_add_pd(_mm512_roundscale_pd(_mm512_mul_pd(_mm512_cvtepi32_pd(sums), multiplier),
                                                         _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                                    zero);
    return _mm512_cvtpd_epi32(_mm512_min_pd(_mm512_max_pd(q, lowest), highest));
}

// A convolution of one group by constant weights as a product on the packed int8 kernel: each
// image's patches (im2col, a row per output position, taps·C long, u8; the padding holds x's
// zero point, so that it adds nothing) are A, the weights transposed to [taps·C, M] are B,
// packed once per session. The epilogue corrects for the zero points (as the packed matrix
// products do) and writes channel-major: the i32 sums, or with the bias, requantized.
class PackedIntegerConv final : public CompiledKernel {
public:
    PackedIntegerConv(const CompileContext& c, IntegerConvForm form) : form_(form) {
        const Tensor& w = *c.constant(form.w);
        out_channels_ = w.shape()[0];
        k_ = w.numel() / out_channels_;
        layout_ = int8_weight_layout(int8_kernel(), k_, out_channels_);
        const Int8WeightLayout layout = layout_;
        const int64_t m = out_channels_, k = k_;
        const int64_t channels = w.shape()[1], taps = k_ / channels;
        weight_ = c.prepacked(form.w, "int8-conv/" + std::string(int8_kernel_name(layout.kernel)),
                              [layout, m, k, channels, taps](const Tensor& value) {
            // W [M, C, taps] to B [taps·C, M] (tap-major, as the patches hold x: a pixel's channels
            // together), a u8 weight moved down by 128 to s8.
            std::vector<int8_t> transposed(static_cast<size_t>(k * m));
            const bool u8 = value.dtype() == DType::u8;
            const auto* bytes = static_cast<const uint8_t*>(value.raw_data());  // once: each data() call checks the tensor
            for (int64_t o = 0; o < m; ++o)
                for (int64_t ch = 0; ch < channels; ++ch)
                    for (int64_t t = 0; t < taps; ++t) {
                        const uint8_t v = bytes[(o * channels + ch) * taps + t];
                        transposed[static_cast<size_t>((t * channels + ch) * m + o)] =
                            static_cast<int8_t>(u8 ? int32_t{v} - 128 : static_cast<int8_t>(v));
                    }
            return pack_int8_weight(layout, transposed.data(), m);
        });
        const Tensor* zero = c.constant(form.w_zero);
        w_zero_.assign(static_cast<size_t>(m), w.dtype() == DType::u8 ? -128 : 0);
        if (zero)
            for (int64_t o = 0; o < m; ++o) w_zero_[static_cast<size_t>(o)] += int8_value(*zero, zero->numel() == 1 ? 0 : o);
        symmetric_weights_ = std::all_of(w_zero_.begin(), w_zero_.end(), [](int32_t z) { return z == 0; });
    }

    static bool takes(const CompileContext& c, IntegerConvForm form) {
        const NodeSignature& node = c.node();
        const Tensor* w = c.constant(form.w);
        const Shape& x = node.input_shapes[form.x];
        if (!w || w->rank() < 3 || x.rank() != w->rank() || node.attributes->get_int("group", 1) != 1) return false;
        const auto integer8 = [](DType t) { return t == DType::u8 || t == DType::i8; };
        if (!integer8(w->dtype()) || !integer8(node.input_dtypes[form.x])) return false;
        const auto present = [&](size_t i) { return i < node.inputs_present.size() && node.inputs_present[i]; };
        const int64_t m = w->shape()[0];
        if (present(form.x_zero) && node.input_shapes[form.x_zero].numel() != 1) return false;
        if (present(form.w_zero)) {
            const Tensor* zero = c.constant(form.w_zero);
            if (!zero || zero->dtype() != w->dtype() || (zero->numel() != 1 && zero->numel() != m)) return false;
        }
        if (form.output == ConvOutput::dequantized) {
            if (node.input_dtypes[2] != DType::f32 || (node.input_shapes[2].numel() != 1 && node.input_shapes[2].numel() != m))
                return false;
            if (present(5) && (node.input_dtypes[5] != DType::f32 || node.input_shapes[5].numel() != m)) return false;
            if (present(6) && (node.input_dtypes[6] != DType::f32 || !integer8(node.input_dtypes[7]))) return false;
        }
        if (form.output == ConvOutput::requantized) {
            for (size_t i : {size_t{1}, size_t{4}, size_t{6}})
                if (node.input_dtypes[i] != DType::f32) return false;
            if (node.input_shapes[1].numel() != 1 || node.input_shapes[6].numel() != 1 || node.input_shapes[7].numel() != 1 ||
                (node.input_shapes[4].numel() != 1 && node.input_shapes[4].numel() != m))
                return false;
            if (!integer8(node.output_dtypes[0]) || node.input_dtypes[7] != node.output_dtypes[0]) return false;
            if (present(8) && (node.input_dtypes[8] != DType::i32 || node.input_shapes[8].numel() != m)) return false;
        }
        return w->numel() / m <= 65536;  // i32 sums of u8 · s8 products cannot overflow
    }

    void run(KernelContext& ctx) const override {
        const Tensor& x = ctx.input(form_.x);
        Tensor& y = ctx.output(0);
        if (y.numel() == 0) return;
        const Shape x_shape = form_.channels_last ? channels_first(x.shape()) : x.shape();
        const auto& xd = x_shape.dims();
        const size_t spatial = xd.size() - 2;
        const ConvAxes g = conv_axes(ctx, x_shape, ctx.input(form_.w).shape());
        const std::vector<Axis>& axes = g.axes;
        const int64_t in_size = g.in_size, taps = g.taps, positions = g.positions;
        const int64_t images = xd[0], channels = xd[1], m = out_channels_, k = k_, stride = int8_row_stride(layout_);
        const bool signed_x = x.dtype() == DType::i8;
        const int32_t x_zero = ctx.has_input(form_.x_zero) ? int8_value(ctx.input(form_.x_zero), 0) : 0;
        const auto pad = static_cast<uint8_t>(x_zero);  // the zero point's bits, as x stores them
        Epilogue state{packed_column_sums(layout_, weight_.data<uint8_t>()), w_zero_.data(), nullptr, x_zero + (signed_x ? 128 : 0),
                       k, positions, m, nullptr, y.dtype()};
        state.position_major = form_.channels_last;
        state.symmetric = symmetric_weights_;
        std::vector<double> multipliers;
        std::vector<float> narrow_multipliers, scales, bias;
        if (form_.output == ConvOutput::dequantized) {
            const Tensor& scale = ctx.input(2);
            for (int64_t o = 0; o < m; ++o) scales.push_back(scale.data<float>()[scale.numel() == 1 ? 0 : o]);
            bias.assign(static_cast<size_t>(m), 0.0f);
            if (ctx.has_input(5)) std::copy_n(ctx.input(5).data<float>(), m, bias.data());
            state.scales = scales.data();
            state.float_bias = bias.data();
            if (ctx.has_input(6)) state.y_grid = YGrid::of(ctx.input(6), ctx.input(7));
            state.vector_float = has_avx512f_vl() && k <= 32768;
        }
        if (form_.output == ConvOutput::requantized) {
            const Tensor& w_scale = ctx.input(4);
            const double x_scale = ctx.input(1).data<float>()[0], y_scale = ctx.input(6).data<float>()[0];
            for (int64_t o = 0; o < m; ++o)
                multipliers.push_back(x_scale * w_scale.data<float>()[w_scale.numel() == 1 ? 0 : o] / y_scale);
            state.multipliers = multipliers.data();
            for (double multiplier : multipliers) narrow_multipliers.push_back(static_cast<float>(multiplier));
            state.narrow_multipliers = narrow_multipliers.data();
            state.y_zero = int8_value(ctx.input(7), 0);
            state.bias = ctx.has_input(8) ? ctx.input(8).data<int32_t>() : nullptr;
        }
        // x's image channel-last (each pixel's channels together; so it comes from
        // ChannelsLastQLinearConv), then each output position's patch is its taps' pixels one
        // after another: whole channel runs copied, not gathered. 8-bit output on AVX-512 is
        // stored position-major (each tile's rows whole): straight into a channel-last Y, else
        // staged and turned channel-major 16x16 bytes at a time.
        // (AVX-512 BW comes with the VNNI and AMX kernels; INFER_INT8_KERNEL=avx2 takes the plain writes too.)
        const bool staged = form_.output == ConvOutput::requantized &&
                            (layout_.kernel == Int8Kernel::avx512_vnni || layout_.kernel == Int8Kernel::amx_int8);
        const int64_t staged_bytes = staged && !form_.channels_last ? positions * m : 0;
        const int64_t pixel_bytes = form_.channels_last ? 0 : channels * in_size;
        // With every weight zero point 0 (symmetric s8 weights, as quantize_static writes them)
        // the sums need no row sums of x, and an unsigned x whose rows are whole groups long is
        // read by the product as it is: no copy that pads the rows and sums them.
        const bool rows_as_they_are = symmetric_weights_ && !signed_x && stride == k;
        // Channel-last, the images' rows follow one another in X and in Y: a layer with few
        // output positions (a ResNet's last stage, 7x7) takes several images' rows as one
        // product of about 1024 rows, so that its weights (MBs, past L2) are read once per
        // chunk rather than once per image.
        const int64_t chunk = form_.channels_last ? std::clamp<int64_t>((1024 + positions - 1) / positions, 1, images) : 1;
        const int64_t chunk_rows = chunk * positions;
        const int64_t row_bytes = rows_as_they_are ? 0 : chunk_rows * stride;
        // The workspace's parts, each from a 64-byte boundary (the row sums are i32).
        const auto aligned = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
        const int64_t patches_at = aligned(pixel_bytes), rows_at = patches_at + aligned(chunk_rows * k),
                      sums_at = rows_at + aligned(row_bytes), staging_at = sums_at + aligned(chunk_rows * int64_t{sizeof(int32_t)});
        auto* workspace = static_cast<uint8_t*>(ctx.workspace(static_cast<size_t>(staging_at + staged_bytes)));
        uint8_t* patches = workspace + patches_at;
        uint8_t* rows = workspace + rows_at;
        auto* row_sums = reinterpret_cast<int32_t*>(workspace + sums_at);
        uint8_t* staging = workspace + staging_at;
        state.row_sums = row_sums;
        if (rows_as_they_are) std::fill_n(row_sums, chunk_rows, 0);  // times a zero point of 0
        const auto* px = static_cast<const uint8_t*>(x.raw_data());
        const bool pointwise = taps == 1 && std::all_of(axes.begin(), axes.end(), [](const Axis& a) {
            return a.stride == 1 && a.pad_begin == 0 && a.out == a.in;
        });
        for (int64_t first = 0; first < images; first += chunk) {
          const int64_t count = std::min(chunk, images - first);
          for (int64_t n = first; n < first + count; ++n) {
            const uint8_t* image = px + n * channels * in_size;
            uint8_t* const image_patches = patches + (n - first) * positions * k;
            const uint8_t* pixels = form_.channels_last ? image : workspace;
            if (!form_.channels_last) transpose_byte_matrix(image, channels, in_size, workspace);
            const auto copy_pixel = [&](uint8_t* patch, bool inside, int64_t offset) {
                if (channels < 16) {  // an image's 3 colour channels: no call per tap
                    const uint8_t* from = pixels + offset * channels;
                    for (int64_t c = 0; c < channels; ++c) patch[c] = inside ? from[c] : pad;
                } else if (inside) {
                    std::memcpy(patch, pixels + offset * channels, static_cast<size_t>(channels));
                } else {
                    std::memset(patch, pad, static_cast<size_t>(channels));
                }
            };
            if (pointwise) {
                // A 1x1 kernel without stride or padding: each pixel's channels are its patch.
            } else if (spatial == 2) {  // images: the taps' coordinates from two axes, without the general walk
                const Axis &ah = axes[0], &aw = axes[1];
                // Channel-last, a kernel row's taps (dilation 1) are one run of kernel·C bytes: one
                // copy per kernel row where the row lies inside the image (the 3-colour 7x7 stem
                // had built its patches 3 bytes at a time, 2.5x ONNX Runtime's time for that layer).
                const int64_t row_bytes = aw.kernel * channels;
                parallel_for(positions, grain_for(k), [&](int64_t begin, int64_t end) {
                    for (int64_t o = begin; o < end; ++o) {
                        const int64_t oh = o / aw.out, ow = o % aw.out;
                        const int64_t iw0 = ow * aw.stride - aw.pad_begin;
                        const bool columns_inside = aw.dilation == 1 && iw0 >= 0 && iw0 + aw.kernel <= aw.in;
                        uint8_t* patch = image_patches + o * k;
                        for (int64_t kh = 0; kh < ah.kernel; ++kh) {
                            const int64_t ih = oh * ah.stride - ah.pad_begin + kh * ah.dilation;
                            const bool row_inside = ih >= 0 && ih < ah.in;
                            if (!row_inside || columns_inside) {
                                if (row_inside) std::memcpy(patch, pixels + (ih * aw.in + iw0) * channels, static_cast<size_t>(row_bytes));
                                else std::memset(patch, pad, static_cast<size_t>(row_bytes));
                                patch += row_bytes;
                                continue;
                            }
                            for (int64_t kw = 0; kw < aw.kernel; ++kw, patch += channels) {
                                const int64_t iw = ow * aw.stride - aw.pad_begin + kw * aw.dilation;
                                const bool inside = row_inside && iw >= 0 && iw < aw.in;
                                copy_pixel(patch, inside, ih * aw.in + iw);
                            }
                        }
                    }
                });
            } else {
            parallel_for(positions, grain_for(k), [&](int64_t begin, int64_t end) {
                std::vector<int64_t> at(spatial), tap(spatial);
                for (int64_t o = begin; o < end; ++o) {
                    for (size_t d = spatial, rest = static_cast<size_t>(o); d-- > 0;) {
                        at[d] = static_cast<int64_t>(rest) % axes[d].out;
                        rest /= static_cast<size_t>(axes[d].out);
                    }
                    uint8_t* patch = image_patches + o * k;
                    std::fill(tap.begin(), tap.end(), 0);
                    for (int64_t t = 0; t < taps; ++t, patch += channels) {
                        int64_t offset = 0;
                        bool inside = true;
                        for (size_t d = 0; d < spatial; ++d) {
                            const Axis& a = axes[d];
                            const int64_t i = at[d] * a.stride - a.pad_begin + tap[d] * a.dilation;
                            inside = inside && i >= 0 && i < a.in;
                            offset = offset * a.in + i;
                        }
                        copy_pixel(patch, inside, offset);
                        for (size_t d = spatial; d-- > 0;) {  // the next tap, last axis fastest
                            if (++tap[d] < axes[d].kernel) break;
                            tap[d] = 0;
                        }
                    }
                }
            });
            }
          }
          // A 1x1 layer reads the pixels themselves: the chunk's images, or the one image turned channel-last.
          const uint8_t* a = !pointwise ? patches : form_.channels_last ? px + first * channels * in_size : workspace;
          const int64_t a_rows = count * positions;
          if (!rows_as_they_are) {
              pack_int8_rows(a, a_rows, k, stride, signed_x, rows, row_sums);
              a = rows;
          }
          state.out = static_cast<char*>(y.raw_data()) + static_cast<size_t>(first * m * positions) * dtype_size(y.dtype());
          if (staged) state.staging = form_.channels_last ? static_cast<uint8_t*>(state.out) : staging;
          gemm_u8s8(layout_, weight_.data<uint8_t>(), a, a_rows, &Epilogue::tile, &state);
          if (staged && !form_.channels_last) transpose_byte_matrix(staging, positions, m, static_cast<uint8_t*>(state.out));
        }
    }

    size_t workspace_bytes() const override { return 0; }  // grows on the first run (positions depend on x)

private:
    // The packed matrix products' correction, written channel-major: y[channel][position]. A
    // tile's rows (positions) are corrected and requantized a row at a time, contiguous in
    // channels, then written out column by column.
    struct Epilogue {
        const int32_t *column_sums, *w_zero, *row_sums;
        int32_t x_zero;
        int64_t k, positions, out_channels;
        void* out;
        DType out_dtype;
        const double* multipliers = nullptr;  // QLinearConv
        int32_t y_zero = 0;
        const int32_t* bias = nullptr;
        const float *scales = nullptr, *float_bias = nullptr;  // ConvIntegerToFloat
        std::optional<YGrid> y_grid;
        // Where dequantized output takes the 16-lane path: AVX-512 and the corrected sums exact
        // in i32 (|Σ (x - zx)(w - zw)| ≤ k · 255², wrapping i32 arithmetic then gives them
        // exactly).
        bool vector_float = false;
        uint8_t* staging = nullptr;  // requantized output, position-major [positions, channels]
        bool position_major = false;  // write() stores Y [positions, channels] (channel-last)
        bool symmetric = false;       // every weight zero point 0
        const float* narrow_multipliers = nullptr;  // the multipliers in f32
        static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const int32_t* acc, int64_t ld) {
            const auto& e = *static_cast<const Epilogue*>(self);
            if (e.vector_float) return e.write_float_avx512(row0, rows, col0, cols, acc, ld);
            if (e.staging)
                return e.symmetric ? e.stage_requantized_avx512<true>(row0, rows, col0, cols, acc, ld)
                                   : e.stage_requantized_avx512<false>(row0, rows, col0, cols, acc, ld);
            if (e.scales) return e.write(row0, rows, col0, cols, acc, ld, static_cast<float*>(e.out));
            if (!e.multipliers) return e.write(row0, rows, col0, cols, acc, ld, static_cast<int32_t*>(e.out));
            if (e.out_dtype == DType::u8) return e.write(row0, rows, col0, cols, acc, ld, static_cast<uint8_t*>(e.out));
            e.write(row0, rows, col0, cols, acc, ld, static_cast<int8_t*>(e.out));
        }
        // The zero points' share of 16 channels' sums, taken off as Σ(x - zx)(w - zw) needs:
        // k·zx·zw - zx·Σw (plus an i32 bias) is the same for every row, -zw·Σx per row.
        struct ZeroPointCorrection {
            __m512i zw, fixed;
            __attribute__((target("avx512f"))) __m512i apply(__m512i sums, int32_t row_sum) const {
                return _mm512_sub_epi32(_mm512_add_epi32(sums, fixed), _mm512_mullo_epi32(zw, _mm512_set1_epi32(row_sum)));
            }
        };
        __attribute__((target("avx512f"))) ZeroPointCorrection correction_of(__mmask16 mask, int64_t channel,
                                                                            __m512i bias_v) const {
            const __m512i zw = _mm512_maskz_loadu_epi32(mask, w_zero + channel);
            const __m512i column_sum = _mm512_maskz_loadu_epi32(mask, column_sums + channel);
            const __m512i fixed = _mm512_sub_epi32(_mm512_mullo_epi32(_mm512_set1_epi32(static_cast<int32_t>(k * x_zero)), zw),
                                                   _mm512_mullo_epi32(_mm512_set1_epi32(x_zero), column_sum));
            return {zw, _mm512_add_epi32(fixed, bias_v)};
        }
        // The tile's rows are output positions and its columns channels. Y channel-last
        // (ChannelsLastConvIntegerToFloat): each row's 16 channels at a time corrected, scaled
        // and biased in vectors and stored. Y channel-major: the same, then the block of
        // rows turned into columns eight channels at a time (8x8 transposes) and each channel's
        // run of positions stored at once (the scalar loop below was a tenth of an int8 ResNet-50
        // run; scattering each value was slower still).
        __attribute__((target("avx512f,avx512vl,avx2"))) void write_float_avx512(int64_t row0, int64_t rows, int64_t col0,
                                                                        int64_t cols, const int32_t* acc, int64_t ld) const {
            alignas(64) float values[8][kInt8TileColumns];  // rows past `rows` are never stored
            for (int64_t c = 0; c < cols; c += 16) {
                const auto mask = static_cast<__mmask16>(cols - c >= 16 ? 0xFFFF : (1u << (cols - c)) - 1u);
                const int64_t channel = col0 + c;
                const __m512 scale = _mm512_maskz_loadu_ps(mask, scales + channel);
                const __m512 bias_v = _mm512_maskz_loadu_ps(mask, float_bias + channel);
                const ZeroPointCorrection correction = correction_of(mask, channel, _mm512_setzero_si512());
                for (int64_t r = 0; r < rows; ++r) {
                    const __m512i sums = correction.apply(_mm512_maskz_loadu_epi32(mask, acc + r * ld + c), row_sums[row0 + r]);
                    __m512 value = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), scale, bias_v);
                    if (y_grid) {  // YGrid::round in 16 lanes: the same division, rounding and clamp
                        const __m512 step = _mm512_set1_ps(y_grid->scale), zero = _mm512_set1_ps(y_grid->zero);
                        const __m512 q = _mm512_add_ps(
                            _mm512_roundscale_ps(_mm512_div_ps(value, step), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zero);
                        const __m512 clamped = _mm512_min_ps(_mm512_max_ps(q, _mm512_set1_ps(y_grid->lowest)),
                                                             _mm512_set1_ps(y_grid->highest));
                        value = _mm512_mul_ps(_mm512_sub_ps(clamped, zero), step);
                    }
                    if (position_major)  // channel-last Y: the row's channels where they belong
                        _mm512_mask_storeu_ps(static_cast<float*>(out) + (row0 + r) * out_channels + channel, mask, value);
                    else
                        _mm512_store_ps(&values[r][c], value);
                }
            }
            if (position_major) return;
            const auto lanes = static_cast<__mmask8>((1u << rows) - 1u);  // a k-mask store: vmaskmovps is slow on AMD
            float* y = static_cast<float*>(out) + col0 * positions + row0;
            for (int64_t c = 0; c < cols; c += 8) {
                __m256 block[8];
                for (int r = 0; r < 8; ++r) block[r] = _mm256_load_ps(&values[r][c]);
                transpose8x8(block);  // block[j]: channel c + j's positions row0...
                for (int64_t j = 0; j < 8 && c + j < cols; ++j) _mm256_mask_storeu_ps(y + (c + j) * positions, lanes, block[j]);
            }
        }

        // QLinearConv's output, 16 channels at a time: the corrected sums plus the i32 bias, times
        // the multiplier rounded to nearest even, plus Y's zero point, saturated, each row's bytes
        // stored whole into the staging rows. requantized() decides in f64; here the product is
        // taken in f32 (half the work) and kept wherever it cannot round otherwise. The f32
        // product t is within 3·2^-24·|t| of the f64 one (the sums' conversion, the multiplier's
        // and the product's rounding, each relative); where |t| < 512 that is below 2^-13, and
        // where |t| >= 512 a step either way saturates all the same (|Y's zero point| <= 255). So
        // t farther than 2^-11 from a half-way point rounds as the f64 product does; a vector
        // with a lane nearer takes f64, and the bytes are requantized()'s always. kSymmetric:
        // every weight zero point 0, no row-sum correction.
        template <bool kSymmetric>
        __attribute__((target("avx512f,avx512vl,avx512bw"))) void stage_requantized_avx512(
            int64_t row0, int64_t rows, int64_t col0, int64_t cols, const int32_t* acc, int64_t ld) const {
            const bool u8 = out_dtype == DType::u8;
            const __m512d lowest = _mm512_set1_pd(u8 ? 0.0 : -128.0), highest = _mm512_set1_pd(u8 ? 255.0 : 127.0);
            const __m512d zero = _mm512_set1_pd(y_zero);
            const __m512 lowest_narrow = _mm512_set1_ps(u8 ? 0.0f : -128.0f), highest_narrow = _mm512_set1_ps(u8 ? 255.0f : 127.0f);
            const __m512 zero_narrow = _mm512_set1_ps(static_cast<float>(y_zero)), clear_of_half = _mm512_set1_ps(0.5f - 0x1p-11f);
            for (int64_t c = 0; c < cols; c += 16) {
                const auto mask = static_cast<__mmask16>(cols - c >= 16 ? 0xFFFF : (1u << (cols - c)) - 1u);
                const int64_t channel = col0 + c;
                const ZeroPointCorrection correction =
                    correction_of(mask, channel, bias ? _mm512_maskz_loadu_epi32(mask, bias + channel) : _mm512_setzero_si512());
                const __m512d low_multiplier = _mm512_maskz_loadu_pd(static_cast<__mmask8>(mask), multipliers + channel);
                const __m512d high_multiplier = _mm512_maskz_loadu_pd(static_cast<__mmask8>(mask >> 8), multipliers + channel + 8);
                const __m512 narrow_multiplier = _mm512_maskz_loadu_ps(mask, narrow_multipliers + channel);
                for (int64_t r = 0; r < rows; ++r) {
                    const __m512i loaded = _mm512_maskz_loadu_epi32(mask, acc + r * ld + c);
                    const __m512i sums =
                        kSymmetric ? _mm512_add_epi32(loaded, correction.fixed) : correction.apply(loaded, row_sums[row0 + r]);
                    // t plus Y's zero point in one rounding (the zero point is an integer: it moves
                    // no half step), within 2^-13 + 2^-15 of the exact sum where |t| < 512.
                    const __m512 t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums), narrow_multiplier, zero_narrow);
                    const __m512 rounded = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                    const __mmask16 doubtful = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(t, rounded)), clear_of_half, _CMP_GE_OQ);
                    __m512i both;
                    if ((doubtful & mask) == 0) {
                        both = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(rounded, lowest_narrow), highest_narrow));
                    } else {
                        const __m256i low = requantize8(_mm512_castsi512_si256(sums), low_multiplier, zero, lowest, highest);
                        const __m256i high = requantize8(_mm512_extracti64x4_epi64(sums, 1), high_multiplier, zero, lowest, highest);
                        both = _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
                    }
                    // Saturated already: the low byte of each i32 is the value (two's complement for i8).
                    // Narrowed in a register, then stored: vpmovdb straight to memory was most of
                    // this function's time on Zen 4.
                    const __m128i bytes = _mm512_cvtepi32_epi8(both);
                    uint8_t* to = staging + (row0 + r) * out_channels + channel;
                    if (mask == 0xFFFF) _mm_storeu_si128(reinterpret_cast<__m128i*>(to), bytes);
                    else _mm_mask_storeu_epi8(to, mask, bytes);
                }
            }
        }

        template <class T>
        void write(int64_t row0, int64_t rows, int64_t col0, int64_t cols, const int32_t* acc, int64_t ld, T* y) const {
            int32_t sums[kInt8TileColumns];
            T values[kInt8TileRows][kInt8TileColumns];
            for (int64_t r = 0; r < rows; ++r) {
                const int64_t row_sum = row_sums[row0 + r];
                for (int64_t c = 0; c < cols; ++c) {
                    const int64_t channel = col0 + c, zw = w_zero[channel];
                    sums[c] = static_cast<int32_t>(acc[r * ld + c] - int64_t{x_zero} * column_sums[channel] + k * x_zero * zw -
                                                   zw * row_sum + (bias ? bias[channel] : 0));
                }
                if constexpr (std::is_same_v<T, int32_t>) {
                    std::copy_n(sums, cols, values[r]);
                } else if constexpr (std::is_same_v<T, float>) {
                    for (int64_t c = 0; c < cols; ++c) {
                        const float value = static_cast<float>(sums[c]) * scales[col0 + c] + float_bias[col0 + c];
                        values[r][c] = y_grid ? y_grid->round(value) : value;
                    }
                } else {
                    requantize_row(sums, multipliers + col0, y_zero, values[r], cols);
                }
            }
            if (position_major) {
                for (int64_t r = 0; r < rows; ++r) std::copy_n(values[r], cols, y + (row0 + r) * out_channels + col0);
                return;
            }
            for (int64_t c = 0; c < cols; ++c)
                for (int64_t r = 0; r < rows; ++r) y[(col0 + c) * positions + row0 + r] = values[r][c];
        }
    };

    IntegerConvForm form_;
    int64_t out_channels_ = 0, k_ = 0;
    Int8WeightLayout layout_{};
    Tensor weight_;
    std::vector<int32_t> w_zero_;
    bool symmetric_weights_ = false;  // every w_zero_ 0: x's row sums are not needed
};

// The packed kernel where it takes the node, else the direct loops.
KernelFactory integer_conv_kernel(IntegerConvForm form, Kernel plain) {
    return [form, plain](const CompileContext& c) -> std::unique_ptr<CompiledKernel> {
        if (PackedIntegerConv::takes(c, form)) return std::make_unique<PackedIntegerConv>(c, form);
        return std::make_unique<FunctionKernel>(plain);
    };
}

}  // namespace

void register_integer_conv_kernels(KernelRegistry& r) {
    for (DType t : {DType::u8, DType::i8}) {
        r.add_compiled("ConvInteger", t, integer_conv_kernel(kConvInteger, conv_integer_kernel));
        r.add_compiled("QLinearConv", t, integer_conv_kernel(kQLinearConv, qlinear_conv_kernel<false>));
        r.add_compiled("ChannelsLastQLinearConv", t, integer_conv_kernel(kChannelsLastQLinearConv, qlinear_conv_kernel<true>));
        r.add_compiled("ConvIntegerToFloat", t, integer_conv_kernel(kConvIntegerToFloat, conv_integer_to_float_kernel<false>));
        r.add_compiled("ChannelsLastConvIntegerToFloat", t,
                       integer_conv_kernel(kChannelsLastConvIntegerToFloat, conv_integer_to_float_kernel<true>));
    }
}

}  // namespace infer::cpu
