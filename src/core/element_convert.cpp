#include "core/element_convert.hpp"

#include "core/half_convert.hpp"

#include <cstdint>
#include <cstring>

namespace infer::detail {

namespace {
bool is_integral(DType t) {
    return t == DType::i8 || t == DType::u8 || t == DType::i16 || t == DType::u16 || t == DType::i32 ||
           t == DType::u32 || t == DType::i64 || t == DType::u64 || t == DType::boolean;
}

template <class T>
double load_as_double(const void* p, size_t i) {
    return static_cast<double>(static_cast<const T*>(p)[i]);
}

double load(const void* p, DType t, size_t i) {
    switch (t) {
        case DType::f32: return load_as_double<float>(p, i);
        case DType::f16: return half_bits_to_float(static_cast<const uint16_t*>(p)[i]);
        case DType::bf16: return bfloat16_bits_to_float(static_cast<const uint16_t*>(p)[i]);
        case DType::i8: return load_as_double<int8_t>(p, i);
        case DType::u8: return load_as_double<uint8_t>(p, i);
        case DType::i32: return load_as_double<int32_t>(p, i);
        case DType::i64: return load_as_double<int64_t>(p, i);
        case DType::i16: return load_as_double<int16_t>(p, i);
        case DType::u16: return load_as_double<uint16_t>(p, i);
        case DType::u32: return load_as_double<uint32_t>(p, i);
        case DType::u64: return load_as_double<uint64_t>(p, i);
        case DType::boolean: return static_cast<const uint8_t*>(p)[i] != 0 ? 1.0 : 0.0;
        case DType::f64: return static_cast<const double*>(p)[i];
    }
    return 0;
}

int64_t load_int(const void* p, DType t, size_t i) {
    switch (t) {
        case DType::i8: return static_cast<const int8_t*>(p)[i];
        case DType::u8: return static_cast<const uint8_t*>(p)[i];
        case DType::i32: return static_cast<const int32_t*>(p)[i];
        case DType::i64: return static_cast<const int64_t*>(p)[i];
        case DType::i16: return static_cast<const int16_t*>(p)[i];
        case DType::u16: return static_cast<const uint16_t*>(p)[i];
        case DType::u32: return static_cast<const uint32_t*>(p)[i];
        case DType::u64: return static_cast<int64_t>(static_cast<const uint64_t*>(p)[i]);  // wraps above 2^63
        case DType::boolean: return static_cast<const uint8_t*>(p)[i] != 0;
        default: return static_cast<int64_t>(load(p, t, i));
    }
}

void store(void* p, DType t, size_t i, double v) {
    switch (t) {
        case DType::f32: static_cast<float*>(p)[i] = static_cast<float>(v); break;
        case DType::f16: static_cast<uint16_t*>(p)[i] = float_to_half_bits(static_cast<float>(v)); break;
        case DType::bf16:
            static_cast<uint16_t*>(p)[i] = float_to_bfloat16_bits(static_cast<float>(v));
            break;
        case DType::i8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
        case DType::u8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
        case DType::i32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
        case DType::i64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
        case DType::i16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); break;
        case DType::u16: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); break;
        case DType::u32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); break;
        case DType::u64: static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); break;
        case DType::boolean: static_cast<uint8_t*>(p)[i] = v != 0.0; break;
        case DType::f64: static_cast<double*>(p)[i] = v; break;
    }
}

void store_int(void* p, DType t, size_t i, int64_t v) {
    switch (t) {
        case DType::i8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
        case DType::u8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
        case DType::i32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
        case DType::i64: static_cast<int64_t*>(p)[i] = v; break;
        case DType::i16: static_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); break;
        case DType::u16: static_cast<uint16_t*>(p)[i] = static_cast<uint16_t>(v); break;
        case DType::u32: static_cast<uint32_t*>(p)[i] = static_cast<uint32_t>(v); break;
        case DType::u64: static_cast<uint64_t*>(p)[i] = static_cast<uint64_t>(v); break;
        case DType::boolean: static_cast<uint8_t*>(p)[i] = v != 0; break;
        default: store(p, t, i, static_cast<double>(v)); break;
    }
}
}  // namespace

void convert_elements(const void* src, DType src_type, void* dst, DType dst_type, size_t count) {
    if (count == 0) return;  // empty tensors may have no storage at all
    if (src_type == dst_type) {
        std::memcpy(dst, src, count * dtype_size(src_type));
        return;
    }
    // f32 ↔ f16/bf16, the bulk of lowering a model's weights, through the vector conversions.
    const auto* f32_src = static_cast<const float*>(src);
    auto* f32_dst = static_cast<float*>(dst);
    auto* bits_dst = static_cast<uint16_t*>(dst);
    const auto* bits_src = static_cast<const uint16_t*>(src);
    if (src_type == DType::f32 && dst_type == DType::f16) return float_to_half_serial(f32_src, bits_dst, count);
    if (src_type == DType::f32 && dst_type == DType::bf16) return float_to_bfloat16_serial(f32_src, bits_dst, count);
    if (src_type == DType::f16 && dst_type == DType::f32) return half_to_float_serial(bits_src, f32_dst, count);
    if (src_type == DType::bf16 && dst_type == DType::f32) return bfloat16_to_float_serial(bits_src, f32_dst, count);
    if (is_integral(src_type) && is_integral(dst_type)) {
        for (size_t i = 0; i < count; ++i) store_int(dst, dst_type, i, load_int(src, src_type, i));
        return;
    }
    for (size_t i = 0; i < count; ++i) store(dst, dst_type, i, load(src, src_type, i));
}

void fill_elements(void* dst, DType type, double value, size_t count) {
    for (size_t i = 0; i < count; ++i) store(dst, type, i, value);
}

}  // namespace infer::detail
