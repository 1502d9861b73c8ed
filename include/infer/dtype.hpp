#pragma once
// Element types. One table (dtype.cpp) gives each type's name and size; half and bfloat16 are
// storage types with explicit conversions to and from float.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace infer {

// i16, u16, u32 and u64 came last, so the earlier values keep their numbers.
enum class DType : uint8_t { f32, f16, bf16, i8, u8, i32, i64, boolean, f64, i16, u16, u32, u64 };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f16, DType::bf16, DType::i8,  DType::u8,
                                       DType::i32, DType::i64, DType::boolean, DType::f64, DType::i16,
                                       DType::u16, DType::u32, DType::u64};

// "f32", "f16", "bf16", "i8", "u8", "i32", "i64", "bool", "f64", "i16", "u16", "u32", "u64"
std::string_view dtype_name(DType type);
size_t dtype_size(DType type);            // bytes per element
DType parse_dtype(std::string_view name);  // throws InvalidArgument for an unknown name
bool is_floating(DType type);              // f32, f16, bf16, f64
bool is_16bit_float(DType type);           // f16, bf16

// IEEE 754 binary16, stored as its bit pattern.
struct half {
    uint16_t bits = 0;
    half() = default;
    explicit half(float value);
    explicit operator float() const;
};

// bfloat16: the top 16 bits of a float32, rounded to nearest even.
struct bfloat16 {
    uint16_t bits = 0;
    bfloat16() = default;
    explicit bfloat16(float value);
    explicit operator float() const;
};

uint16_t float_to_half_bits(float value);
float half_bits_to_float(uint16_t bits);
uint16_t float_to_bfloat16_bits(float value);
float bfloat16_bits_to_float(uint16_t bits);

// The DType of a C++ element type: dtype_of<float>() == DType::f32.
template <class T>
constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<half>() { return DType::f16; }
template <> constexpr DType dtype_of<bfloat16>() { return DType::bf16; }
template <> constexpr DType dtype_of<int8_t>() { return DType::i8; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::u8; }
template <> constexpr DType dtype_of<int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<bool>() { return DType::boolean; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<int16_t>() { return DType::i16; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::u16; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::u32; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::u64; }

}  // namespace infer
