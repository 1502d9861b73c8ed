#pragma once
// A convolution's geometry and its columns (im2col), shared by the f32 Conv kernel and the bf16
// one (conv_bf16.cpp), and the epilogue both hand their products' tiles to.
#include "core/ops/fused_conv_activation.hpp"

#include <infer/backend.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace infer::cpu {

struct SpatialAxis {  // one spatial axis of the input and output
    int64_t in, kernel, stride, dilation, pad_begin, out;
};

struct ConvGeometry {
    int64_t channels;               // input channels per group
    std::vector<SpatialAxis> axes;  // at least two: 1-D convolutions get a leading unit axis
    int64_t input_size = 1, taps = 1, positions = 1;  // products over the axes
};

// Reads kernel_shape, strides, pads and dilations for X [N, C, spatial...] and W [M, C/group,
// kernel...]; an inconsistent kernel_shape is an InvalidArgument naming the node.
ConvGeometry conv_geometry(const KernelContext& ctx, const Shape& x, const Shape& w, int64_t group);

// A 1x1 kernel without stride or padding: the input is its own column matrix.
bool reads_input_directly(const ConvGeometry& g);

// Unfolds one group of one image (f32, or bf16 bits) into columns [channels · taps, p1 - p0]
// for output positions [p0, p1): row (c, tap) holds, for each of those positions, the input
// element under that kernel tap of channel c (0 in the padding). In parallel over rows (inline
// inside a pool task).
template <class T>
void im2col(const T* x, const ConvGeometry& g, int64_t p0, int64_t p1, T* col);

// Output positions per chunk of columns: the convolutions unfold and multiply a chunk at a time,
// each chunk's columns (at most about kColumnChunkBytes) staying in the core's L2 between the
// two, instead of writing every column to memory and reading it back (ResNet-50's 3x3 layers
// unfold up to 7 MB each). A multiple of the 64-column tile, at least one tile.
inline constexpr int64_t kColumnChunkBytes = 256 * 1024;
int64_t column_chunk(const ConvGeometry& g, size_t element);

using detail::ConvActivation;  // FusedConv's activation as bounds (core/ops/fused_conv_activation.hpp)

// A product's tiles into Y's planes (rows are output channels, `positions` apart): plus each
// channel's bias, plus the residual Z (FusedConv; Y's layout and dtype), then the activation;
// Y f32 or bf16.
struct ChannelBiasWriter {
    void* y;
    bool bf16_out;
    int64_t positions;
    const float* bias;         // per output channel of this group, or null
    const void* residual;      // Z where Y's planes start, or null
    ConvActivation activation;
    static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc, int64_t ld);
};

// The same after a product that wrote Y alone (sgemm, depthwise): y = act(y + bias + Z) over
// `planes` planes of `positions`, channel p % channels; f32.
void finish_conv_planes(float* y, const float* bias, const float* residual, ConvActivation activation, int64_t planes,
                        int64_t channels, int64_t positions);

}  // namespace infer::cpu
