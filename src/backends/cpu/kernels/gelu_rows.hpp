#pragma once
// GELU over a row in place, for the product epilogues: the exact (erf) one, 0.5·x·(1 + erf(x/√2)).
// With AVX2, eight lanes at a time (vector_gelu.hpp); a scalar std::erf per element cost a fifth
// of an int8 MiniLM run. Without AVX2, std::erf.
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
