#pragma once
// Depthwise 2-D convolution (one input channel per group), summed directly: as a matrix product
// it would have a single row.
#include "backends/cpu/kernels/conv_columns.hpp"

#include <cstdint>

namespace infer::cpu {

// Y [images, out_channels, positions] of X [images, out_channels / multiplier, input] by W
// [out_channels, taps] (`multiplier` output channels share an input channel). Returns true when
// it finished the planes (bias, Z, activation), false when the caller must (finish_conv_planes).
bool depthwise(const float* x, const float* w, const ConvGeometry& g, int64_t images, int64_t out_channels,
               int64_t multiplier, const float* bias, const float* residual, ConvActivation activation, float* y);

}  // namespace infer::cpu
