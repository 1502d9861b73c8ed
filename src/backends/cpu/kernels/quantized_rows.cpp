#include "backends/cpu/kernels/quantized_rows.hpp"

#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <cstring>

namespace infer::cpu {

namespace {

// Round to nearest even for |v| < 2^22: adding and taking away 1.5 · 2^23 leaves v rounded in
// f32's own arithmetic, which compilers vectorize (std::nearbyint they call per element).
inline float round_even(float v) {
    constexpr float magic = 12582912.0f;
    return (v + magic) - magic;
}

// Into [0, 255]; NaN to 0 (a cast of NaN to an integer is undefined).
inline float to_u8_range(float v) { return v > 0.0f ? (v < 255.0f ? v : 255.0f) : 0.0f; }

size_t align64(size_t bytes) { return (bytes + 63) / 64 * 64; }

}  // namespace

size_t quantized_rows_bytes(int64_t rows, int64_t stride) {
    const auto r = static_cast<size_t>(rows);
    return align64(r * static_cast<size_t>(stride)) + align64(r * sizeof(float)) + align64(r * sizeof(int32_t));
}

QuantizedRows quantize_rows(const float* x, int64_t rows, int64_t k, int64_t stride, void* memory) {
    auto* base = static_cast<uint8_t*>(memory);
    const auto r = static_cast<size_t>(rows);
    QuantizedRows q{base, nullptr, nullptr};
    q.scale = reinterpret_cast<float*>(base + align64(r * static_cast<size_t>(stride)));
    q.zero = reinterpret_cast<int32_t*>(reinterpret_cast<uint8_t*>(q.scale) + align64(r * sizeof(float)));
    parallel_for(rows, grain_for(k), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
            const float* in = x + row * k;
            float lo = 0.0f, hi = 0.0f;
            for (int64_t j = 0; j < k; ++j) {
                lo = std::min(lo, in[j]);
                hi = std::max(hi, in[j]);
            }
            float scale = (hi - lo) / 255.0f;
            if (!(scale > 0.0f)) scale = 1.0f;  // an all-zero row
            const float inverse = 1.0f / scale;
            const float zero = to_u8_range(round_even(-lo * inverse));
            uint8_t* out = q.values + row * stride;
            for (int64_t j = 0; j < k; ++j)
                out[j] = static_cast<uint8_t>(to_u8_range(round_even(in[j] * inverse) + zero));
            std::memset(out + k, 0, static_cast<size_t>(stride - k));
            q.scale[row] = scale;
            q.zero[row] = static_cast<int32_t>(zero);
        }
    });
    return q;
}

}  // namespace infer::cpu
