#pragma once
// Float64 reference implementations of every op in the op table, written independently of the
// kernels: plain loops over doubles with ONNX semantics (newest opset). Speed does not matter
// here; being obviously correct does. Value-carrying inputs (axes, shapes, slice bounds) are
// plain integer vectors because the cases pass them as constants.
#include <infer/shape.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ref {

using Dims = std::vector<int64_t>;

struct RefTensor {
    infer::Shape shape;
    std::vector<double> data;  // row-major
};

// ---- index helpers (reference.cpp)
int64_t numel(const infer::Shape& shape);
Dims strides_of(const infer::Shape& shape);
Dims unravel(int64_t flat, const infer::Shape& shape);
int64_t ravel(const Dims& index, const infer::Shape& shape);
int64_t normalize_axis(int64_t axis, int64_t rank);
infer::Shape broadcast_shapes(const infer::Shape& a, const infer::Shape& b);
// The element of `t` that broadcasts to `out_index` of a tensor of shape `out`.
double broadcast_at(const RefTensor& t, const Dims& out_index);

// ---- math arithmetic (reference_math_arithmetic.cpp)
RefTensor unary(const RefTensor& x, const std::function<double(double)>& f);
RefTensor binary(const RefTensor& a, const RefTensor& b,
                 const std::function<double(double, double)>& f);
RefTensor where(const RefTensor& cond, const RefTensor& x, const RefTensor& y);
double gelu(double x, bool tanh_approximation);
double sigmoid(double x);
RefTensor matmul(const RefTensor& a, const RefTensor& b);
RefTensor gemm(const RefTensor& a, const RefTensor& b, const RefTensor* c, bool trans_a,
               bool trans_b, double alpha, double beta);
enum class Reduction { sum, mean, max };
RefTensor reduce(const RefTensor& x, Reduction kind, Dims axes, bool keepdims,
                 bool noop_with_empty_axes = false);

// ---- indexing movement (reference_indexing_movement.cpp)
RefTensor reshape(const RefTensor& x, Dims target, bool allowzero = false);
RefTensor flatten(const RefTensor& x, int64_t axis);
RefTensor transpose(const RefTensor& x, Dims perm);  // empty perm: reverse
RefTensor concat(const std::vector<RefTensor>& xs, int64_t axis);
std::vector<RefTensor> split(const RefTensor& x, int64_t axis, const Dims& sizes);
Dims even_split_sizes(int64_t dim, int64_t parts);  // ONNX 18: last chunk smaller
RefTensor slice(const RefTensor& x, const Dims& starts, const Dims& ends, Dims axes, Dims steps);
RefTensor gather(const RefTensor& data, const RefTensor& indices, int64_t axis);
RefTensor unsqueeze(const RefTensor& x, const Dims& axes);
RefTensor squeeze(const RefTensor& x, const Dims& axes);  // empty axes: all size-1 axes
RefTensor expand(const RefTensor& x, const Dims& shape);
RefTensor shape_of(const infer::Shape& shape, int64_t start, int64_t end);
RefTensor constant_of_shape(const Dims& shape, double value);
RefTensor range(double start, double limit, double delta);

// ---- neural layers (reference_neural_layers.cpp)
RefTensor softmax(const RefTensor& x, int64_t axis);
// Outputs Y, Mean, InvStdDev, the last two with the normalized axes kept as 1.
std::vector<RefTensor> layer_norm(const RefTensor& x, const RefTensor& scale,
                                  const RefTensor* bias, int64_t axis, double epsilon);
// X / sqrt(mean(X²) + epsilon) * scale over X[axis:], scale broadcast to X[axis:].
RefTensor rms_norm(const RefTensor& x, const RefTensor& scale, int64_t axis, double epsilon);
RefTensor batch_norm(const RefTensor& x, const RefTensor& scale, const RefTensor& bias,
                     const RefTensor& mean, const RefTensor& var, double epsilon);
// Conv and pool window parameters, as the ONNX attributes give them (empty = default).
struct Window {
    Dims kernel, strides, dilations, pads;  // pads: all begins, then all ends
    std::string auto_pad = "NOTSET";
    bool ceil_mode = false;
};
RefTensor conv(const RefTensor& x, const RefTensor& w, const RefTensor* bias, Window window,
               int64_t group);
RefTensor max_pool(const RefTensor& x, Window window);
// MaxPool's Indices: the flat index into x of each window's first maximum, with the spatial
// axes in column-major order when storage_order is 1.
RefTensor max_pool_indices(const RefTensor& x, Window window, bool column_major);
RefTensor average_pool(const RefTensor& x, Window window, bool count_include_pad);
RefTensor global_average_pool(const RefTensor& x);

// ---- fused (reference_fused.cpp)
// Per head of Q[B, Sq, H·D], K[B, Sk, H·D], V[B, Sk, H·Dv]: softmax(Q·Kᵀ·scale + bias)·V,
// heads merged into [B, Sq, H·Dv]; the bias broadcasts to [B, H, Sq, Sk].
RefTensor attention(const RefTensor& q, const RefTensor& k, const RefTensor& v, const RefTensor* bias,
                    int64_t heads, double scale);
// QuantizedMatMul's product A·B, A [..., K] quantized per row to u8 and B [K, N] per column to
// s8 in the f32 steps the op defines (table_fused.cpp), the integer product dequantized.
RefTensor quantized_matmul(const RefTensor& a, const RefTensor& b);

}  // namespace ref
