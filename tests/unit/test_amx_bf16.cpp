// Products by a bf16 weight on AMX tiles (backends/cpu/kernels/amx_bf16_gemm.hpp) against a
// float64 reference of the same bf16 values, over shapes with every kind of tail (rows short of
// a tile or of the 32-row group, K short of a tile's 32 values or odd, a last panel short of 16
// columns or alone). The kernel's blocking and packing run everywhere through its emulated
// tiles; the tile instructions themselves only where the CPU has AMX (the GPU machine's Xeon).
#include "backends/cpu/kernels/amx_bf16_gemm.hpp"
#include "backends/cpu/kernels/half_convert.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

using namespace infer;
using namespace infer::cpu;

namespace {

struct Collect {
    std::vector<float>* y;
    int64_t n;
    static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc, int64_t ld) {
        auto& c = *static_cast<Collect*>(self);
        REQUIRE(rows <= kFloatTileRows);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < cols; ++j) (*c.y)[static_cast<size_t>((row0 + r) * c.n + col0 + j)] = acc[r * ld + j];
    }
};

std::vector<uint16_t> random_bf16(size_t count, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> values(count);
    for (float& v : values) v = uniform(rng);
    std::vector<uint16_t> bits(count);
    float_to_bfloat16(values.data(), bits.data(), count);
    return bits;
}

double widened(uint16_t bits) {
    float value;
    bfloat16_to_float(&bits, &value, 1);
    return value;
}

using Product = void (*)(const PackedFloatLayout&, const uint16_t*, const uint16_t*, int64_t, int64_t, FloatEpilogue, void*);

// A [m, k] (rows lda apart) · B [k, n] through `product`, each output within f32 summation's
// error of the float64 sum, and every output written.
void check_product(Product product, int64_t m, int64_t k, int64_t n, int64_t lda) {
    INFO(m << " x " << k << " x " << n << ", lda " << lda);
    const auto a = random_bf16(static_cast<size_t>(m * lda), 1);
    const auto b = random_bf16(static_cast<size_t>(k * n), 2);
    const PackedFloatLayout layout = packed_float_layout(FloatGemmKernel::amx_bf16, k, n);
    CHECK(layout.steps % kAmxTilePairs == 0);
    const Tensor packed = pack_float_weight(layout, b.data(), n);
    std::vector<float> y(static_cast<size_t>(m * n), NAN);
    Collect collect{&y, n};
    product(layout, static_cast<const uint16_t*>(packed.raw_data()), a.data(), lda, m, &Collect::tile, &collect);
    int64_t wrong = 0;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double sum = 0, magnitude = 0;
            for (int64_t kk = 0; kk < k; ++kk) {
                const double term = widened(a[static_cast<size_t>(i * lda + kk)]) * widened(b[static_cast<size_t>(kk * n + j)]);
                sum += term;
                magnitude += std::fabs(term);
            }
            const double got = y[static_cast<size_t>(i * n + j)];
            if (!(std::fabs(got - sum) <= 1e-5 * magnitude + 1e-30)) {
                if (++wrong <= 3) UNSCOPED_INFO("y[" << i << ", " << j << "] = " << got << ", want " << sum);
            }
        }
    CHECK(wrong == 0);
}

void check_shapes(Product product) {
    for (int64_t m : {1, 15, 16, 17, 32, 33, 100})
        for (int64_t k : {1, 2, 31, 32, 33, 64, 100, 384})
            for (int64_t n : {1, 16, 17, 32, 48, 100}) check_product(product, m, k, n, k);
    check_product(product, 40, 96, 80, 128);      // A's rows farther apart than K
    check_product(product, 256, 384, 1536, 384);  // MiniLM's FFN at batch 2 × 128, over the pool
}

}  // namespace

TEST_CASE("bf16 products by AMX tiles equal the float64 product: blocking and packing (emulated tiles)", "[amx]") {
    check_shapes(&gemm_amx_bf16_emulated);
}

TEST_CASE("bf16 products by AMX tiles equal the float64 product: the tile instructions", "[amx]") {
    if (!amx_bf16_usable()) {
        WARN("no AMX on this CPU (or the OS did not grant it): the tile instructions are not run here");
        return;
    }
    check_shapes(&gemm_amx_bf16);
}
