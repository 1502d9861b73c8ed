// Float64 references of the neural-network layers family, written from the ONNX specification.
#include "reference_neural.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <stdexcept>

namespace ref {

namespace {
int64_t positions_of(const infer::Shape& s) {
    int64_t p = 1;
    for (size_t i = 2; i < s.rank(); ++i) p *= s[i];
    return p;
}
double sigmoid_of(double v) { return 1 / (1 + std::exp(-v)); }
}  // namespace

RefTensor nll_loss(const RefTensor& input, const RefTensor& target, const RefTensor* weight,
                   const std::string& reduction, std::optional<int64_t> ignore_index) {
    const int64_t n = input.shape[0], c = input.shape[1], d = positions_of(input.shape);
    std::vector<double> loss(static_cast<size_t>(n * d)), w(loss.size());
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < d; ++j) {
            const auto t = static_cast<int64_t>(target.data[i * d + j]);
            if (ignore_index && t == *ignore_index) continue;
            w[i * d + j] = weight ? weight->data[t] : 1.0;
            loss[i * d + j] = -input.data[(i * c + t) * d + j] * w[i * d + j];
        }
    if (reduction == "none") return {target.shape, loss};
    double total = 0, weights = 0;
    for (size_t i = 0; i < loss.size(); ++i) {
        total += loss[i];
        weights += w[i];
    }
    return {infer::Shape{}, {reduction == "sum" ? total : total / weights}};
}

std::vector<RefTensor> softmax_cross_entropy(const RefTensor& scores, const RefTensor& target,
                                             const RefTensor* weight, const std::string& reduction,
                                             std::optional<int64_t> ignore_index) {
    const int64_t n = scores.shape[0], c = scores.shape[1], d = positions_of(scores.shape);
    RefTensor log_prob = scores;
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < d; ++j) {
            double sum = 0;
            for (int64_t k = 0; k < c; ++k) sum += std::exp(scores.data[(i * c + k) * d + j]);
            for (int64_t k = 0; k < c; ++k) log_prob.data[(i * c + k) * d + j] -= std::log(sum);
        }
    return {nll_loss(log_prob, target, weight, reduction, ignore_index), log_prob};
}

RefTensor conv_transpose(const RefTensor& x, const RefTensor& w, const RefTensor* bias,
                         const TransposedWindow& win) {
    const size_t spatial = x.shape.rank() - 2;
    const int64_t images = x.shape[0], channels = x.shape[1], group_out = w.shape[1];
    const int64_t out_channels = group_out * win.group, group_in = channels / win.group;
    Dims out_dims{images, out_channels};
    for (size_t i = 0; i < spatial; ++i)
        out_dims.push_back(win.strides[i] * (x.shape[i + 2] - 1) + win.output_padding[i] +
                           (w.shape[i + 2] - 1) * win.dilations[i] + 1 - win.pads[i] - win.pads[spatial + i]);
    const infer::Shape out_shape(out_dims);
    RefTensor y{out_shape, std::vector<double>(static_cast<size_t>(numel(out_shape)), 0.0)};
    // Scatter every input element times every tap of its channel's kernels.
    for (int64_t xi = 0; xi < numel(x.shape); ++xi) {
        const Dims at = unravel(xi, x.shape);
        const int64_t g = at[1] / group_in;
        for (int64_t wi = 0; wi < numel(w.shape); ++wi) {
            const Dims tap = unravel(wi, w.shape);
            if (tap[0] != at[1]) continue;
            Dims o{at[0], g * group_out + tap[1]};
            bool inside = true;
            for (size_t s = 0; s < spatial; ++s) {
                const int64_t v = at[s + 2] * win.strides[s] + tap[s + 2] * win.dilations[s] - win.pads[s];
                inside = inside && v >= 0 && v < out_dims[s + 2];
                o.push_back(v);
            }
            if (inside) y.data[ravel(o, out_shape)] += x.data[xi] * w.data[wi];
        }
    }
    if (bias)
        for (int64_t i = 0; i < numel(out_shape); ++i) y.data[i] += bias->data[unravel(i, out_shape)[1]];
    return y;
}

