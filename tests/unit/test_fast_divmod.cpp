// FastDivmod replaces per-element integer division in the CUDA index math; it is plain C++, so
// its arithmetic is checked here against the / operator, on every machine.
#include "backends/cuda/fast_divmod.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

using infer::cuda::FastDivmod;

namespace {

constexpr uint32_t kLargestDividend = (uint32_t{1} << 31) - 1;

// Dividends where a rounding error would show first: around multiples of the divisor and at the
// ends of the range.
std::vector<uint32_t> edge_dividends(uint32_t d) {
    std::vector<uint32_t> values{0, 1, 2, kLargestDividend, kLargestDividend - 1};
    for (uint64_t k : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{kLargestDividend} / d}) {
        const uint64_t multiple = k * d;
        for (int64_t delta : {-1, 0, 1})
            if (static_cast<int64_t>(multiple) + delta >= 0 && multiple + delta <= kLargestDividend)
                values.push_back(static_cast<uint32_t>(multiple + delta));
    }
    return values;
}

}  // namespace

TEST_CASE("FastDivmod divides like / for every divisor shape", "[fast_divmod]") {
    std::vector<uint32_t> divisors;
    for (uint32_t d = 1; d <= 4096; ++d) divisors.push_back(d);
    for (int bit = 12; bit <= 31; ++bit) {
        const uint32_t power = uint32_t{1} << bit;
        for (uint32_t d : {power - 1, power, power + 1}) if (d <= (uint32_t{1} << 31)) divisors.push_back(d);
    }
    for (uint32_t d : {768u, 3072u, 30522u, 12u * 128u * 128u, 1000003u}) divisors.push_back(d);

    std::mt19937 rng(7);
    std::uniform_int_distribution<uint32_t> any_dividend(0, kLargestDividend);
    int64_t wrong = 0;
    for (uint32_t d : divisors) {
        const FastDivmod fast(d);
        std::vector<uint32_t> dividends = edge_dividends(d);
        for (int i = 0; i < 64; ++i) dividends.push_back(any_dividend(rng));
        for (uint32_t n : dividends)
            if (fast.quotient(n) != n / d) {
                if (++wrong <= 5) FAIL_CHECK(n << " / " << d << ": " << fast.quotient(n) << ", expected " << n / d);
            }
    }
    CHECK(wrong == 0);
}

TEST_CASE("FastDivmod is exact for every dividend of a small divisor", "[fast_divmod]") {
    for (uint32_t d : {3u, 7u, 12u, 768u}) {
        const FastDivmod fast(d);
        int64_t wrong = 0;
        for (uint32_t n = 0; n < (uint32_t{1} << 22); ++n) wrong += fast.quotient(n) != n / d;
        CHECK(wrong == 0);
    }
}
