// The CPU kernels' vector e^x and GELU (header-only, so checked directly) in both widths, eight
// lanes (AVX2 + FMA) and sixteen (AVX-512), against std::exp and std::erf in double, over their
// ranges and at their edges; each width is skipped on a CPU without its instructions.
#include "backends/cpu/kernels/vector_exp.hpp"
#include "backends/cpu/kernels/vector_gelu.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace {

using VectorFunction = std::vector<float> (*)(std::vector<float>);

// x padded with zeros to whole vectors, then the function of each vector.
__attribute__((target("avx2,fma"))) std::vector<float> exp8(std::vector<float> x) {
    while (x.size() % 8) x.push_back(0.0f);
    for (size_t i = 0; i < x.size(); i += 8) _mm256_storeu_ps(x.data() + i, infer::cpu::exp_avx2(_mm256_loadu_ps(x.data() + i)));
    return x;
}
__attribute__((target("avx512f"))) std::vector<float> exp16(std::vector<float> x) {
    while (x.size() % 16) x.push_back(0.0f);
    for (size_t i = 0; i < x.size(); i += 16) _mm512_storeu_ps(x.data() + i, infer::cpu::exp_avx512(_mm512_loadu_ps(x.data() + i)));
    return x;
}
__attribute__((target("avx2,fma"))) std::vector<float> gelu8(std::vector<float> x) {
    while (x.size() % 8) x.push_back(0.0f);
    for (size_t i = 0; i < x.size(); i += 8) _mm256_storeu_ps(x.data() + i, infer::cpu::gelu_avx2(_mm256_loadu_ps(x.data() + i)));
    return x;
}
__attribute__((target("avx512f"))) std::vector<float> gelu16(std::vector<float> x) {
    while (x.size() % 16) x.push_back(0.0f);
    for (size_t i = 0; i < x.size(); i += 16) _mm512_storeu_ps(x.data() + i, infer::cpu::gelu_avx512(_mm512_loadu_ps(x.data() + i)));
    return x;
}

struct Width {
    std::string name;
    bool runs;
    VectorFunction exp, gelu;
};

std::vector<Width> widths() {
    return {{"avx2", __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"), exp8, gelu8},
            {"avx512", __builtin_cpu_supports("avx512f") != 0, exp16, gelu16}};
}

}  // namespace

TEST_CASE("vector exp is within 2 ulp of exp and keeps its edges, in both widths", "[softmax]") {
    for (const Width& width : widths()) {
        if (!width.runs) continue;
        INFO(width.name);
        std::vector<float> x;
        for (float v = -87.3f; v <= 88.0f; v += 0.0137f) x.push_back(v);
        const std::vector<float> y = width.exp(x);
        for (size_t i = 0; i < x.size(); ++i) {
            const double want = std::exp(static_cast<double>(x[i]));
            const double ulp = std::nextafter(static_cast<float>(want), std::numeric_limits<float>::infinity()) -
                               static_cast<float>(want);
            INFO("x = " << x[i]);
            REQUIRE(std::abs(y[i] - want) <= 2 * ulp);
        }
        const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
        const std::vector<float> edges = width.exp({-inf, -1000.0f, -88.0f, 0.0f, -0.0f, 89.0f, inf, nan});
        CHECK(edges[0] == 0.0f);
        CHECK(edges[1] == 0.0f);
        CHECK(edges[2] == 0.0f);  // e^-88 is subnormal in f32: flushed
        CHECK(edges[3] == 1.0f);
        CHECK(edges[4] == 1.0f);
        CHECK(edges[5] == inf);
        CHECK(edges[6] == inf);
        CHECK(std::isnan(edges[7]));
    }
}

TEST_CASE("vector GELU follows 0.5·x·(1 + erf(x/√2)) within 1e-6 in both widths", "[softmax]") {
    std::vector<float> x;
    for (float v = -12.0f; v <= 12.0f; v += 0.00731f) x.push_back(v);
    x.push_back(-0.0f);
    std::vector<float> eight;
    for (const Width& width : widths()) {
        if (!width.runs) continue;
        INFO(width.name);
        const std::vector<float> y = width.gelu(x);
        for (size_t i = 0; i < x.size(); ++i) {
            const double v = x[i], want = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
            INFO("x = " << x[i]);
            REQUIRE(std::abs(y[i] - want) <= 1e-6 * std::max(1.0, std::abs(v)));
        }
        // Both widths do the same operations lane by lane: the same results.
        if (eight.empty())
            eight.assign(y.begin(), y.begin() + static_cast<std::ptrdiff_t>(x.size()));
        else
            CHECK(std::equal(eight.begin(), eight.end(), y.begin()));
    }
}
