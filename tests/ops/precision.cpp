// Rounding by scaling the significand to the target's width and std::nearbyint (round half to
// even in the default rounding mode); exact in double because float has fewer bits.
#include "precision.hpp"

#include <bit>
#include <cmath>

namespace ref {

namespace {
double round_significand(double x, int bits, int min_exponent) {
    if (x == 0 || !std::isfinite(x)) return x;
    int e = 0;
    std::frexp(x, &e);                            // |x| = m * 2^e, m in [0.5, 1)
    const int quantum = std::max(e, min_exponent) - bits;  // subnormals keep a fixed quantum
    return std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);
}
}  // namespace

double round_to(infer::DType type, float x) {
    switch (type) {
        case infer::DType::f16: return round_significand(x, 11, -13);
        case infer::DType::bf16: return round_significand(x, 8, -125);
        default: return x;
    }
}

uint16_t half_bits(double value) {
    const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
    const double a = std::fabs(value);
    if (a == 0) return sign;
    int e = 0;
    const double m = std::frexp(a, &e);           // a = (2m) * 2^(e-1), 2m in [1, 2)
    if (e - 1 < -14)                              // subnormal: a = bits * 2^-24
        return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::ldexp(a, 24)));
    const auto mantissa = static_cast<uint16_t>((2 * m - 1) * 1024);
    return static_cast<uint16_t>(sign | ((e - 1 + 15) << 10) | mantissa);
}

uint16_t bfloat16_bits(double value) {
    return static_cast<uint16_t>(std::bit_cast<uint32_t>(static_cast<float>(value)) >> 16);
}

}  // namespace ref
