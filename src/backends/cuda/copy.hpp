#pragma once
// Device copies shared by the op families: plain copies and the strided copy behind transposes,
// slices, expands, concats and broadcasting of bias-like inputs.
#include "backends/cuda/kernel_support.hpp"

#include <infer/shape.hpp>

#include <cstdint>
#include <vector>

namespace infer::cuda {

// Strides that read a tensor of shape `in` broadcast (NumPy rules) to `out`: right-aligned,
// zero along broadcast dimensions.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Copies `bytes` from src to dst on the launch's stream (nothing when they are the same memory).
void copy_device(const Launch& launch, void* dst, const void* src, size_t bytes);

// For every row-major position p of `dims`, copies one element of `element_size` bytes from
// src + (p · src_strides) to dst + (p · dst_strides); strides are in elements, may be zero
// (broadcast) or negative (reversed slices).
void launch_strided_copy(const Launch& launch, size_t element_size, void* dst,
                         const std::vector<int64_t>& dst_strides, const void* src,
                         const std::vector<int64_t>& src_strides, const std::vector<int64_t>& dims);

}  // namespace infer::cuda
