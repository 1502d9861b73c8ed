#pragma once
// Shared by the indexing family's CPU kernels: dispatch on element size (for ops that only move
// elements) or on element type (for ops that compare or combine them), index arithmetic, and
// the registration functions of the family's kernel files.
#include "backends/cpu/kernels/kernel_util.hpp"

#include <infer/backend.hpp>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace infer::cpu {

// Calls f(Word{}) with an unsigned integer as wide as one element of `type`: moving elements
// needs no more than their size.
template <class F>
void visit_word(const KernelContext& ctx, DType type, F&& f) {
    switch (dtype_size(type)) {
        case 1: return f(uint8_t{});
        case 2: return f(uint16_t{});
        case 4: return f(uint32_t{});
        case 8: return f(uint64_t{});
    }
    unsupported(ctx, "elements of " + std::to_string(dtype_size(type)) + " bytes");
}

// Calls f(T{}) with the C++ element type of `type`.
template <class F>
void visit_type(DType type, F&& f) {
    switch (type) {
        case DType::f32: return f(float{});
        case DType::f16: return f(half{});
        case DType::bf16: return f(bfloat16{});
        case DType::i8: return f(int8_t{});
        case DType::u8: return f(uint8_t{});
        case DType::i32: return f(int32_t{});
        case DType::i64: return f(int64_t{});
        case DType::boolean: return f(bool{});
        case DType::f64: return f(double{});
        case DType::i16: return f(int16_t{});
        case DType::u16: return f(uint16_t{});
        case DType::u32: return f(uint32_t{});
        case DType::u64: return f(uint64_t{});
    }
}

template <class T>
double to_double(T v) {
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
        return static_cast<double>(static_cast<float>(v));
    else
        return static_cast<double>(v);
}

template <class T>
T from_double(double v) {
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
        return T(static_cast<float>(v));
    else if constexpr (std::is_same_v<T, bool>)
        return v != 0;
    else
        return static_cast<T>(v);
}

// Row-major strides, in elements.
inline std::vector<int64_t> strides_of(const Shape& shape) {
    std::vector<int64_t> s(shape.rank(), 1);
    for (size_t i = shape.rank(); i-- > 1;) s[i - 1] = s[i] * shape[i];
    return s;
}

// An index into an axis of `extent`, negative counting from the end; fails when out of range.
inline int64_t checked_index(const KernelContext& ctx, int64_t index, int64_t extent) {
    if (index < -extent || index >= extent)
        invalid_argument(ctx, "index " + std::to_string(index) + " out of range for extent " +
                                  std::to_string(extent));
    return index < 0 ? index + extent : index;
}

void register_indexing_movement(KernelRegistry& r);        // indexing_movement.cpp
void register_indexing_concat_gather(KernelRegistry& r);   // indexing_concat_gather.cpp
void register_indexing_generators(KernelRegistry& r);      // indexing_generators.cpp
void register_indexing_grid_sample(KernelRegistry& r);     // indexing_grid_sample.cpp
void register_indexing_tfidf(KernelRegistry& r);           // indexing_tfidf.cpp
void register_indexing_gather_scatter(KernelRegistry& r);  // indexing_gather_scatter.cpp
void register_indexing_layout(KernelRegistry& r);          // indexing_layout.cpp
void register_indexing_resize(KernelRegistry& r);          // indexing_resize.cpp
void register_indexing_select(KernelRegistry& r);          // indexing_select.cpp
void register_indexing_fill(KernelRegistry& r);            // indexing_fill.cpp

}  // namespace infer::cpu
