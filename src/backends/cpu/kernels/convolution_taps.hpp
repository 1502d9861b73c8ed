#pragma once
// 2-D convolutions without unfolding their columns (implicit GEMM). Each image is copied once
// into its zero-padded "phases": the padded image split by the strides, phase (a, b) of a
// channel holding padded rows a, a + sh, ... and columns b, b + sw, ... (with stride 1, the
// padded plane itself). Input value (oh·sh + i·dh, ow·sw + j·dw) under tap (i, j) is element
// (oh + i·dh / sh, ow + j·dw / sw) of phase (i·dh mod sh, j·dw mod sw), so for every tap the
// output positions, laid out row after row with the phase width, read one run of one phase:
// row (c, i, j) of the product's B is the phases at a fixed offset, whatever the stride and
// dilation. The few extra columns per output row (the phase width less the output width) are
// computed and dropped by the epilogue: for a 3x3 kernel over a 56-wide image 3.4% more
// multiply-adds, against im2col's copying every input value nine times (a quarter of a
// ResNet-50 3x3 layer's time on one core).
// Measured on 2 Zen 4 cores (f32): 3x3 over 56x56x64 1.75-1.9 -> 1.13 ms, 28x28x128 1.38 ->
// 1.18, 14x14x256 1.42 -> 1.25, 7x7x512 1.58 -> 1.38 (22% extra columns and still faster),
// ResNet-50's 7x7 stride-2 stem 1.86 -> 1.18; small planes (4x4, 5x5 over 7x7) about twice as
// fast as unfolding, so there is no width limit.
#include "backends/cpu/kernels/conv_columns.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"

namespace infer::cpu {

// One image's phases for a 2-D convolution of geometry g.
struct TapPhases {
    int64_t height = 0, width = 0, plane = 0;  // of one phase
    int64_t per_channel = 0;                   // sh · sw phases
    size_t elements = 0;  // every phase of every channel, and what the last dropped columns read past them
    static TapPhases of(const ConvGeometry& g);
    // Output positions in the phase layout (h.out rows of `width`): the product's columns.
    int64_t positions(const ConvGeometry& g) const { return g.axes[0].out * width; }
    // B's row offsets into the phases, one per (channel, i, j) in the weights' order: C·taps.
    void offsets(const ConvGeometry& g, int64_t* offsets) const;
    // One image's C planes into its phases in `buffer` (`elements` values, the tail zeroed),
    // over the pool. T: f32, or bf16 bits.
    template <class T>
    void fill(const T* image, const ConvGeometry& g, T* buffer) const;
};

// The product's tiles over phase positions (columns col0... of a product that starts at phase
// position `first`): each output row's first `out_width` go to Y through the channel writer,
// the rest are dropped.
struct PhaseRowsWriter {
    ChannelBiasWriter channels;
    int64_t phase_width, out_width, first = 0;
    static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc, int64_t ld);
};

// Whether the f32 tap path takes this one-group convolution on `kernel`: 2-D and one of our own
// f32 kernels (not blas).
bool convolution_by_taps_takes(const ConvGeometry& g, FloatGemmKernel kernel);

// The scratch it needs: the row offsets and one image's phases (the kernel's workspace,
// reused across runs, rather than a buffer that would outlive the session).
size_t convolution_by_taps_bytes(const ConvGeometry& g);

// Y for `images` images of X [images, C, H, W] by W [M, C, kh, kw], finished by `finish` (bias,
// residual, activation; its y and residual at image 0's planes); `scratch` holds
// convolution_by_taps_bytes(g), 8-byte aligned. B is read in place from the phases
// (PackedFloatLayout::row_offsets).
void convolution_by_taps(const float* x, const float* w, const ChannelBiasWriter& finish, const ConvGeometry& g,
                         int64_t images, int64_t out_channels, FloatGemmKernel kernel, void* scratch);

}  // namespace infer::cpu
