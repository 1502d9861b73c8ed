// Cast between every pair of dtypes. Floats convert to integers by truncation toward zero,
// integers narrow by wrapping, and anything converts to bool as "not zero".
#include "backends/cpu/kernels/half_convert.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/math_kernels.hpp"
#include "core/ops/op_schema.hpp"

#include <cmath>
#include <cstring>
#include <type_traits>

namespace infer::cpu {

namespace {

template <class T>
constexpr bool is_16bit_float = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

// Every source value is read as double (floating types, all exactly) or int64 (integers, bool).
template <class T>
auto read_value(T v) {
    if constexpr (is_16bit_float<T>)
        return static_cast<double>(static_cast<float>(v));
    else if constexpr (std::is_floating_point_v<T>)
        return static_cast<double>(v);
    else
        return static_cast<int64_t>(v);
}

int64_t truncate_to_int64(double v) {
    // Out-of-range and NaN conversions are undefined in C++; ONNX leaves them unspecified too.
    if (std::isnan(v)) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return static_cast<int64_t>(v);
}

template <class D, class V>
D write_value(V v) {
    if constexpr (std::is_same_v<D, bool>)
        return v != V(0);
    else if constexpr (is_16bit_float<D>)
        return D(static_cast<float>(v));
    else if constexpr (std::is_floating_point_v<D>)
        return static_cast<D>(v);
    else if constexpr (std::is_floating_point_v<V>)
        return static_cast<D>(truncate_to_int64(v));
    else
        return static_cast<D>(v);
}

template <class S, class D>
void convert(const S* src, D* dst, int64_t count) {
    parallel_for(count, 32768, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) dst[i] = write_value<D>(read_value(src[i]));
    });
}

// Calls f(T{}) with the C++ element type of `type`.
template <class F>
void visit_dtype(DType type, F&& f) {
    switch (type) {
        case DType::f32:
            return f(float{});
        case DType::f16:
            return f(half{});
        case DType::bf16:
            return f(bfloat16{});
        case DType::i8:
            return f(int8_t{});
        case DType::u8:
            return f(uint8_t{});
        case DType::i32:
            return f(int32_t{});
        case DType::i64:
            return f(int64_t{});
        case DType::boolean:
            return f(bool{});
        case DType::f64:
            return f(double{});
        case DType::i16:
            return f(int16_t{});
        case DType::u16:
            return f(uint16_t{});
        case DType::u32:
            return f(uint32_t{});
        case DType::u64:
            return f(uint64_t{});
    }
    throw Unsupported("Cast: no conversion for dtype " + std::string(dtype_name(type)));
}

void cast_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    const DType to = detail::dtype_from_onnx(ctx.attrs().get_int("to"));
    if (to != out.dtype())
        invalid_argument(ctx, "output is " + std::string(dtype_name(out.dtype())) +
                                  " but 'to' asks for " + std::string(dtype_name(to)));
    const size_t count = static_cast<size_t>(in.numel());
    const void* src = in.raw_data();
    void* dst = out.raw_data();
    if (in.dtype() == to) {
        std::memcpy(dst, src, in.nbytes());
        return;
    }
    const auto* bits_in = static_cast<const uint16_t*>(src);
    auto* bits_out = static_cast<uint16_t*>(dst);
    if (in.dtype() == DType::f16 && to == DType::f32)
        return half_to_float(bits_in, static_cast<float*>(dst), count);
    if (in.dtype() == DType::bf16 && to == DType::f32)
        return bfloat16_to_float(bits_in, static_cast<float*>(dst), count);
    if (in.dtype() == DType::f32 && to == DType::f16)
        return float_to_half(static_cast<const float*>(src), bits_out, count);
    if (in.dtype() == DType::f32 && to == DType::bf16)
        return float_to_bfloat16(static_cast<const float*>(src), bits_out, count);
    visit_dtype(in.dtype(), [&](auto s) {
        visit_dtype(to, [&](auto d) {
            using S = decltype(s);
            using D = decltype(d);
            convert(static_cast<const S*>(src), static_cast<D*>(dst), in.numel());
        });
    });
}

}  // namespace

void register_math_cast_kernels(KernelRegistry& r) {
    for (DType t : kAllDTypes) r.add("Cast", t, cast_kernel);
}

}  // namespace infer::cpu
