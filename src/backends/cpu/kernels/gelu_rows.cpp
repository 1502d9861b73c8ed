#include "backends/cpu/kernels/gelu_rows.hpp"

#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/vector_gelu.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace infer::cpu {

namespace {

template <class V>
[[gnu::always_inline]] inline void gelu_row(float* x, int64_t n) {
    int64_t i = 0;
    for (; i + kLanes<V> <= n; i += kLanes<V>) store_lanes(x + i, gelu_lanes(load_lanes<V>(x + i)));
    for (; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * float(M_SQRT1_2)));
}

__attribute__((target("avx2,fma"))) void gelu_row_avx2(float* x, int64_t n) { gelu_row<__m256>(x, n); }
__attribute__((target("avx512f"))) void gelu_row_avx512(float* x, int64_t n) { gelu_row<__m512>(x, n); }

}  // namespace

void gelu_in_place(float* x, int64_t n) {
    switch (float_vector_isa()) {
    case VectorIsa::avx512: return gelu_row_avx512(x, n);
    case VectorIsa::avx2: return gelu_row_avx2(x, n);
    case VectorIsa::scalar: break;
    }
    for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * float(M_SQRT1_2)));
}

void gelu_tanh_in_place(float* x, int64_t n) {
    const float k = std::sqrt(2.0f / float(M_PI));
    for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::tanh(k * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}

RowActivation row_activation_named(const std::string& name) {
    return name == "Relu"       ? RowActivation::relu
           : name == "Gelu"     ? RowActivation::gelu
           : name == "GeluTanh" ? RowActivation::gelu_tanh
                                : RowActivation::none;
}

void activate_row(float* x, int64_t n, RowActivation activation) {
    switch (activation) {
        case RowActivation::none: return;
        case RowActivation::relu:
            for (int64_t i = 0; i < n; ++i) x[i] = std::max(x[i], 0.0f);  // NaN stays NaN
            return;
        case RowActivation::gelu: gelu_in_place(x, n); return;
        case RowActivation::gelu_tanh: gelu_tanh_in_place(x, n); return;
    }
}

}  // namespace infer::cpu
