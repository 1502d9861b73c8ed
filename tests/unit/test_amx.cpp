// Products by a bf16 weight on AMX tiles (backends/cpu/kernels/amx_gemm.hpp) against a
// float64 reference of the same bf16 values, over shapes with every kind of tail (rows short of
// a tile or of the 32-row group, K short of a tile's 32 values or odd, a last panel short of 16
// columns or alone). The kernel's blocking and packing run everywhere through its emulated
// tiles; the tile instructions themselves only where the CPU has AMX (the GPU machine's Xeon).
#include "backends/cpu/kernels/amx_gemm.hpp"
#include "backends/cpu/kernels/half_convert.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <climits>
#include <cmath>
#include <random>
#include <vector>

using namespace infer;
using namespace infer::cpu;

namespace {

// The epilogues run on the pool's threads, where Catch's assertions may not: they note a tile
// taller than the contract allows, and the test checks that afterwards.
struct Collect {
    std::vector<float>* y;
    int64_t n;
    std::atomic<bool> too_tall{false};
    static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc, int64_t ld) {
        auto& c = *static_cast<Collect*>(self);
        if (rows > kFloatTileRows) c.too_tall = true;
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

struct Int8Collect {
    std::vector<int32_t>* y;
    int64_t n;
    std::atomic<bool> too_tall{false};
    static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const int32_t* acc, int64_t ld) {
        auto& c = *static_cast<Int8Collect*>(self);
        if (rows > kInt8TileRows) c.too_tall = true;
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < cols; ++j) (*c.y)[static_cast<size_t>((row0 + r) * c.n + col0 + j)] = acc[r * ld + j];
    }
};

using Int8Product = void (*)(const Int8WeightLayout&, const uint8_t*, const uint8_t*, int64_t, Int8Epilogue, void*);
using Product = void (*)(const PackedFloatLayout&, const uint16_t*, const uint16_t*, int64_t, int64_t, FloatEpilogue, void*);

// A [m, k] (rows lda apart) · B [k, n] through `product`, each output within f32 summation's
// error of the float64 sum, and every output written.
void check_product(Product product, int64_t m, int64_t k, int64_t n, int64_t lda) {
    INFO(m << " x " << k << " x " << n << ", lda " << lda);
    const auto a = random_bf16(static_cast<size_t>(m * lda), 1);
    const auto b = random_bf16(static_cast<size_t>(k * n), 2);
    const PackedFloatLayout layout = packed_float_layout(FloatGemmKernel::amx_bf16, k, n);
    CHECK(layout.steps % kAmxTileRows == 0);
    const Tensor packed = pack_float_weight(layout, b.data(), n);
    std::vector<float> y(static_cast<size_t>(m * n), NAN);
    Collect collect{&y, n};
    product(layout, static_cast<const uint16_t*>(packed.raw_data()), a.data(), lda, m, &Collect::tile, &collect);
    CHECK_FALSE(collect.too_tall);
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

// A [m, k] u8 · B [k, n] s8 through `product`, exactly the integer sums.
void check_int8_product(Int8Product product, int64_t m, int64_t k, int64_t n) {
    INFO(m << " x " << k << " x " << n << " (int8)");
    std::mt19937 rng(static_cast<uint32_t>(m * 1000003 + k * 1009 + n));
    std::uniform_int_distribution<int> byte(0, 255);
    std::vector<uint8_t> a(static_cast<size_t>(m * k));
    std::vector<int8_t> b(static_cast<size_t>(k * n));
    for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
    for (auto& v : b) v = static_cast<int8_t>(byte(rng) - 128);
    const Int8WeightLayout layout = int8_weight_layout(Int8Kernel::amx_int8, k, n);
    CHECK(layout.groups % kAmxTileRows == 0);
    const Tensor packed = pack_int8_weight(layout, b.data(), n);
    const int64_t stride = int8_row_stride(layout);
    std::vector<uint8_t> rows(static_cast<size_t>(m * stride));
    std::vector<int32_t> row_sums(static_cast<size_t>(m));
    pack_int8_rows(a.data(), m, k, stride, false, rows.data(), row_sums.data());
    std::vector<int32_t> y(static_cast<size_t>(m * n), INT32_MIN);
    Int8Collect collect{&y, n};
    product(layout, packed.data<uint8_t>(), rows.data(), m, &Int8Collect::tile, &collect);
    CHECK_FALSE(collect.too_tall);
    int64_t wrong = 0;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            int32_t sum = 0;
            for (int64_t kk = 0; kk < k; ++kk) sum += int32_t{a[static_cast<size_t>(i * k + kk)]} * b[static_cast<size_t>(kk * n + j)];
            if (y[static_cast<size_t>(i * n + j)] != sum && ++wrong <= 3)
                UNSCOPED_INFO("y[" << i << ", " << j << "] = " << y[static_cast<size_t>(i * n + j)] << ", want " << sum);
        }
    CHECK(wrong == 0);
}

void check_int8_shapes(Int8Product product) {
    for (int64_t m : {1, 16, 17, 33, 100})
        for (int64_t k : {1, 3, 63, 64, 65, 200})
            for (int64_t n : {1, 16, 17, 48, 100}) check_int8_product(product, m, k, n);
    check_int8_product(product, 256, 384, 1536);  // MiniLM's FFN at batch 2 × 128, over the pool
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

TEST_CASE("u8 x s8 products by AMX tiles equal the integer sums: blocking and packing (emulated tiles)", "[amx]") {
    check_int8_shapes(&gemm_amx_u8s8_emulated);
}

TEST_CASE("u8 x s8 products by AMX tiles equal the integer sums: the tile instructions", "[amx]") {
    if (!amx_int8_usable()) {
        WARN("no AMX-INT8 on this CPU (or the OS did not grant it): the tile instructions are not run here");
        return;
    }
    check_int8_shapes(&gemm_amx_u8s8);
}
