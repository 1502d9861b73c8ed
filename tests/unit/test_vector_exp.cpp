// The CPU kernels' eight-lane e^x (header-only, so checked directly) against std::exp in double,
// over its whole range and at its edges; skipped on a CPU without AVX2 and FMA.
#include "backends/cpu/kernels/vector_exp.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

namespace {

__attribute__((target("avx2,fma"))) std::vector<float> exp_of(const std::vector<float>& x) {
    std::vector<float> y(x.size());
    for (size_t i = 0; i + 8 <= x.size(); i += 8)
        _mm256_storeu_ps(y.data() + i, infer::cpu::exp_avx2(_mm256_loadu_ps(x.data() + i)));
    return y;
}

}  // namespace

TEST_CASE("exp_avx2 is within 2 ulp of exp and keeps its edges", "[softmax]") {
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return;
    std::vector<float> x;
    for (float v = -87.3f; v <= 88.0f; v += 0.0137f) x.push_back(v);
    while (x.size() % 8) x.push_back(0.0f);
    const std::vector<float> y = exp_of(x);
    for (size_t i = 0; i < x.size(); ++i) {
        const double want = std::exp(static_cast<double>(x[i]));
        const double ulp = std::nextafter(static_cast<float>(want), std::numeric_limits<float>::infinity()) -
                           static_cast<float>(want);
        INFO("x = " << x[i]);
        REQUIRE(std::abs(y[i] - want) <= 2 * ulp);
    }
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> edges = exp_of({-inf, -1000.0f, -88.0f, 0.0f, -0.0f, 89.0f, inf, nan});
    CHECK(edges[0] == 0.0f);
    CHECK(edges[1] == 0.0f);
    CHECK(edges[2] == 0.0f);  // e^-88 is subnormal in f32: flushed
    CHECK(edges[3] == 1.0f);
    CHECK(edges[4] == 1.0f);
    CHECK(edges[5] == inf);
    CHECK(edges[6] == inf);
    CHECK(std::isnan(edges[7]));
}
