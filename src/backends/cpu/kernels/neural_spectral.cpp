// Spectral transforms: DFT (forward, inverse, one-sided, and the inverse of a one-sided spectrum),
// STFT (windowed frames, each transformed) and MelWeightMatrix (triangular mel filters over the
// one-sided bins). Sums are direct (O(length²) per line, in double with a table of twiddles), which
// suits the frame lengths of audio front ends; the outputs match numpy's FFTs to rounding.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

namespace infer::cpu {

namespace {

// cos and sin of 2π m / length for m in [0, length).
struct Twiddles {
    std::vector<double> cos, sin;
    explicit Twiddles(int64_t length) : cos(static_cast<size_t>(length)), sin(static_cast<size_t>(length)) {
        for (int64_t m = 0; m < length; ++m) {
            const double angle = 2 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(length);
            cos[static_cast<size_t>(m)] = std::cos(angle);
            sin[static_cast<size_t>(m)] = std::sin(angle);
        }
    }
};

// bins_out bins of the length-point transform of `count` samples (re, im; the rest zeros):
// X[k] = Σ x[n] e^(∓2πi kn/length), the inverse scaled by 1/length.
void transform(const double* re, const double* im, int64_t count, int64_t length, bool inverse, int64_t bins_out,
               const Twiddles& w, double* out_re, double* out_im) {
    const double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
    count = std::min(count, length);
    for (int64_t k = 0; k < bins_out; ++k) {
        double sum_re = 0, sum_im = 0;
        for (int64_t n = 0; n < count; ++n) {
            const auto m = static_cast<size_t>((k * n) % length);
            const double c = w.cos[m], s = sign * w.sin[m];
            sum_re += re[n] * c - im[n] * s;
            sum_im += re[n] * s + im[n] * c;
        }
        out_re[k] = sum_re * scale;
        out_im[k] = sum_im * scale;
    }
}

// The real signal of length `length` whose one-sided spectrum starts with the `count` bins given
// (numpy's irfft: the missing bins zero, the imaginary parts of DC and Nyquist ignored).
void inverse_one_sided(const double* re, const double* im, int64_t count, int64_t length, const Twiddles& w, double* out) {
    const int64_t half = length / 2;
    for (int64_t n = 0; n < length; ++n) {
        double sum = count > 0 ? re[0] : 0.0;
        for (int64_t k = 1; k <= half && k < count; ++k) {
            const auto m = static_cast<size_t>((k * n) % length);
            const double term = re[k] * w.cos[m] - im[k] * w.sin[m];
            sum += (length % 2 == 0 && k == half) ? re[k] * w.cos[m] : 2 * term;
        }
        out[n] = sum / static_cast<double>(length);
    }
}

template <class T>
void dft_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const auto& dims = x.shape().dims();
    const auto rank = static_cast<int64_t>(dims.size());
    int64_t axis = ctx.attrs().get_int("axis", 1);
    if (axis < 0) axis += rank;
    const bool inverse = ctx.attrs().get_int("inverse", 0) != 0, onesided = ctx.attrs().get_int("onesided", 0) != 0;
    const int64_t count = dims[static_cast<size_t>(axis)], channels = dims.back();
    const int64_t bins_out = y.shape()[static_cast<size_t>(axis)], out_channels = y.shape().dims().back();
    const int64_t length = ctx.has_input(1) ? read_ints(ctx, 1).at(0) : (inverse && onesided ? 2 * (count - 1) : count);
    if (length < 1) invalid_argument(ctx, "the transform length must be positive");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= dims[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= dims[static_cast<size_t>(d)];
    const Twiddles w(length);
    const T* in = x.data<T>();
    T* out = y.data<T>();
    parallel_for(outer * inner, grain_for(length * count), [&](int64_t begin, int64_t end) {
        std::vector<double> re(static_cast<size_t>(count)), im(static_cast<size_t>(count));
        std::vector<double> out_re(static_cast<size_t>(std::max(bins_out, length))), out_im(out_re.size());
        for (int64_t line = begin; line < end; ++line) {
            const int64_t o = line / inner, i = line % inner;
            for (int64_t n = 0; n < count; ++n) {
                const T* at = in + ((o * count + n) * inner + i) * channels;
                re[static_cast<size_t>(n)] = static_cast<double>(at[0]);
                im[static_cast<size_t>(n)] = channels == 2 ? static_cast<double>(at[1]) : 0.0;
            }
            if (inverse && onesided)
                inverse_one_sided(re.data(), im.data(), count, length, w, out_re.data());
            else
                transform(re.data(), im.data(), count, length, inverse, bins_out, w, out_re.data(), out_im.data());
            for (int64_t k = 0; k < bins_out; ++k) {
                T* to = out + ((o * bins_out + k) * inner + i) * out_channels;
                to[0] = static_cast<T>(out_re[static_cast<size_t>(k)]);
                if (out_channels == 2) to[1] = static_cast<T>(out_im[static_cast<size_t>(k)]);
            }
        }
    });
}

template <class T>
void stft_kernel(KernelContext& ctx) {
    const Tensor& signal = ctx.input(0);
    Tensor& y = ctx.output(0);
    const int64_t batches = signal.shape()[0], samples = signal.shape()[1], channels = signal.shape()[2];
    const int64_t step = read_ints(ctx, 1).at(0);
    const int64_t frames = y.shape()[1], bins = y.shape()[2];
    const int64_t frame = ctx.has_input(2) ? ctx.input(2).shape()[0] : read_ints(ctx, 3).at(0);
    const T* window = ctx.has_input(2) ? ctx.input(2).data<T>() : nullptr;
    const T* in = signal.data<T>();
    T* out = y.data<T>();
    const Twiddles w(frame);
    parallel_for(batches * frames, grain_for(frame * bins), [&](int64_t begin, int64_t end) {
        std::vector<double> re(static_cast<size_t>(frame)), im(re.size()), out_re(static_cast<size_t>(bins)), out_im(out_re.size());
        for (int64_t bf = begin; bf < end; ++bf) {
            const int64_t b = bf / frames, f = bf % frames;
            for (int64_t n = 0; n < frame; ++n) {
                const T* at = in + (b * samples + f * step + n) * channels;
                const double weight = window ? static_cast<double>(window[n]) : 1.0;
                re[static_cast<size_t>(n)] = static_cast<double>(at[0]) * weight;
                im[static_cast<size_t>(n)] = channels == 2 ? static_cast<double>(at[1]) * weight : 0.0;
            }
            transform(re.data(), im.data(), frame, frame, false, bins, w, out_re.data(), out_im.data());
            for (int64_t k = 0; k < bins; ++k) {
                T* to = out + (bf * bins + k) * 2;
                to[0] = static_cast<T>(out_re[static_cast<size_t>(k)]);
                to[1] = static_cast<T>(out_im[static_cast<size_t>(k)]);
            }
        }
    });
}

// Triangular filters between mel-spaced edges, as ONNX's reference builds them: num_mel_bins + 2
// edges evenly spaced in mel from lower to upper edge, mapped to one-sided bin indices.
void mel_weight_matrix_kernel(KernelContext& ctx) {
    const int64_t mel_bins = read_ints(ctx, 0).at(0), dft_length = read_ints(ctx, 1).at(0);
    const int64_t sample_rate = read_ints(ctx, 2).at(0);
    if (sample_rate <= 0) invalid_argument(ctx, "sample_rate must be positive");
    const auto scalar = [&](size_t i) {
        const Tensor& t = ctx.input(i);
        return t.dtype() == DType::f64 ? *t.data<double>() : static_cast<double>(t.to_vector<float>().at(0));
    };
    const double lower = scalar(3), upper = scalar(4);
    const auto to_mel = [](double hz) { return 2595.0 * std::log1p(hz / 700.0) / std::log(10.0); };
    const double low_mel = to_mel(lower), step = (to_mel(upper) - low_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> edges(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
        const double hz = 700.0 * std::expm1((static_cast<double>(i) * step + low_mel) / 2595.0 * std::log(10.0));
        edges[static_cast<size_t>(i)] = static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate)));
    }
    const int64_t bins = dft_length / 2 + 1;
    std::vector<double> weights(static_cast<size_t>(bins * mel_bins), 0.0);
    const auto set = [&](int64_t bin, int64_t mel, double value) {
        if (bin < 0 || bin >= bins) invalid_argument(ctx, "a mel edge falls outside the spectrum's bins (upper_edge_hertz above the Nyquist frequency?)");
        weights[static_cast<size_t>(bin * mel_bins + mel)] = value;
    };
    for (int64_t m = 0; m < mel_bins; ++m) {
        const int64_t left = edges[static_cast<size_t>(m)], center = edges[static_cast<size_t>(m + 1)], right = edges[static_cast<size_t>(m + 2)];
        if (center == left) set(center, m, 1.0);
        else
            for (int64_t j = left; j <= center; ++j) set(j, m, static_cast<double>(j - left) / static_cast<double>(center - left));
        for (int64_t j = center; j < right; ++j) set(j, m, static_cast<double>(right - j) / static_cast<double>(right - center));
    }
    Tensor& y = ctx.output(0);
    if (y.dtype() == DType::f64) std::copy(weights.begin(), weights.end(), y.data<double>());
    else if (y.dtype() == DType::f32) std::transform(weights.begin(), weights.end(), y.data<float>(), [](double v) { return static_cast<float>(v); });
    else unsupported(ctx, "output dtype " + std::string(dtype_name(y.dtype())));
}

}  // namespace

void register_spectral_kernels(KernelRegistry& r) {
    add_floating(r, "DFT", dft_kernel<float>);
    r.add("DFT", DType::f64, dft_kernel<double>);
    add_floating(r, "STFT", stft_kernel<float>);
    r.add("STFT", DType::f64, stft_kernel<double>);
    for (DType t : {DType::i32, DType::i64}) r.add("MelWeightMatrix", t, mel_weight_matrix_kernel);
}

}  // namespace infer::cpu
