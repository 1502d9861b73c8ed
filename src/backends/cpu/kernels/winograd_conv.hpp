#pragma once
// Winograd's F(2x2, 3x3) for channel-last 3x3 convolutions of stride 1 and one group: each 2x2
// block of output positions (a tile) comes from a 4x4 block of input, turned into 16
// transformed values per channel (V = Bᵀ d B); the weights are turned once per session into 16
// matrices [C, M] (U = G g Gᵀ); sixteen products V_ij · U_ij give the tile's 16 transformed sums
// per output channel, which Aᵀ m A turns into its 2x2 outputs. 16 multiplications per tile,
// channel and output channel instead of 36: 2.25 times fewer, for 1.78 times the weights' memory.
// The transforms add and subtract (and halve, in G) only, so results stay within a few ulps of
// the direct sums' (relative 1e-6 in f32 on ResNet-50's layers).
#include "backends/cpu/kernels/channels_last_conv.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"

#include <infer/attributes.hpp>
#include <infer/shape.hpp>

#include <cstddef>
#include <cstdint>

namespace infer::cpu {

// Whether a layer takes this path: a 3x3 kernel, stride 1, no dilation, one group, at least 16
// input and output channels (fewer fill the products' tiles poorly), about 48 tiles or more
// (fewer rows than that per product and the transformed weights' traffic outweighs the saved
// multiplications: ResNet-50's last stage, 16 tiles by 16 MB of them, took 5.8 ms instead of
// 2.25), on our own f32 kernels. X [N, H, W, C] and W [M, C, KH, KW].
bool winograd_takes(const Attributes& attributes, const Shape& x, const Shape& w, FloatGemmKernel kernel);

// The zero-bordered image's extent along an axis that the tiles read: two per tile and two more.
int64_t winograd_image_extent(const SpatialAxis& axis);

// The 16 transformed weights, each packed for the f32 products as B [C, M].
class WinogradWeights {
public:
    WinogradWeights(FloatGemmKernel kernel, int64_t channels, int64_t out_channels);
    int64_t elements() const { return 16 * matrix_elements_; }
    // W [M, C, 3, 3] into `out` (elements() floats).
    void pack(const float* w, float* out) const;
    const PackedFloatLayout& layout() const { return layout_; }
    int64_t matrix_elements() const { return matrix_elements_; }

private:
    PackedFloatLayout layout_;
    int64_t channels_, out_channels_, matrix_elements_;
};

// Workspace for winograd_conv: the transformed inputs and sums of one chunk of tiles.
size_t winograd_workspace_bytes(const ChannelGeometry& g);

// Y [N, OH, OW, M] = act(conv(X) + bias + Z) from X's zero-bordered image (extents from
// winograd_image_extent) and the packed weights `u`; `workspace` of winograd_workspace_bytes.
void winograd_conv(const float* image, const float* u, const WinogradWeights& weights, const ChannelGeometry& g,
                   FloatGemmKernel kernel, const float* bias, const float* z, const ConvActivation& activation, float* y,
                   float* workspace);

}  // namespace infer::cpu
