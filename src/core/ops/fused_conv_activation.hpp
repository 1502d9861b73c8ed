#pragma once
// FusedConv's activation (table_fused.cpp) as the bounds every backend clamps its output to, so
// that the CPU and CUDA epilogues read the attributes one way.
#include <infer/attributes.hpp>

#include <limits>
#include <string>

namespace infer::detail {

// None (-∞, ∞), Relu [0, ∞), Clip [clip_min, clip_max] (either bound left out: none; ReLU6 is
// [0, 6]).
struct ConvActivation {
    float low = -std::numeric_limits<float>::infinity(), high = std::numeric_limits<float>::infinity();

    bool clamps() const {
        return low > -std::numeric_limits<float>::infinity() || high < std::numeric_limits<float>::infinity();
    }

    static ConvActivation of(const Attributes& attributes) {
        ConvActivation a;
        const std::string name = attributes.get_string("activation", "");
        if (name == "Relu") a.low = 0.0f;
        if (name == "Clip") {
            a.low = attributes.get_float("clip_min", a.low);
            a.high = attributes.get_float("clip_max", a.high);
        }
        return a;
    }
};

}  // namespace infer::detail
