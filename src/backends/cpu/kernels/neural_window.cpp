// HannWindow, HammingWindow and BlackmanWindow: cosine sums a0 - a1 cos(2 pi n / L) +
// a2 cos(4 pi n / L), with L = size (periodic) or size - 1 (symmetric). The size input keys the
// kernel (i32/i64); the output is f32 or f64, and f16/bf16 through the f32 boundary.
#include "backends/cpu/kernels/half_boundary.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace infer::cpu {

namespace {

struct Cosines {
    double a0, a1, a2;
};

Kernel window_kernel(Cosines k) {
    return [k](KernelContext& ctx) {
        Tensor& y = ctx.output(0);
        const int64_t size = y.numel();
        const bool periodic = ctx.attrs().get_int("periodic", 1) != 0;
        // A symmetric window of one sample has no period; ONNX's formula would divide by zero.
        const double length = static_cast<double>(periodic ? size : std::max<int64_t>(size - 1, 1));
        auto value = [&](int64_t n) {
            const double phase = 2 * std::numbers::pi * static_cast<double>(n) / length;
            return k.a0 - k.a1 * std::cos(phase) + k.a2 * std::cos(2 * phase);
        };
        if (y.dtype() == DType::f32)
            for (int64_t n = 0; n < size; ++n) y.data<float>()[n] = static_cast<float>(value(n));
        else if (y.dtype() == DType::f64)
            for (int64_t n = 0; n < size; ++n) y.data<double>()[n] = value(n);
        else
            unsupported(ctx, "output dtype " + std::string(dtype_name(y.dtype())));
    };
}

}  // namespace

void register_window_kernels(KernelRegistry& r) {
    const double hamming = 25.0 / 46.0;
    for (const auto& [op, k] : {std::pair<const char*, Cosines>{"HannWindow", {0.5, 0.5, 0}},
                                {"HammingWindow", {hamming, 1 - hamming, 0}},
                                {"BlackmanWindow", {0.42, 0.5, 0.08}}})
        for (DType t : {DType::i32, DType::i64}) r.add_compiled(op, t, with_f32_compute(window_kernel(k)));
}

}  // namespace infer::cpu
