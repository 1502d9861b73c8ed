#pragma once
// Stride-1 2-D f32 convolutions without unfolding their columns (implicit GEMM): each image is
// copied once into a zero-padded buffer, and the product by the weights [M, C·kh·kw] reads row
// (c, i, j) of its B straight from that buffer, c·Hp·Wp + i·Wp + j elements on, over the output
// positions laid out with the padded width Wp (PackedFloatLayout::row_offsets). The kw - 1
// extra columns per output row are computed and dropped by the epilogue: for a 3x3 kernel over a
// 56-wide image that is 3.4% more multiply-adds, against im2col's copying every input value nine
// times (a quarter of a ResNet-50 3x3 layer's time on one core). Measured on 2 Zen 4 cores, 3x3
// kernels: 56x56x64 1.75-1.9 -> 1.13-1.16 ms, 28x28x128 1.38 -> 1.18, 14x14x256 1.42 -> 1.25,
// 7x7x512 1.58 -> 1.38 (22% extra columns and still faster); 4x4x64, 5x5 over 7x7 and 3x3x512
// about twice as fast as unfolding, so no width limit.
#include "backends/cpu/kernels/conv_columns.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"

namespace infer::cpu {

// Whether the tap path takes this one-group convolution on `kernel`: 2-D, stride and dilation 1,
// a kernel larger than 1x1, and one of our own f32 kernels (not blas).
bool convolution_by_taps_takes(const ConvGeometry& g, FloatGemmKernel kernel);

// The scratch it needs: one padded image and the row offsets (the kernel's workspace, reused
// across runs, rather than a buffer that would outlive the session).
size_t convolution_by_taps_bytes(const ConvGeometry& g);

// Y for `images` images of X [images, C, H, W] by W [M, C, kh, kw], finished by `finish` (bias,
// residual, activation; its y and residual at image 0's planes); `scratch` holds
// convolution_by_taps_bytes(g), 8-byte aligned.
void convolution_by_taps(const float* x, const float* w, const ChannelBiasWriter& finish, const ConvGeometry& g,
                         int64_t images, int64_t out_channels, FloatGemmKernel kernel, void* scratch);

}  // namespace infer::cpu
