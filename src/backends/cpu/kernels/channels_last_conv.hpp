#pragma once
// What the channel-last f32 convolution (channels_last_conv.cpp) shares with its Winograd path
// (winograd_conv.cpp): the layer's geometry over X [N, H, W, C], its zero-bordered image, and
// vectors of floats for both instruction sets.
#include "backends/cpu/kernels/conv_columns.hpp"

#include <cstdint>
#include <cstring>

namespace infer::cpu {

// Vectors of floats through GCC's vector extensions: one body for AVX-512 (16 lanes) and AVX2
// (8), compiled in functions of each target. A lane's arithmetic is the scalar's (FMA contraction
// aside); the comparisons keep a NaN NaN, as ConvActivation does.
// The helpers below take and return vectors by value, always inlined into a function of the
// vectors' target: no call ever passes one, so GCC's note on the vector ABI does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
using Float16 = float __attribute__((vector_size(64)));
using Float8 = float __attribute__((vector_size(32)));

template <class V>
constexpr int64_t kLanes = static_cast<int64_t>(sizeof(V) / sizeof(float));

template <class V>
__attribute__((always_inline)) inline V load(const float* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class V>
__attribute__((always_inline)) inline void store(float* p, V v) {
    std::memcpy(p, &v, sizeof v);
}

template <class V>
__attribute__((always_inline)) inline V activate(V v, const ConvActivation& a) {
    if (a.hard_swish) {
        V t = v * detail::kHardSwishAlpha + 0.5f;
        t = t < 0.0f ? V{} : t;
        t = 1.0f < t ? V{} + 1.0f : t;
        return v * t;
    }
    if (!a.clamps()) return v;
    const V low = V{} + a.low, high = V{} + a.high;
    v = v < low ? low : v;
    return high < v ? high : v;
}

// A 2-D convolution's geometry over channel-last X [N, H, W, C]: the window per axis, and
// the zero-bordered copy (when the layer pads) its patches are read from.
struct ChannelGeometry {
    int64_t images, channels, group, group_channels, out_channels, group_out;
    SpatialAxis rows, columns;  // H and W
    int64_t padded_h, padded_w; // of the image the patches are read in (X itself without padding)
    bool pads;
    int64_t positions() const { return images * rows.out * columns.out; }
    int64_t taps() const { return rows.kernel * columns.kernel; }
    bool depthwise() const { return group_channels == 1 && group_out == 1; }
};


// X into its zero-bordered image [N, padded_h, padded_w, C].
void pad_image(const float* x, const ChannelGeometry& g, float* padded);

}  // namespace infer::cpu
