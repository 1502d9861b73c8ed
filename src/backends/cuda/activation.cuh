#pragma once
// The product epilogues' activations (gemm.hpp's Activation) on one f32 value, the same formulas
// as the Gelu and Relu kernels (math_elementwise.cu).
#include "backends/cuda/gemm.hpp"

#include <string>

namespace infer::cuda {

// A fused product's activation attribute ("" | Relu | Gelu | GeluTanh).
inline Activation activation_named(const Launch& l, const std::string& name) {
    if (name.empty()) return Activation::none;
    if (name == "Relu") return Activation::relu;
    if (name == "Gelu") return Activation::gelu;
    if (name == "GeluTanh") return Activation::gelu_tanh;
    l.unsupported("activation '" + name + "'");
}

__device__ __forceinline__ float activate(float v, Activation activation) {
    switch (activation) {
        case Activation::relu: return v < 0.0f ? 0.0f : v;  // NaN stays NaN, as in the Relu kernel
        case Activation::gelu: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        case Activation::gelu_tanh: {
            const float inner = 0.79788456080286535588f * (v + 0.044715f * v * v * v);
            return 0.5f * v * (1.0f + tanhf(inner));
        }
        default: return v;
    }
}

}  // namespace infer::cuda