RefTensor instance_norm(const RefTensor& x, const RefTensor& scale, const RefTensor& bias, double epsilon) {
    const int64_t planes = x.shape[0] * x.shape[1], size = positions_of(x.shape);
    RefTensor y = x;
    for (int64_t p = 0; p < planes; ++p) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < size; ++i) mean += x.data[p * size + i] / static_cast<double>(size);
        for (int64_t i = 0; i < size; ++i) var += std::pow(x.data[p * size + i] - mean, 2) / static_cast<double>(size);
        const int64_t c = p % x.shape[1];
        for (int64_t i = 0; i < size; ++i)
            y.data[p * size + i] = scale.data[c] * (x.data[p * size + i] - mean) / std::sqrt(var + epsilon) + bias.data[c];
    }
    return y;
}

RefTensor lrn(const RefTensor& x, int64_t size, double alpha, double beta, double bias) {
    RefTensor y = x;
    for (int64_t i = 0; i < numel(x.shape); ++i) {
        Dims at = unravel(i, x.shape);
        const int64_t c = at[1];
        double sum = 0;
        // channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2)
        for (int64_t k = c - (size - 1) / 2; k <= c + size / 2; ++k) {
            if (k < 0 || k >= x.shape[1]) continue;
            at[1] = k;
            sum += std::pow(x.data[ravel(at, x.shape)], 2);
        }
        y.data[i] = x.data[i] / std::pow(bias + alpha / static_cast<double>(size) * sum, beta);
    }
    return y;
}

RefTensor mean_variance_norm(const RefTensor& x, const Dims& axes) {
    std::vector<bool> reduced(x.shape.rank(), false);
    for (int64_t a : axes) reduced[static_cast<size_t>(normalize_axis(a, static_cast<int64_t>(x.shape.rank())))] = true;
    auto key = [&](int64_t i) {
        Dims at = unravel(i, x.shape);
        for (size_t a = 0; a < at.size(); ++a) if (reduced[a]) at[a] = 0;
        return ravel(at, x.shape);
    };
    const auto n = static_cast<size_t>(numel(x.shape));
    std::vector<double> mean(n, 0), count(n, 0), var(n, 0);
    for (size_t i = 0; i < n; ++i) { mean[key(i)] += x.data[i]; count[key(i)] += 1; }
    for (size_t i = 0; i < n; ++i) if (count[i] > 0) mean[i] /= count[i];
    for (size_t i = 0; i < n; ++i) var[key(i)] += std::pow(x.data[i] - mean[key(i)], 2);
    RefTensor y = x;
    for (size_t i = 0; i < n; ++i)
        y.data[i] = (x.data[i] - mean[key(i)]) / (std::sqrt(var[key(i)] / count[key(i)]) + 1e-9);
    return y;
}

RefTensor global_max_pool(const RefTensor& x) {
    const int64_t planes = x.shape[0] * x.shape[1], size = positions_of(x.shape);
    Dims dims(x.shape.rank(), 1);
    dims[0] = x.shape[0];
    dims[1] = x.shape[1];
    RefTensor y{infer::Shape(dims), {}};
    for (int64_t p = 0; p < planes; ++p)
        y.data.push_back(*std::max_element(x.data.begin() + p * size, x.data.begin() + (p + 1) * size));
    return y;
}

namespace {
// Index of the scale serving element i: 0 per tensor, else its coordinate on `axis`.
int64_t scale_index(const RefTensor& x, const RefTensor& scale, int64_t axis, int64_t i) {
    if (numel(scale.shape) == 1) return 0;
    return unravel(i, x.shape)[static_cast<size_t>(normalize_axis(axis, static_cast<int64_t>(x.shape.rank())))];
}
}  // namespace

