#pragma once
// Device-side element types: which CUDA type stores each DType, how a kernel computes with it
// (f16 and bf16 in f32, so that sums and products keep f32 precision), and dispatch from a
// run-time DType to a kernel template.
#include "backends/cuda/kernel_support.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace infer::cuda {

// bool is stored as one byte; this wrapper keeps it apart from u8 in templates (a cast to bool
// must produce 0 or 1, a cast to u8 must not).
struct Bool8 {
    uint8_t value;
};

template <class T>
struct Tag {
    using type = T;
};

template <class T>
inline constexpr bool is_reduced_float = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// The type arithmetic is done in: float for the 16-bit floats, the type itself otherwise.
template <class T>
using Compute = std::conditional_t<is_reduced_float<T>, float, T>;

template <class T>
__device__ __forceinline__ Compute<T> load(T value) {
    if constexpr (std::is_same_v<T, __half>) return __half2float(value);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(value);
    else return value;
}

template <class T>
__device__ __forceinline__ T store(Compute<T> value) {
    if constexpr (std::is_same_v<T, __half>) return __float2half_rn(value);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __float2bfloat16_rn(value);
    else return value;
}

template <class T>
__device__ __forceinline__ float load_float(T value) {
    return static_cast<float>(load(value));
}

// Calls f(Tag<T>{}) with the storage type of a floating dtype.
template <class F>
decltype(auto) dispatch_float(DType type, const Launch& launch, F&& f) {
    switch (type) {
        case DType::f32: return f(Tag<float>{});
        case DType::f16: return f(Tag<__half>{});
        case DType::bf16: return f(Tag<__nv_bfloat16>{});
        default: launch.unsupported(std::string("dtype ") + std::string(dtype_name(type)));
    }
}

// Floating dtypes plus the integer types arithmetic is defined for.
template <class F>
decltype(auto) dispatch_numeric(DType type, const Launch& launch, F&& f) {
    switch (type) {
        case DType::i32: return f(Tag<int32_t>{});
        case DType::i64: return f(Tag<int64_t>{});
        default: return dispatch_float(type, launch, f);
    }
}

// Every dtype, by its storage type.
template <class F>
decltype(auto) dispatch_all(DType type, const Launch& launch, F&& f) {
    switch (type) {
        case DType::i8: return f(Tag<int8_t>{});
        case DType::u8: return f(Tag<uint8_t>{});
        case DType::boolean: return f(Tag<Bool8>{});
        case DType::f64: return f(Tag<double>{});
        default: return dispatch_numeric(type, launch, f);
    }
}

// Data movement does not look at values: an unsigned integer of the element's size will do.
template <class F>
decltype(auto) dispatch_by_size(size_t element_size, const Launch& launch, F&& f) {
    switch (element_size) {
        case 1: return f(Tag<uint8_t>{});
        case 2: return f(Tag<uint16_t>{});
        case 4: return f(Tag<uint32_t>{});
        case 8: return f(Tag<uint64_t>{});
        default: launch.unsupported("element size " + std::to_string(element_size));
    }
}

inline constexpr int kBlock = 256;

// Blocks for a grid-stride loop over n items: enough to fill the device, never a huge grid.
inline unsigned grid_for(int64_t n, int block = kBlock) {
    const int64_t blocks = (n + block - 1) / block;
    return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, int64_t{1} << 20));
}

#define INFER_GRID_STRIDE(i, n)                                                         \
    for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
         i += static_cast<int64_t>(gridDim.x) * blockDim.x)

}  // namespace infer::cuda
