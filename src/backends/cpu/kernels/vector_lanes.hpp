#pragma once
// Vectors of floats of any width as GCC's vector extensions see them (__m256 and __m512 are such
// types): arithmetic, comparisons and ?: lane by lane. Math written once on them
// (vector_exp.hpp, vector_gelu.hpp, the row kernels) is always inlined into a caller compiled
// for AVX2 + FMA or AVX-512, and so becomes that ISA's instructions: one source for 8 and 16
// lanes. Loads and stores are unaligned.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

// Passing a 32- or 64-byte vector to a function compiled without AVX would change the ABI;
// these functions are only ever inlined into callers that have it. The warning stays off for the
// rest of the includer on purpose: its own vector helpers (vector_exp.hpp, the kernels' lane
// templates) take and return these types the same way, and GCC reports them at their own
// lines, so a push/pop here would let every one of them warn. Include this only in vector kernels.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace infer::cpu {

// Bytes bytes of T as one GCC vector. The attribute has to sit on a class member's typedef: on
// an alias template GCC would drop it.
template <class T, size_t Bytes>
struct VectorOf {
    typedef T type __attribute__((vector_size(Bytes)));
};

// L floats as one vector, for code templated on a lane count: FloatLanes<8> is __m256's type,
// FloatLanes<16> __m512's.
template <int L>
using FloatLanes = typename VectorOf<float, L * sizeof(float)>::type;

// The i32 vector of V's width, for bit work on V's lanes; (V) and (IntLanes<V>) casts between
// the two reinterpret the bits.
template <class V>
using IntLanes = typename VectorOf<int32_t, sizeof(V)>::type;

// A byte per lane of V (V's values narrowed to u8: __builtin_convertvector from IntLanes<V>).
template <class V>
using ByteLanes = typename VectorOf<uint8_t, sizeof(V) / sizeof(float)>::type;

// Every lane `value` (x - 0 is x for every x, -0 included; 0 + -0 is +0).
template <class V>
[[gnu::always_inline]] inline V splat(float value) {
    return value - V{};
}

template <class V>
[[gnu::always_inline]] inline V load_lanes(const float* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class V>
[[gnu::always_inline]] inline IntLanes<V> load_int_lanes(const int32_t* p) {
    IntLanes<V> v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class V>
[[gnu::always_inline]] inline void store_lanes(float* p, V v) {
    std::memcpy(p, &v, sizeof v);
}

template <class V>
inline constexpr int64_t kLanes = static_cast<int64_t>(sizeof(V) / sizeof(float));

// The lower and upper halves of a vector of 16, 8 or 4 lanes, as vectors of half the width.
template <class V>
[[gnu::always_inline]] inline auto lower_half(V v) {
    if constexpr (kLanes<V> == 16) return __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
    else if constexpr (kLanes<V> == 8) return __builtin_shufflevector(v, v, 0, 1, 2, 3);
    else return __builtin_shufflevector(v, v, 0, 1);
}
template <class V>
[[gnu::always_inline]] inline auto upper_half(V v) {
    if constexpr (kLanes<V> == 16) return __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    else if constexpr (kLanes<V> == 8) return __builtin_shufflevector(v, v, 4, 5, 6, 7);
    else return __builtin_shufflevector(v, v, 2, 3);
}

// The largest and the sum of V's lanes, halving the vector each step: log2(lanes) dependent
// operations where a lane-by-lane loop made a chain of lanes - 1 (softmax and attention take
// both once per row). A lane that is NaN may or may not win the largest.
template <class V>
[[gnu::always_inline]] inline float lane_max(V v) {
    if constexpr (kLanes<V> == 2) {
        return v[0] > v[1] ? v[0] : v[1];
    } else {
        const auto low = lower_half(v), high = upper_half(v);
        return lane_max(low > high ? low : high);
    }
}
template <class V>
[[gnu::always_inline]] inline float lane_sum(V v) {
    if constexpr (kLanes<V> == 2) return v[0] + v[1];
    else return lane_sum(lower_half(v) + upper_half(v));
}

}  // namespace infer::cpu
