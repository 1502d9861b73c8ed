#pragma once
// GELU over a row in place, for the product epilogues. The exact (erf) one, for the product epilogues: 0.5·x·(1 + erf(x/√2)).
// With AVX2, erf comes from Abramowitz and Stegun's 7.1.28, 1 - (1 + a1·x + … + a6·x⁶)^-16,
// whose error is below 3e-7 and which needs no exp, eight lanes at a time; a scalar std::erf per
// element cost a fifth of an int8 MiniLM run. Without AVX2, std::erf.
#include <cstdint>
#include <string>

namespace infer::cpu {

// The activations a fused product applies after its bias (FusedMatMul's `activation`).
enum class RowActivation { none, relu, gelu, gelu_tanh };
// "" | "Relu" | "Gelu" | "GeluTanh" (the op table has checked the name).
RowActivation row_activation_named(const std::string& name);
// x[i] = activation(x[i]) for i < n.
void activate_row(float* x, int64_t n, RowActivation activation);

void gelu_in_place(float* x, int64_t n);
// The tanh approximation (GPT-2's gelu_new): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
void gelu_tanh_in_place(float* x, int64_t n);

}  // namespace infer::cpu
