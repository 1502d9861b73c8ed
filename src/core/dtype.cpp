// The dtype table and the half / bfloat16 conversions (round to nearest even).
#include <infer/dtype.hpp>
#include <infer/error.hpp>

#include <cstring>
#include <string>

namespace infer {

namespace {
struct DTypeEntry {
    DType type;
    std::string_view name;
    size_t size;
    bool floating;
};
constexpr DTypeEntry kTable[] = {
    {DType::f32, "f32", 4, true},   {DType::f16, "f16", 2, true},  {DType::bf16, "bf16", 2, true},
    {DType::i8, "i8", 1, false},    {DType::u8, "u8", 1, false},   {DType::i32, "i32", 4, false},
    {DType::i64, "i64", 8, false},  {DType::boolean, "bool", 1, false}, {DType::f64, "f64", 8, true},
    {DType::i16, "i16", 2, false},  {DType::u16, "u16", 2, false}, {DType::u32, "u32", 4, false},
    {DType::u64, "u64", 8, false},
};
const DTypeEntry& entry(DType type) { return kTable[static_cast<size_t>(type)]; }

uint32_t float_bits(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}
float bits_float(uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}
}  // namespace

std::string_view dtype_name(DType type) { return entry(type).name; }
size_t dtype_size(DType type) { return entry(type).size; }
bool is_floating(DType type) { return entry(type).floating; }

bool is_16bit_float(DType type) { return type == DType::f16 || type == DType::bf16; }

DType parse_dtype(std::string_view name) {
    for (const auto& e : kTable)
        if (e.name == name) return e.type;
    if (name == "float32" || name == "float") return DType::f32;
    if (name == "float16") return DType::f16;
    if (name == "float64" || name == "double") return DType::f64;
    if (name == "bfloat16") return DType::bf16;
    if (name == "int64") return DType::i64;
    if (name == "int32") return DType::i32;
    throw InvalidArgument("unknown dtype '" + std::string(name) +
                          "' (expected f32, f16, bf16, f64, i8, u8, i16, u16, i32, u32, i64, u64 or bool)");
}

uint16_t float_to_half_bits(float value) {
    const uint32_t f = float_bits(value);
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t abs = f & 0x7fffffffu;
    if (abs >= 0x7f800000u)  // inf or NaN (keep NaN quiet)
        return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
        // Scale into the subnormal range with a float add, which rounds to nearest even.
        const float scaled = bits_float(abs) + 0.5f;
        return static_cast<uint16_t>(sign | (float_bits(scaled) - float_bits(0.5f)));
    }
    const uint32_t mantissa_odd = (abs >> 13) & 1u;
    const uint32_t rounded = abs + 0xc8000fffu + mantissa_odd;  // rebias exponent and round
    return static_cast<uint16_t>(sign | (rounded >> 13));
}

float half_bits_to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
        const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 31) return bits_float(sign | 0x7f800000u | (mantissa << 13));
    return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t float_to_bfloat16_bits(float value) {
    const uint32_t f = float_bits(value);
    if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x40u);  // NaN
    const uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
    return static_cast<uint16_t>((f + rounding) >> 16);
}

float bfloat16_bits_to_float(uint16_t bits) { return bits_float(static_cast<uint32_t>(bits) << 16); }

half::half(float value) : bits(float_to_half_bits(value)) {}
half::operator float() const { return half_bits_to_float(bits); }
bfloat16::bfloat16(float value) : bits(float_to_bfloat16_bits(value)) {}
bfloat16::operator float() const { return bfloat16_bits_to_float(bits); }

}  // namespace infer