RefTensor quantize(const RefTensor& x, const RefTensor& scale, const RefTensor& zero, int64_t axis,
                   double lo, double hi) {
    RefTensor y = x;
    for (int64_t i = 0; i < numel(x.shape); ++i) {
        const int64_t k = scale_index(x, scale, axis, i);
        y.data[i] = std::clamp(std::nearbyint(x.data[i] / scale.data[k]) + zero.data[k], lo, hi);
    }
    return y;
}

RefTensor dequantize(const RefTensor& x, const RefTensor& scale, const RefTensor& zero, int64_t axis) {
    RefTensor y = x;
    for (int64_t i = 0; i < numel(x.shape); ++i) {
        const int64_t k = scale_index(x, scale, axis, i);
        y.data[i] = (x.data[i] - zero.data[k]) * scale.data[k];
    }
    return y;
}

std::vector<RefTensor> dynamic_quantize(const RefTensor& x) {
    double low = 0, high = 0;
    for (double v : x.data) { low = std::min(low, v); high = std::max(high, v); }
    const double scale = static_cast<float>((high - low) / 255);
    const double zero = std::clamp(std::nearbyint(-low / scale), 0.0, 255.0);
    RefTensor y = x;
    for (double& v : y.data) v = std::clamp(std::nearbyint(v / scale) + zero, 0.0, 255.0);
    return {y, {infer::Shape{}, {scale}}, {infer::Shape{}, {zero}}};
}

RefTensor matmul_integer(const RefTensor& a, const RefTensor& b, double a_zero, double b_zero) {
    RefTensor sa = a, sb = b;
    for (double& v : sa.data) v -= a_zero;
    for (double& v : sb.data) v -= b_zero;
    return matmul(sa, sb);
}

RefTensor conv_integer(const RefTensor& x, const RefTensor& w, double x_zero, const RefTensor& w_zero,
                       const Dims& pads, const Dims& strides) {
    RefTensor sx = x, sw = w;
    for (double& v : sx.data) v -= x_zero;
    const int64_t per = numel(w.shape) / w.shape[0];
    for (int64_t i = 0; i < numel(w.shape); ++i)
        sw.data[i] -= w_zero.data[numel(w_zero.shape) == 1 ? 0 : i / per];
    Window window;
    window.pads = pads;
    window.strides = strides;
    return conv(sx, sw, nullptr, window, 1);
}

RefTensor requantize(const RefTensor& acc, const std::vector<double>& multiplier, double zero, double lo, double hi) {
    RefTensor y = acc;
    for (int64_t i = 0; i < numel(acc.shape); ++i) {
        const double m = multiplier.size() == 1 ? multiplier[0] : multiplier[unravel(i, acc.shape)[1]];
        y.data[i] = std::clamp(std::nearbyint(acc.data[i] * m) + zero, lo, hi);
    }
    return y;
}

