#pragma once
// Converting arrays of elements between dtypes on the host.
#include <infer/dtype.hpp>

#include <cstddef>

namespace infer::detail {

// Converts `count` elements; integers go through int64, everything else through double.
void convert_elements(const void* src, DType src_type, void* dst, DType dst_type, size_t count);
// Writes `value` into `count` elements of `type`.
void fill_elements(void* dst, DType type, double value, size_t count);

}  // namespace infer::detail
