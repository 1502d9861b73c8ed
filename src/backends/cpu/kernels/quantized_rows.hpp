#pragma once
// Dynamic quantization of activations, one scale and zero point per row: each row of X maps
// its range (widened to include 0, so that 0 is exact) onto u8's 256 steps,
//   scale = (max - min) / 255, zero = round(-min / scale), q = clamp(round(x / scale) + zero),
// with x / scale computed as x · (1 / scale) in f32 and rounding to nearest even. Per row
// rather than per tensor: one outlier token does not coarsen every other row's steps.
#include <cstddef>
#include <cstdint>

namespace infer::cpu {

struct QuantizedRows {
    uint8_t* values;  // rows × stride, zero past K
    float* scale;     // per row
    int32_t* zero;    // per row
};

size_t quantized_rows_bytes(int64_t rows, int64_t stride);

// The least and greatest of x[0, n) and 0 (NaN ignored), eight lanes at a time where AVX2 is.
void range_with_zero(const float* x, int64_t n, float& low, float& high);

// Quantizes X [rows, k] (f32, contiguous) into `memory` (quantized_rows_bytes long), over the
// calling thread's pool.
QuantizedRows quantize_rows(const float* x, int64_t rows, int64_t k, int64_t stride, void* memory);

// The same with one range for every row (static quantization: a calibrated range, [low, high]
// holding 0); values beyond it are clamped.
QuantizedRows quantize_rows_in_range(const float* x, int64_t rows, int64_t k, int64_t stride, float low, float high,
                                     void* memory);

}  // namespace infer::cpu
