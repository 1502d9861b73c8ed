// Silu (fused from x · Sigmoid(x), fuse_silu.cpp): y = x / (1 + e^-x), one pass instead of two,
// sixteen lanes at a time with AVX-512, eight with AVX2 (one template over GCC vectors). e^t comes
// from t = n·ln2 + r (|r| ≤ ln2/2), 2^n built in the exponent bits and e^r from its degree-6
// Taylor polynomial (relative error below 2e-7 there); t is clamped to [-87, 88] so that 2^n
// stays a normal float, where x / (1 + e^-x) has long reached x or 0 (-0 for negative x, as the
// unfused ops give). The exp is most of the work (the op is bound by it, not by memory), so the
// wider vectors are what make it faster.
#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/register.hpp"

#include <cmath>
#include <cstdint>

namespace infer::cpu {

namespace {

// L floats and L int32 as GCC vectors (spelled per L: an attribute on an alias template would be dropped).
template <int L>
struct SiluVectors;
template <>
struct SiluVectors<8> {
    typedef float F __attribute__((vector_size(32)));
    typedef int32_t I __attribute__((vector_size(32)));
};
template <>
struct SiluVectors<16> {
    typedef float F __attribute__((vector_size(64)));
    typedef int32_t I __attribute__((vector_size(64)));
};

// Silu of [begin, end) L values at a time; returns where it stopped (a multiple of L from
// `begin`). Compiled for the caller's instruction set (always inline into a function with a target).
template <int L>
__attribute__((always_inline)) inline int64_t silu_lanes(const float* x, float* y, int64_t begin, int64_t end) {
    using F = typename SiluVectors<L>::F;
    using I = typename SiluVectors<L>::I;
    const F one = F{} + 1.0f, magic = F{} + 12582912.0f;  // 1.5 · 2^23: adding it rounds to an integer
    int64_t i = begin;
    for (; i + L <= end; i += L) {
        F v;
        __builtin_memcpy(&v, x + i, sizeof v);
        F t = -v;
        t = t < -87.0f ? F{} - 87.0f : t;
        t = t > 88.0f ? F{} + 88.0f : t;
        const F n = (t * 1.44269504f + magic) - magic;
        // r = t - n·ln2 in two steps (ln2's high part exact in float), so that r keeps its bits.
        F r = t - n * 0.693145752f;
        r = r - n * 1.42860677e-6f;
        F p = F{} + 1.0f / 720.0f;
        p = p * r + 1.0f / 120.0f;
        p = p * r + 1.0f / 24.0f;
        p = p * r + 1.0f / 6.0f;
        p = p * r + 0.5f;
        p = p * r + 1.0f;
        p = p * r + 1.0f;
        const I exponent = (__builtin_convertvector(n, I) + 127) << 23;
        const F e = p * (F)exponent;  // e^-x
        F out = v / (one + e);
        out = v != v ? v : out;  // NaN in, NaN out (the clamp would hide it)
        __builtin_memcpy(y + i, &out, sizeof out);
    }
    return i;
}

__attribute__((target("avx512f"))) int64_t silu_avx512(const float* x, float* y, int64_t begin, int64_t end) {
    return silu_lanes<16>(x, y, begin, end);
}
__attribute__((target("avx2,fma"))) int64_t silu_avx2(const float* x, float* y, int64_t begin, int64_t end) {
    return silu_lanes<8>(x, y, begin, end);
}

void silu_kernel(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const float* px = x.data<float>();
    float* py = ctx.output(0).data<float>();
    const auto vectors = has_avx512f_vl() ? silu_avx512 : has_avx2_fma() ? silu_avx2 : nullptr;
    parallel_for(x.numel(), 16384, [&](int64_t begin, int64_t end) {
        if (vectors) begin = vectors(px, py, begin, end);
        for (int64_t i = begin; i < end; ++i) py[i] = px[i] / (1.0f + std::exp(-px[i]));
    });
}

}  // namespace

void register_silu_kernel(KernelRegistry& r) { add_floating(r, "Silu", silu_kernel); }

}  // namespace infer::cpu
