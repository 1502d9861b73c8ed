#pragma once
// FusedConv's activation (table_fused.cpp) as the bounds every backend clamps its output to, or
// HardSwish, so that the CPU and CUDA epilogues read the attributes one way.
#include <infer/attributes.hpp>

#include <algorithm>
#include <limits>
#include <string>

namespace infer::detail {

// HardSwish's slope: ONNX defines it as x · clamp(alpha·x + beta, 0, 1), alpha 1/6 and beta 1/2.
// A product, not a division by 6: vdivps was most of a MobileNetV3 convolution epilogue's time.
inline constexpr float kHardSwishAlpha = 1.0f / 6.0f;

// None (-∞, ∞), Relu [0, ∞), Clip [clip_min, clip_max] (either bound left out: none; ReLU6 is
// [0, 6]); HardSwish (MobileNetV3's) x · clamp(x / 6 + 1/2, 0, 1), unbounded.
struct ConvActivation {
    float low = -std::numeric_limits<float>::infinity(), high = std::numeric_limits<float>::infinity();
    bool hard_swish = false;

    bool clamps() const {
        return low > -std::numeric_limits<float>::infinity() || high < std::numeric_limits<float>::infinity();
    }
    // Whether the output differs from its input (some activation is there).
    bool applies() const { return clamps() || hard_swish; }
    // The activation of one value, as the ONNX ops compute it; NaN stays NaN.
    float operator()(float v) const {
        if (hard_swish) return v * std::min(std::max(v * kHardSwishAlpha + 0.5f, 0.0f), 1.0f);
        return std::min(std::max(v, low), high);
    }

    static ConvActivation of(const Attributes& attributes) {
        ConvActivation a;
        const std::string name = attributes.get_string("activation", "");
        if (name == "Relu") a.low = 0.0f;
        if (name == "HardSwish") a.hard_swish = true;
        if (name == "Clip") {
            a.low = attributes.get_float("clip_min", a.low);
            a.high = attributes.get_float("clip_max", a.high);
        }
        return a;
    }
};

}  // namespace infer::detail
