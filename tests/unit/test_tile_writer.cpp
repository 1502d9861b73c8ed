// TileWriter (the float products' epilogue) on this CPU's widest path against the rule written
// out here: y = activation(round(round(acc · scale) + bias)), narrowed to bf16 by
// float_to_bfloat16_bits (to nearest even, NaN kept). Tiles of every width 1-64 and 1-6 rows,
// so that the vector tails fall everywhere; relu and none exactly, GELU (a polynomial erf in
// the vector paths) within 1e-6 and one bf16 step. NaN, infinities, a denormal and ties of the
// rounding among the sums.
#include "backends/cpu/kernels/packed_float_gemm.hpp"

#include <infer/dtype.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace {

float activate(float v, infer::cpu::RowActivation activation) {
    switch (activation) {
        case infer::cpu::RowActivation::relu: return v < 0.0f ? 0.0f : v;
        case infer::cpu::RowActivation::gelu:
            return static_cast<float>(0.5 * v * (1.0 + std::erf(static_cast<double>(v) / std::sqrt(2.0))));
        default: return v;
    }
}

}  // namespace

TEST_CASE("TileWriter writes scale, bias, activation and bf16 rounding as the rule says", "[kernels]") {
    using infer::cpu::RowActivation;
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    const int64_t ld = 80, n = 70;
    std::vector<float> acc(static_cast<size_t>(infer::cpu::kFloatTileRows * ld)), bias(static_cast<size_t>(n));
    for (float& v : acc) v = normal(rng);
    for (float& v : bias) v = normal(rng);
    acc[3] = std::numeric_limits<float>::quiet_NaN();
    acc[static_cast<size_t>(ld + 40)] = std::numeric_limits<float>::infinity();
    acc[static_cast<size_t>(2 * ld + 17)] = -std::numeric_limits<float>::infinity();
    acc[static_cast<size_t>(3 * ld + 5)] = 1e-40f;  // a denormal stays one in bf16
    // Halfway between two bf16 values (scale 1, no bias): to the even one, down and up.
    for (const auto [at, bits] : {std::pair{4 * ld + 2, 0x3f808000u}, std::pair{4 * ld + 33, 0xbf818000u},
                                  std::pair{5 * ld, 0x3f818000u}, std::pair{5 * ld + 63, 0x40008000u}}) {
        float tie;
        std::memcpy(&tie, &bits, sizeof tie);
        acc[static_cast<size_t>(at)] = tie;
    }
    for (const bool bf16 : {false, true})
        for (const RowActivation activation : {RowActivation::none, RowActivation::relu, RowActivation::gelu})
            for (const bool with_bias : {false, true})
                for (int64_t rows = 1; rows <= infer::cpu::kFloatTileRows; ++rows)
                    for (int64_t cols = 1; cols <= infer::cpu::kFloatTileColumns; ++cols) {
                        const int64_t row0 = 1, col0 = n - cols - 3, out_ld = n;
                        std::vector<float> out32(static_cast<size_t>((row0 + rows) * out_ld), -7.0f);
                        std::vector<uint16_t> out16(out32.size(), 0xbeef);
                        const float scale = with_bias ? 0.375f : 1.0f;
                        infer::cpu::TileWriter w{bf16 ? static_cast<void*>(out16.data()) : out32.data(), bf16, out_ld,
                                                 with_bias ? bias.data() : nullptr, activation, scale};
                        infer::cpu::TileWriter::tile(&w, row0, rows, col0, cols, acc.data(), ld);
                        INFO("bf16 " << bf16 << " activation " << int(activation) << " bias " << with_bias << " rows "
                                     << rows << " cols " << cols);
                        for (int64_t r = 0; r < row0 + rows; ++r)
                            for (int64_t c = 0; c < out_ld; ++c) {
                                const auto at = static_cast<size_t>(r * out_ld + c);
                                const bool inside = r >= row0 && c >= col0 && c < col0 + cols;
                                if (!inside) {  // nothing outside the tile is touched
                                    if (bf16) REQUIRE(out16[at] == 0xbeef);
                                    else REQUIRE(out32[at] == -7.0f);
                                    continue;
                                }
                                const float sum = acc[static_cast<size_t>((r - row0) * ld + (c - col0))];
                                // The product rounded to f32, then the sum (in double, each exact
                                // before its one rounding to f32).
                                const auto product = static_cast<float>(static_cast<double>(sum) * scale);
                                const float b = with_bias ? bias[static_cast<size_t>(c)] : 0.0f;
                                const float expected =
                                    activate(static_cast<float>(static_cast<double>(product) + b), activation);
                                const float got = bf16 ? infer::bfloat16_bits_to_float(out16[at]) : out32[at];
                                if (std::isnan(expected)) {
                                    REQUIRE(std::isnan(got));
                                } else if (activation != RowActivation::gelu || std::isinf(expected)) {
                                    const float want = bf16 ? infer::bfloat16_bits_to_float(infer::float_to_bfloat16_bits(expected))
                                                            : expected;
                                    REQUIRE(got == want);
                                } else {
                                    const float step = bf16 ? std::abs(expected) / 128.0f : 0.0f;
                                    REQUIRE(std::abs(got - expected) <= 1e-6f + 2e-6f * std::abs(expected) + step);
                                }
                            }
                    }
}
