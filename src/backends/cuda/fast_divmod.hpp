#pragma once
// Division by a divisor fixed at launch time, done as a multiply-high, an add and a shift
// (the Granlund-Montgomery method). Integer division has no hardware instruction on NVIDIA GPUs:
// a 64-bit division compiles to a long subroutine, and index math that splits a position into
// coordinates runs once per element, so it can cost more than the memory traffic it serves.
// Plain C++ apart from the host/device markers, so the host tests can check it exhaustively.
#include <cstdint>

#if defined(__CUDACC__)
#define INFER_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define INFER_HOST_DEVICE inline
#endif

namespace infer::cuda {

// Valid for dividends below 2^31 (the caller's 32-bit index range) and divisors from 1 to 2^31.
struct FastDivmod {
    uint32_t divisor = 1;
    uint32_t multiplier = 0;
    uint32_t shift = 0;

    FastDivmod() = default;
    explicit FastDivmod(uint32_t d) : divisor(d) {
        while ((uint64_t{1} << shift) < d) ++shift;  // shift = ceil(log2(d))
        // m = floor(2^32 * (2^shift - d) / d) + 1, which is below 2^32 because 2^shift - d < d.
        multiplier = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - d)) / d + 1);
    }

    // floor(n / divisor). The high half of n * m is at most n, so the sum cannot wrap while
    // n < 2^31.
    INFER_HOST_DEVICE uint32_t quotient(uint32_t n) const {
        const uint32_t high = static_cast<uint32_t>((static_cast<uint64_t>(n) * multiplier) >> 32);
        return (high + n) >> shift;
    }
};

}  // namespace infer::cuda
