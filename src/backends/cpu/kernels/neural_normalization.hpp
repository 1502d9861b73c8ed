#pragma once
// Row kernels of normalization.cpp that fused kernels (fused.cpp) compose.
#include <cstdint>

namespace infer::cpu {

// Softmax of one contiguous row, on the calling thread.
void softmax_row(const float* x, float* y, int64_t length);
// row[j] += bias[j·column_step] for j < length: an attention score row plus its mask or
// position bias (column_step 0 broadcasts one value; 1 is contiguous and vectorises).
void add_bias_row(float* row, const float* bias, int64_t length, int64_t column_step);
// One attention head's scores [rows, length] in place: each row plus its bias (element j of row i
// at bias[i·row_step + j·column_step]; none when null), then its softmax.
void biased_softmax_rows(float* scores, int64_t rows, int64_t length, const float* bias, int64_t row_step,
                         int64_t column_step);

// LayerNorm of `rows` contiguous rows of `length`, spread over the pool:
// y = (x - mean) * inv_std * scale + bias (bias may be null); the statistics go to mean_out and
// inv_std_out when they are not null.
void layer_norm_rows(const float* x, float* y, int64_t rows, int64_t length, const float* scale,
                     const float* bias, float epsilon, float* mean_out, float* inv_std_out);
// One such row on the calling thread (for a fused kernel's own parallel task).
void layer_norm_row(const float* x, float* y, int64_t length, const float* scale, const float* bias, float epsilon);

}  // namespace infer::cpu
