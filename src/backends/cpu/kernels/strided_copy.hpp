#pragma once
// Byte-moving copies shared by the data-movement kernels: they depend only on element size,
// so one instance serves every dtype.
#include <infer/shape.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace infer::cpu {

// Fills dense `dst` of shape `dims` from the view of `src` with the given element strides
// (0 repeats an element, negative walks backwards).
void strided_copy(void* dst, const void* src, const std::vector<int64_t>& dims,
                  const std::vector<int64_t>& src_strides, size_t element_size);

// Fills dense `dst` of shape `out` with dense `src` of shape `in` broadcast to it.
void broadcast_copy(void* dst, const Shape& out, const void* src, const Shape& in,
                    size_t element_size);

// memcpy split across the pool when large.
void parallel_copy(void* dst, const void* src, size_t bytes);

}  // namespace infer::cpu