RefTensor roi_align(const RefTensor& x, const std::vector<std::array<double, 4>>& boxes, const std::vector<int64_t>& images,
                    const RoiAlignSpec& spec) {
    const auto& d = x.shape.dims();
    const int64_t channels = d[1], height = d[2], width = d[3];
    // The map's value at (y, x) by bilinear interpolation, the four corners' weighted values.
    const auto corners = [&](int64_t image, int64_t c, double y, double xx) {
        std::array<double, 4> v{0, 0, 0, 0};
        if (y < -1 || y > static_cast<double>(height) || xx < -1 || xx > static_cast<double>(width)) return v;
        y = std::clamp(y, 0.0, static_cast<double>(height - 1));
        xx = std::clamp(xx, 0.0, static_cast<double>(width - 1));
        const auto y0 = static_cast<int64_t>(std::floor(y)), x0 = static_cast<int64_t>(std::floor(xx));
        const int64_t y1 = std::min(y0 + 1, height - 1), x1 = std::min(x0 + 1, width - 1);
        const double ly = y - static_cast<double>(y0), lx = xx - static_cast<double>(x0);
        const auto at = [&](int64_t yy, int64_t xi) { return x.data[static_cast<size_t>(((image * channels + c) * height + yy) * width + xi)]; };
        v = {(1 - ly) * (1 - lx) * at(y0, x0), (1 - ly) * lx * at(y0, x1), ly * (1 - lx) * at(y1, x0), ly * lx * at(y1, x1)};
        return v;
    };
    RefTensor y{infer::Shape{static_cast<int64_t>(boxes.size()), channels, spec.out_h, spec.out_w}, {}};
    for (size_t r = 0; r < boxes.size(); ++r)
        for (int64_t c = 0; c < channels; ++c) {
            const double shift = spec.half_pixel ? 0.5 : 0.0;
            const double x1 = boxes[r][0] * spec.spatial_scale - shift, y1 = boxes[r][1] * spec.spatial_scale - shift;
            double w = boxes[r][2] * spec.spatial_scale - shift - x1, h = boxes[r][3] * spec.spatial_scale - shift - y1;
            if (!spec.half_pixel) w = std::max(w, 1.0), h = std::max(h, 1.0);
            const double bin_h = h / static_cast<double>(spec.out_h), bin_w = w / static_cast<double>(spec.out_w);
            const int64_t gh = spec.sampling_ratio > 0 ? spec.sampling_ratio : static_cast<int64_t>(std::ceil(bin_h));
            const int64_t gw = spec.sampling_ratio > 0 ? spec.sampling_ratio : static_cast<int64_t>(std::ceil(bin_w));
            for (int64_t ph = 0; ph < spec.out_h; ++ph)
                for (int64_t pw = 0; pw < spec.out_w; ++pw) {
                    double sum = 0, largest = -std::numeric_limits<double>::infinity();
                    for (int64_t iy = 0; iy < gh; ++iy)
                        for (int64_t ix = 0; ix < gw; ++ix) {
                            const double sy = y1 + (static_cast<double>(ph) + (static_cast<double>(iy) + 0.5) / static_cast<double>(gh)) * bin_h;
                            const double sx = x1 + (static_cast<double>(pw) + (static_cast<double>(ix) + 0.5) / static_cast<double>(gw)) * bin_w;
                            for (double v : corners(images[r], c, sy, sx)) {
                                sum += v;
                                largest = std::max(largest, v);
                            }
                        }
                    y.data.push_back(spec.max_mode ? largest : sum / static_cast<double>(std::max<int64_t>(gh * gw, 1)));
                }
        }
    return y;
}

RefTensor dft(const RefTensor& x, int64_t axis, std::optional<int64_t> length, bool inverse, bool onesided) {
    std::vector<int64_t> dims = x.shape.dims();
    const auto a = static_cast<size_t>(axis);
    const int64_t count = dims[a], channels = dims.back();
    const int64_t n = length.value_or(inverse && onesided ? 2 * (count - 1) : count);
    const int64_t bins = !inverse && onesided ? n / 2 + 1 : n;
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < a; ++d) outer *= dims[d];
    for (size_t d = a + 1; d + 1 < dims.size(); ++d) inner *= dims[d];
    std::vector<int64_t> out_dims = dims;
    out_dims[a] = bins;
    out_dims.back() = inverse && onesided ? 1 : 2;
    RefTensor y{infer::Shape(out_dims), std::vector<double>(static_cast<size_t>(outer * bins * inner * out_dims.back()))};
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            // The line as complex numbers, zero-padded or cut to n.
            std::vector<std::complex<double>> line(static_cast<size_t>(n));
            for (int64_t t = 0; t < std::min(count, n); ++t) {
                const size_t at = static_cast<size_t>(((o * count + t) * inner + i) * channels);
                line[static_cast<size_t>(t)] = {x.data[at], channels == 2 ? x.data[at + 1] : 0.0};
            }
            if (inverse && onesided)  // the full Hermitian spectrum from its first half
                for (int64_t k = 0; k < n; ++k) {
                    const int64_t mirror = k <= n / 2 ? k : n - k;
                    const std::complex<double> v = mirror < count ? line[static_cast<size_t>(mirror)] : 0.0;
                    line[static_cast<size_t>(k)] = k <= n / 2 ? v : std::conj(v);
                }
            if (inverse && onesided) {  // DC and Nyquist are real
                line[0] = line[0].real();
                if (n % 2 == 0) line[static_cast<size_t>(n / 2)] = line[static_cast<size_t>(n / 2)].real();
            }
            for (int64_t k = 0; k < bins; ++k) {
                std::complex<double> sum = 0;
                for (int64_t t = 0; t < n; ++t)
                    sum += line[static_cast<size_t>(t)] *
                           std::polar(1.0, (inverse ? 2.0 : -2.0) * std::numbers::pi * static_cast<double>(k * t) / static_cast<double>(n));
                if (inverse) sum /= static_cast<double>(n);
                const size_t at = static_cast<size_t>(((o * bins + k) * inner + i) * out_dims.back());
                y.data[at] = sum.real();
                if (out_dims.back() == 2) y.data[at + 1] = sum.imag();
            }
        }
    return y;
}

