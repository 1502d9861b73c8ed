#pragma once
// Float64 references of the neural-network layers family (table_neural.cpp), from the ONNX
// specification.
#include "reference.hpp"

#include <infer/attributes.hpp>

#include <array>
#include <optional>
#include <string>

namespace ref {

// Losses over [N, C, d...] with targets [N, d...]; `input` of nll_loss is log-probabilities.
RefTensor nll_loss(const RefTensor& input, const RefTensor& target, const RefTensor* weight,
                   const std::string& reduction, std::optional<int64_t> ignore_index);
// {loss, log_prob}
std::vector<RefTensor> softmax_cross_entropy(const RefTensor& scores, const RefTensor& target,
                                             const RefTensor* weight, const std::string& reduction,
                                             std::optional<int64_t> ignore_index);

struct TransposedWindow {
    Dims strides, dilations, pads, output_padding;  // explicit pads: begins then ends
    int64_t group = 1;
};
RefTensor conv_transpose(const RefTensor& x, const RefTensor& w, const RefTensor* bias,
                         const TransposedWindow& window);

RefTensor instance_norm(const RefTensor& x, const RefTensor& scale, const RefTensor& bias,
                        double epsilon);
RefTensor lrn(const RefTensor& x, int64_t size, double alpha, double beta, double bias);
RefTensor mean_variance_norm(const RefTensor& x, const Dims& axes);
RefTensor global_max_pool(const RefTensor& x);

// Per tensor (scale of one element) or per `axis`; results saturate to [lo, hi].
RefTensor quantize(const RefTensor& x, const RefTensor& scale, const RefTensor& zero,
                   int64_t axis, double lo, double hi);
RefTensor dequantize(const RefTensor& x, const RefTensor& scale, const RefTensor& zero,
                     int64_t axis);
std::vector<RefTensor> dynamic_quantize(const RefTensor& x);
// (a - a_zero) x (b - b_zero) for scalar zero points, as MatMul.
RefTensor matmul_integer(const RefTensor& a, const RefTensor& b, double a_zero, double b_zero);
// Conv of (x - x_zero) and (w - w_zero[m]) with explicit pads, no groups.
RefTensor conv_integer(const RefTensor& x, const RefTensor& w, double x_zero,
                       const RefTensor& w_zero, const Dims& pads, const Dims& strides);
// round(acc * multiplier[m] + zero) saturated, per output channel m (axis 1) or all (size 1).
RefTensor requantize(const RefTensor& acc, const std::vector<double>& multiplier, double zero,
                     double lo, double hi);

// RoiAlign over x [N, C, H, W] for boxes (x1, y1, x2, y2) of images `images`: each output bin
// the mean (or, max_mode, the largest weighted corner) of grid × grid bilinear samples.
struct RoiAlignSpec {
    int64_t out_h = 1, out_w = 1, sampling_ratio = 0;
    double spatial_scale = 1.0;
    bool half_pixel = true, max_mode = false;
};
RefTensor roi_align(const RefTensor& x, const std::vector<std::array<double, 4>>& boxes, const std::vector<int64_t>& images,
                    const RoiAlignSpec& spec);

// DFT along `axis` of x [batch, signal..., 1 or 2] as ONNX defines it (the inverse scaled by
// 1/length; inverse and one-sided: the real signal of a one-sided spectrum), by the defining sum
// over std::complex terms.
RefTensor dft(const RefTensor& x, int64_t axis, std::optional<int64_t> length, bool inverse, bool onesided);
// STFT of signal [batch, samples, 1 or 2]: frames of `frame` samples every `step`, each times the
// window (when given), transformed.
RefTensor stft(const RefTensor& signal, int64_t step, const RefTensor* window, int64_t frame, bool onesided);
RefTensor mel_weight_matrix(int64_t mel_bins, int64_t dft_length, int64_t sample_rate, double lower_hz, double upper_hz);

enum class WindowKind { hann, hamming, blackman };
RefTensor window(WindowKind kind, int64_t size, bool periodic);

// RNN (gates 1), GRU (3) and LSTM (4) with default activations, layout 0. Inputs as ONNX
// orders them; absent ones are nullptr. Returns Y, Y_h (and Y_c for LSTM).
struct RecurrentSpec {
    int gates;
    std::string direction = "forward";
    bool linear_before_reset = false;
    std::optional<double> clip;
};
std::vector<RefTensor> recurrent(const RecurrentSpec& spec, const RefTensor& x, const RefTensor& w,
                                 const RefTensor& r, const RefTensor* b, const RefTensor* lengths,
                                 const RefTensor* initial_h, const RefTensor* initial_c,
                                 const RefTensor* peepholes);

// One step of Adagrad, Momentum or Adam over the tensors in `inputs` (X..., G..., state...),
// giving X_new..., then the new state, as ONNX's reference defines them.
std::vector<RefTensor> optimizer_step(const std::string& op, const infer::Attributes& attrs, double rate, int64_t step,
                                      const std::vector<RefTensor>& inputs);

}  // namespace ref