RefTensor stft(const RefTensor& signal, int64_t step, const RefTensor* window, int64_t frame, bool onesided) {
    const int64_t batches = signal.shape[0], samples = signal.shape[1], channels = signal.shape[2];
    const int64_t frames = (samples - frame) / step + 1;
    RefTensor framed{infer::Shape{batches * frames, frame, channels}, {}};
    for (int64_t b = 0; b < batches; ++b)
        for (int64_t f = 0; f < frames; ++f)
            for (int64_t t = 0; t < frame; ++t)
                for (int64_t c = 0; c < channels; ++c)
                    framed.data.push_back(signal.data[static_cast<size_t>((b * samples + f * step + t) * channels + c)] *
                                          (window ? window->data[static_cast<size_t>(t)] : 1.0));
    RefTensor y = dft(framed, 1, std::nullopt, false, onesided);
    y.shape = infer::Shape{batches, frames, y.shape[1], 2};
    return y;
}

RefTensor mel_weight_matrix(int64_t mel_bins, int64_t dft_length, int64_t sample_rate, double lower_hz, double upper_hz) {
    const auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const auto hertz = [](double m) { return 700.0 * (std::pow(10.0, m / 2595.0) - 1.0); };
    const int64_t bins = dft_length / 2 + 1;
    std::vector<int64_t> edge;
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
        const double m = mel(lower_hz) + static_cast<double>(i) * (mel(upper_hz) - mel(lower_hz)) / static_cast<double>(mel_bins + 2);
        edge.push_back(static_cast<int64_t>(std::floor(static_cast<double>(dft_length + 1) * hertz(m) / static_cast<double>(sample_rate))));
    }
    RefTensor y{infer::Shape{bins, mel_bins}, std::vector<double>(static_cast<size_t>(bins * mel_bins), 0.0)};
    for (int64_t m = 0; m < mel_bins; ++m) {
        const int64_t lo = edge[static_cast<size_t>(m)], mid = edge[static_cast<size_t>(m + 1)], hi = edge[static_cast<size_t>(m + 2)];
        for (int64_t j = lo; j <= hi; ++j) {
            double v = 0;
            if (j <= mid) v = mid == lo ? (j == mid ? 1.0 : 0.0) : static_cast<double>(j - lo) / static_cast<double>(mid - lo);
            if (j >= mid && j < hi) v = static_cast<double>(hi - j) / static_cast<double>(hi - mid);
            if (j == mid || v != 0) y.data[static_cast<size_t>(j * mel_bins + m)] = v;
        }
    }
    return y;
}

RefTensor window(WindowKind kind, int64_t size, bool periodic) {
    const double n1 = static_cast<double>(periodic ? size : size - 1);
    RefTensor y{infer::Shape{size}, {}};
    for (int64_t n = 0; n < size; ++n) {
        const double c = std::cos(2 * std::numbers::pi * static_cast<double>(n) / n1);
        const double c2 = std::cos(4 * std::numbers::pi * static_cast<double>(n) / n1);
        const double a = 25.0 / 46.0;
        y.data.push_back(kind == WindowKind::hann ? 0.5 - 0.5 * c
                         : kind == WindowKind::hamming ? a - (1 - a) * c
                                                       : 0.42 - 0.5 * c + 0.08 * c2);
    }
    return y;
}

std::vector<RefTensor> recurrent(const RecurrentSpec& spec, const RefTensor& x, const RefTensor& w,
                                 const RefTensor& r, const RefTensor* b, const RefTensor* lengths,
                                 const RefTensor* initial_h, const RefTensor* initial_c,
                                 const RefTensor* peepholes) {
    const int64_t seq = x.shape[0], batch = x.shape[1], in = x.shape[2], hidden = r.shape[2];
    const int64_t dirs = spec.direction == "bidirectional" ? 2 : 1, gh = spec.gates * hidden;
    RefTensor y{infer::Shape{seq, dirs, batch, hidden}, std::vector<double>(static_cast<size_t>(seq * dirs * batch * hidden), 0)};
    RefTensor yh{infer::Shape{dirs, batch, hidden}, std::vector<double>(static_cast<size_t>(dirs * batch * hidden), 0)};
    RefTensor yc = yh;
    auto clip = [&](double v) { return spec.clip ? std::clamp(v, -*spec.clip, *spec.clip) : v; };
    for (int64_t d = 0; d < dirs; ++d) {
        const bool reverse = spec.direction == "reverse" || d == 1;
        for (int64_t bi = 0; bi < batch; ++bi) {
            const int64_t len = lengths ? static_cast<int64_t>(lengths->data[bi]) : seq;
            std::vector<double> h(static_cast<size_t>(hidden)), c(h.size());
            for (int64_t i = 0; i < hidden; ++i) {
                h[i] = initial_h ? initial_h->data[(d * batch + bi) * hidden + i] : 0;
                c[i] = initial_c ? initial_c->data[(d * batch + bi) * hidden + i] : 0;
            }
            for (int64_t step = 0; step < len; ++step) {
                const int64_t t = reverse ? len - 1 - step : step;
                // gate k's input and recurrent parts for unit j, with their biases
                auto xpart = [&](int64_t k, int64_t j) {
                    double s = b ? b->data[d * 2 * gh + k * hidden + j] : 0;
                    for (int64_t i = 0; i < in; ++i)
                        s += x.data[(t * batch + bi) * in + i] * w.data[(d * gh + k * hidden + j) * in + i];
                    return s;
                };
                auto hpart = [&](int64_t k, int64_t j, const std::vector<double>& state) {
                    double s = b ? b->data[d * 2 * gh + gh + k * hidden + j] : 0;
                    for (int64_t i = 0; i < hidden; ++i) s += state[i] * r.data[(d * gh + k * hidden + j) * hidden + i];
                    return s;
                };
                std::vector<double> next(h.size()), next_c(c.size());
                for (int64_t j = 0; j < hidden; ++j) {
                    if (spec.gates == 1) {
                        next[j] = std::tanh(clip(xpart(0, j) + hpart(0, j, h)));
                    } else if (spec.gates == 3) {
                        const double z = sigmoid_of(clip(xpart(0, j) + hpart(0, j, h)));
                        std::vector<double> reset_h(h.size());
                        double rj = 0;
                        for (int64_t i = 0; i < hidden; ++i)
                            reset_h[i] = sigmoid_of(clip(xpart(1, i) + hpart(1, i, h))) * h[i];
                        rj = sigmoid_of(clip(xpart(1, j) + hpart(1, j, h)));
                        const double hh = spec.linear_before_reset ? std::tanh(clip(xpart(2, j) + rj * hpart(2, j, h)))
                                                                   : std::tanh(clip(xpart(2, j) + hpart(2, j, reset_h)));
                        next[j] = (1 - z) * hh + z * h[j];
                    } else {
                        auto p = [&](int64_t k) { return peepholes ? peepholes->data[d * 3 * hidden + k * hidden + j] : 0.0; };
                        const double ig = sigmoid_of(clip(xpart(0, j) + hpart(0, j, h) + p(0) * c[j]));
                        const double fg = sigmoid_of(clip(xpart(2, j) + hpart(2, j, h) + p(2) * c[j]));
                        const double cc = std::tanh(clip(xpart(3, j) + hpart(3, j, h)));
                        next_c[j] = fg * c[j] + ig * cc;
                        const double og = sigmoid_of(clip(xpart(1, j) + hpart(1, j, h) + p(1) * next_c[j]));
                        next[j] = og * std::tanh(next_c[j]);
                    }
                }
                h = next;
                if (spec.gates == 4) c = next_c;
                for (int64_t j = 0; j < hidden; ++j) y.data[((t * dirs + d) * batch + bi) * hidden + j] = h[j];
            }
            for (int64_t j = 0; j < hidden; ++j) {
                yh.data[(d * batch + bi) * hidden + j] = h[j];
                yc.data[(d * batch + bi) * hidden + j] = c[j];
            }
        }
    }
    if (spec.gates == 4) return {y, yh, yc};
    return {y, yh};
}

std::vector<RefTensor> optimizer_step(const std::string& op, const infer::Attributes& attrs, double rate, int64_t step,
                                      const std::vector<RefTensor>& inputs) {
    const size_t state = op == "Adam" ? 2 : 1, groups = inputs.size() / (2 + state);
    const auto attr = [&](const char* name, double fallback) { return double(attrs.get_float(name, float(fallback))); };
    std::vector<RefTensor> out(groups * (1 + state));
    for (size_t k = 0; k < groups; ++k) {
        const RefTensor& x = inputs[k];
        for (size_t s = 0; s <= state; ++s) out[s * groups + k] = RefTensor{x.shape, {}};
        for (size_t i = 0; i < x.data.size(); ++i) {
            const double xv = x.data[i], g = inputs[groups + k].data[i];
            const double s1 = inputs[2 * groups + k].data[i];
            if (op == "Adagrad") {
                const double r = rate / (1 + double(step) * attr("decay_factor", 0));
                const double reg = attr("norm_coefficient", 0) * xv + g, h = s1 + reg * reg;
                out[k].data.push_back(xv - r * reg / (std::sqrt(h) + attr("epsilon", 1e-6)));
                out[groups + k].data.push_back(h);
            } else if (op == "Momentum") {
                const double alpha = attr("alpha", 0), reg = attr("norm_coefficient", 0) * xv + g;
                const double v = alpha * s1 + (step > 0 ? attr("beta", 0) : 1.0) * reg;
                const bool nesterov = attrs.get_string("mode") == "nesterov";
                out[k].data.push_back(nesterov ? xv - rate * (reg + alpha * v) : xv - rate * v);
                out[groups + k].data.push_back(v);
            } else {
                const double alpha = attr("alpha", 0.9), beta = attr("beta", 0.999);
                const double reg = attr("norm_coefficient", 0) * xv + g;
                const double v = alpha * s1 + (1 - alpha) * reg;
                const double h = beta * inputs[3 * groups + k].data[i] + (1 - beta) * reg * reg;
                const double r = step > 0 ? rate * std::sqrt(1 - std::pow(beta, double(step))) / (1 - std::pow(alpha, double(step))) : rate;
                out[k].data.push_back((1 - attr("norm_coefficient_post", 0)) * (xv - r * (v / (std::sqrt(h) + attr("epsilon", 1e-6)))));
                out[groups + k].data.push_back(v);
                out[2 * groups + k].data.push_back(h);
            }
        }
    }
    return out;
}

}  // namespace ref
