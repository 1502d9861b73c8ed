// MatMulInteger, QLinearMatMul and MatMulIntegerToFloat over u8/i8 operands with MatMul's batch
// broadcasting. The plain loops widen the operands, less their zero points, to i32 and multiply
// with i32 accumulation; QLinearMatMul then rescales by a_scale * b_scale / y_scale and
// requantizes, MatMulIntegerToFloat scales to f32 and adds its bias. By a constant 2-D B (what
// onnxruntime's quantization writes for every weight) they run on the packed int8 kernel
// (int8_gemm.hpp), B packed once per session; by a B that is an activation quantized per tensor
// (attention's products), on the same kernel with each matrix of B packed at run time.
#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/int8_gemm.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace infer::cpu {

namespace {

// QLinear ops read their scales as f32.
void require_f32_scales(const KernelContext& ctx) {
    for (size_t i : {1, 4, 6})
        if (ctx.input(i).dtype() != DType::f32)
            unsupported(ctx, "scale of dtype " + std::string(dtype_name(ctx.input(i).dtype())));
}

// A tensor of u8 or i8 (or i32) values less its zero point of the same dtype: one for the
// tensor, or, where `per_column` allows it (B's per-column quantization), one per column (its
// last axis), as i32.
std::vector<int32_t> widen(const KernelContext& ctx, size_t input, size_t zero_input, bool per_column = false) {
    const Tensor& t = ctx.input(input);
    // Element i of an 8-bit or i32 tensor, its address taken once (Tensor::data checks access).
    const auto reader = [&](const Tensor& v) -> std::function<int32_t(int64_t)> {
        switch (v.dtype()) {
            case DType::u8: return [p = v.data<uint8_t>()](int64_t i) { return int32_t{p[i]}; };
            case DType::i8: return [p = v.data<int8_t>()](int64_t i) { return int32_t{p[i]}; };
            case DType::i32: return [p = v.data<int32_t>()](int64_t i) { return p[i]; };
            default: unsupported(ctx, "operand dtype " + std::string(dtype_name(v.dtype())));
        }
    };
    const int64_t columns = t.rank() > 0 ? t.shape()[t.rank() - 1] : 1;
    std::vector<int32_t> zero(1, 0);
    if (ctx.has_input(zero_input)) {
        const Tensor& z = ctx.input(zero_input);
        if (z.dtype() != t.dtype()) invalid_argument(ctx, "zero point and operand differ in dtype");
        if (z.numel() != 1 && (!per_column || z.numel() != columns))
            unsupported(ctx, "zero point of shape " + z.shape().to_string() + " (one per tensor, or B's one per column)");
        const auto read_zero = reader(z);
        zero.resize(static_cast<size_t>(z.numel()));
        for (int64_t i = 0, count = z.numel(); i < count; ++i) zero[static_cast<size_t>(i)] = read_zero(i);
    }
    const int64_t count = t.numel();
    std::vector<int32_t> out(static_cast<size_t>(count));
    // Typed loops, which vectorize: one zero point, or one per column.
    const auto fill = [&](const auto* p) {
        if (zero.size() == 1)
            for (int64_t i = 0; i < count; ++i) out[static_cast<size_t>(i)] = int32_t{p[i]} - zero[0];
        else
            for (int64_t i = 0; i < count; ++i) out[static_cast<size_t>(i)] = int32_t{p[i]} - zero[static_cast<size_t>(i % columns)];
    };
    switch (t.dtype()) {
        case DType::u8: fill(t.data<uint8_t>()); break;
        case DType::i8: fill(t.data<int8_t>()); break;
        case DType::i32: fill(t.data<int32_t>()); break;
        default: unsupported(ctx, "operand dtype " + std::string(dtype_name(t.dtype())));
    }
    return out;
}

// Per batch axis of the broadcast batch, how many matrices of an operand one step along it
// skips: 0 where the operand has no such axis or an extent of 1 (it is broadcast).
std::vector<int64_t> batch_steps(const Shape& shape, size_t own, size_t rank) {
    std::vector<int64_t> steps(rank, 0);
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
        if (i + own < rank) continue;
        const int64_t extent = shape[i + own - rank];
        steps[i] = extent == 1 ? 0 : stride;
        stride *= extent;
    }
    return steps;
}

// The matrix offsets of batch entry p in A and B (in matrices), the batch's axes walked from the
// last, each operand stepping as batch_steps says.
std::pair<int64_t, int64_t> batch_offsets(int64_t p, const std::vector<int64_t>& batch, const std::vector<int64_t>& a_steps,
                                          const std::vector<int64_t>& b_steps) {
    int64_t oa = 0, ob = 0;
    for (size_t i = batch.size(); i-- > 0;) {
        const int64_t index = p % batch[i];
        p /= batch[i];
        oa += index * a_steps[i];
        ob += index * b_steps[i];
    }
    return {oa, ob};
}

// Y[batch] = A[batch] x B[batch] in i32, batches broadcast as MatMul's.
void integer_matmul(const Shape& sa, const Shape& sb, const int32_t* a, const int32_t* b,
                    std::vector<int32_t>& y) {
    const bool a_vector = sa.rank() == 1, b_vector = sb.rank() == 1;
    const int64_t m = a_vector ? 1 : sa[sa.rank() - 2], k = sa[sa.rank() - 1];
    const int64_t n = b_vector ? 1 : sb[sb.rank() - 1];
    const size_t ra = a_vector ? 0 : sa.rank() - 2, rb = b_vector ? 0 : sb.rank() - 2;
    const size_t rank = std::max(ra, rb);
    std::vector<int64_t> batch(rank, 1);
    for (size_t i = 0; i < rank; ++i) {
        const int64_t da = i + ra >= rank ? sa[i + ra - rank] : 1, db = i + rb >= rank ? sb[i + rb - rank] : 1;
        batch[i] = std::max(da, db);
    }
    const int64_t batches = product(batch, 0, rank);
    y.assign(static_cast<size_t>(batches * m * n), 0);
    const std::vector<int64_t> a_steps = batch_steps(sa, ra, rank), b_steps = batch_steps(sb, rb, rank);
    // One row of one batch matrix per item, in parallel (activation-by-activation products, such
    // as attention's in a QOperator file, come here: 12 heads of 128 rows per layer).
    parallel_for(batches * m, grain_for(k * n), [&](int64_t begin, int64_t end) {
        for (int64_t q = begin; q < end; ++q) {
            const int64_t p = q / m, r = q % m;
            const auto [oa, ob] = batch_offsets(p, batch, a_steps, b_steps);
            const int32_t* pa = a + oa * m * k + r * k;
            const int32_t* pb = b + ob * k * n;
            int32_t* py = y.data() + p * m * n + r * n;
            for (int64_t j = 0; j < k; ++j) {
                const int32_t v = pa[j];
                for (int64_t c = 0; c < n; ++c) py[c] += v * pb[j * n + c];
            }
        }
    });
}

void matmul_integer_kernel(KernelContext& ctx) {
    const std::vector<int32_t> a = widen(ctx, 0, 2), b = widen(ctx, 1, 3, true);
    std::vector<int32_t> y;
    integer_matmul(ctx.input(0).shape(), ctx.input(1).shape(), a.data(), b.data(), y);
    std::copy(y.begin(), y.end(), ctx.output(0).data<int32_t>());
}

// MatMulIntegerToFloat where the packed kernel does not take it: the i32 product, then each sum
// times its column's scale (through Y's grid, if given) plus the bias.
void matmul_integer_to_float_kernel(KernelContext& ctx) {
    const std::vector<int32_t> a = widen(ctx, 0, 3), b = widen(ctx, 1, 4, true);
    std::vector<int32_t> y;
    integer_matmul(ctx.input(0).shape(), ctx.input(1).shape(), a.data(), b.data(), y);
    const Tensor& scale = ctx.input(2);
    if (scale.dtype() != DType::f32) unsupported(ctx, "scale of dtype " + std::string(dtype_name(scale.dtype())));
    const int64_t n = ctx.input(1).shape()[1];
    const float* ps = scale.data<float>();
    const float* bias = ctx.has_input(5) ? ctx.input(5).data<float>() : nullptr;
    float* out = ctx.output(0).data<float>();
    const std::optional<YGrid> grid = ctx.has_input(6) ? std::optional(YGrid::of(ctx.input(6), ctx.input(7))) : std::nullopt;
    for (size_t i = 0; i < y.size(); ++i) {
        const auto column = static_cast<int64_t>(i) % n;
        const float product = static_cast<float>(y[i]) * ps[scale.numel() == 1 ? 0 : column];
        out[i] = (grid ? grid->round(product) : product) + (bias ? bias[column] : 0.0f);
    }
}

template <class Q>
void requantize(const std::vector<int32_t>& acc, double multiplier, int32_t zero, Tensor& out) {
    Q* p = out.data<Q>();
    for (size_t i = 0; i < acc.size(); ++i) p[i] = requantized<Q>(acc[i], multiplier, zero);
}

void qlinear_matmul_kernel(KernelContext& ctx) {
    require_f32_scales(ctx);
    const std::vector<int32_t> a = widen(ctx, 0, 2), b = widen(ctx, 3, 5);
    std::vector<int32_t> y;
    integer_matmul(ctx.input(0).shape(), ctx.input(3).shape(), a.data(), b.data(), y);
    const double multiplier = double(ctx.input(1).data<float>()[0]) * ctx.input(4).data<float>()[0] /
                              ctx.input(6).data<float>()[0];
    Tensor& out = ctx.output(0);
    const Tensor& zero = ctx.input(7);
    if (out.dtype() == DType::u8) requantize<uint8_t>(y, multiplier, zero.data<uint8_t>()[0], out);
    else if (out.dtype() == DType::i8) requantize<int8_t>(y, multiplier, zero.data<int8_t>()[0], out);
    else unsupported(ctx, "output dtype " + std::string(dtype_name(out.dtype())));
}


// What an integer product writes: its i32 sums (MatMulInteger), the sums requantized to u8/i8
// (QLinearMatMul), or dequantized to f32 with a bias (MatMulIntegerToFloat).
enum class IntegerOutput { sums, requantized, dequantized };

// Where an integer product's operands are among a node's inputs: MatMulInteger (A, B, A's and
// B's zero points), QLinearMatMul (A, its scale and zero point, B, its scale and zero point,
// then Y's scale and zero point) and MatMulIntegerToFloat (A, B, the combined scale, A's and B's
// zero points, the bias).
struct IntegerProductForm {
    size_t a, a_zero, b, b_zero;
    IntegerOutput output;
};
constexpr IntegerProductForm kMatMulInteger{0, 2, 1, 3, IntegerOutput::sums};
constexpr IntegerProductForm kQLinearMatMul{0, 2, 3, 5, IntegerOutput::requantized};
constexpr IntegerProductForm kMatMulIntegerToFloat{0, 3, 1, 4, IntegerOutput::dequantized};
// 4 · K · 255 · 128 < 2^31: the dequantizing epilogue's i32 arithmetic cannot overflow.
constexpr int64_t kMaxDequantizedK = 16384;


// The epilogue of the packed products: Σ (a - za)(b - zb) from the raw sums and the row and
// column sums, then written as i32, requantized, or dequantized (with Y's grid and the bias).
struct Correction {
    const int32_t *column_sums, *b_zero, *row_sums;
    int32_t a_zero;
    int64_t k, n;
    void* out;      // i32 sums, the requantized u8/i8 (QLinearMatMul) or f32 (MatMulIntegerToFloat)
    DType out_dtype;
    const double* multipliers = nullptr;  // QLinearMatMul: per column
    int32_t y_zero = 0;
    const float *scales = nullptr, *bias = nullptr;  // MatMulIntegerToFloat: per column
    std::optional<YGrid> y_grid;                       // and Y's quantization, if any
    static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const int32_t* acc, int64_t ld) {
        const auto& s = *static_cast<const Correction*>(self);
        if (s.scales) return s.dequantize(row0, rows, col0, cols, acc, ld);
        if (s.multipliers && s.out_dtype == DType::u8) return s.requantize<uint8_t>(row0, rows, col0, cols, acc, ld);
        if (s.multipliers) return s.requantize<int8_t>(row0, rows, col0, cols, acc, ld);
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t row_sum = s.row_sums[row0 + r];
            int32_t* y = static_cast<int32_t*>(s.out) + (row0 + r) * s.n + col0;
            for (int64_t c = 0; c < cols; ++c) y[c] = s.corrected(acc[r * ld + c], col0 + c, row_sum);
        }
    }
    // Σ (a - za)(b - zb) of column `column` from the raw sum (in i64: the plain-kernel forms take
    // any K).
    int32_t corrected(int32_t raw, int64_t column, int64_t row_sum) const {
        const int64_t zb = b_zero[column];
        return static_cast<int32_t>(raw - int64_t{a_zero} * column_sums[column] - zb * row_sum + k * a_zero * zb);
    }
    // The corrected sum times the scale, plus the bias. In i32, so that the loop vectorizes:
    // each of the four terms is at most K · 255 · 128 in size, so no partial sum overflows
    // for K ≤ kMaxDequantizedK (takes() sends longer products to the plain kernel).
    void dequantize(int64_t row0, int64_t rows, int64_t col0, int64_t cols, const int32_t* acc, int64_t ld) const {
        const int32_t* sums = column_sums + col0;
        const int32_t* zb = b_zero + col0;
        const float* scale = scales + col0;
        const float* add = bias + col0;
        for (int64_t r = 0; r < rows; ++r) {
            const int32_t row_sum = row_sums[row0 + r];
            const int32_t* a_row = acc + r * ld;
            float* y = static_cast<float*>(out) + (row0 + r) * n + col0;
            const auto kz = static_cast<int32_t>(k) * a_zero;
            if (y_grid) {
                const YGrid g = *y_grid;
                for (int64_t c = 0; c < cols; ++c) {
                    const int32_t v = a_row[c] - a_zero * sums[c] - zb[c] * row_sum + kz * zb[c];
                    y[c] = g.round(static_cast<float>(v) * scale[c]) + add[c];
                }
            } else {
                for (int64_t c = 0; c < cols; ++c) {
                    const int32_t v = a_row[c] - a_zero * sums[c] - zb[c] * row_sum + kz * zb[c];
                    y[c] = static_cast<float>(v) * scale[c] + add[c];
                }
            }
        }
    }
    // QLinearMatMul: the corrected sums of a row first, then requantized (int8_gemm.hpp).
    template <class Q>
    void requantize(int64_t row0, int64_t rows, int64_t col0, int64_t cols, const int32_t* acc, int64_t ld) const {
        int32_t sums[kInt8TileColumns];
        for (int64_t r = 0; r < rows; ++r) {
            const int64_t row_sum = row_sums[row0 + r];
            for (int64_t c = 0; c < cols; ++c) sums[c] = corrected(acc[r * ld + c], col0 + c, row_sum);
            Q* y = static_cast<Q*>(out) + (row0 + r) * n + col0;
            requantize_row(sums, multipliers + col0, y_zero, y, cols);
        }
    }
};


// MatMulInteger or QLinearMatMul with B a constant [K, N] of u8 or i8 and zero points per
// tensor or (B's) per column. The packed kernel multiplies u8 by s8, so both sides are shifted
// into those types: an i8 A by +128 (and its zero point with it), a u8 B by -128; the
// differences a - za and b - zb, all the product depends on, stay the same. Then
//   Σ (a - za)(b - zb) = Σ a·b - za·Σ_k b - zb·Σ_k a + K·za·zb,
// the column sums coming packed with B and the row sums from packing A. QLinearMatMul then
// scales each sum by a_scale · b_scale / y_scale (in f64, as the plain kernel does), rounds to
// nearest even, adds Y's zero point and saturates; MatMulIntegerToFloat multiplies it by its
// column's scale and adds the bias, in f32, while the tile is in cache.
class PackedIntegerProduct final : public CompiledKernel {
public:
    PackedIntegerProduct(const CompileContext& c, IntegerProductForm form, size_t rows, size_t k) : form_(form), rows_(rows) {
        const Tensor& b = *c.constant(form.b);
        layout_ = int8_weight_layout(int8_kernel(), static_cast<int64_t>(k), b.shape()[1]);
        const Int8WeightLayout layout = layout_;
        const Tensor* zero = c.constant(form.b_zero);
        weight_ = c.prepacked(form.b, "int8/" + std::string(int8_kernel_name(layout.kernel)), [layout](const Tensor& value) {
            return pack_shifted(layout, value);
        });
        // B's zero points, shifted as B was, one per column.
        b_zero_.assign(static_cast<size_t>(layout.n), b.dtype() == DType::u8 ? -128 : 0);
        if (zero)
            for (int64_t j = 0; j < layout.n; ++j) b_zero_[j] += int8_value(*zero, zero->numel() == 1 ? 0 : j);
    }

    // Whether the packed kernel takes this node: B constant and 2-D, zero points per tensor
    // (B's also per column) and constant for B, the dtypes it knows; for QLinearMatMul scales
    // per tensor (B's also per column) and an 8-bit Y.
    static bool takes(const CompileContext& c, IntegerProductForm form) {
        const NodeSignature& node = c.node();
        const Tensor* b = c.constant(form.b);
        if (!b || b->rank() != 2 || node.input_shapes[form.a].rank() < 1) return false;
        const auto integer8 = [](DType t) { return t == DType::u8 || t == DType::i8; };
        if (!integer8(b->dtype()) || !integer8(node.input_dtypes[form.a])) return false;
        const Shape& a = node.input_shapes[form.a];
        if (a[a.rank() - 1] != b->shape()[0]) return false;
        const auto present = [&](size_t i) { return i < node.inputs_present.size() && node.inputs_present[i]; };
        if (present(form.a_zero) &&
            (node.input_shapes[form.a_zero].numel() != 1 || node.input_dtypes[form.a_zero] != node.input_dtypes[form.a]))
            return false;
        if (present(form.b_zero)) {
            const Tensor* zero = c.constant(form.b_zero);
            if (!zero || zero->dtype() != b->dtype() || (zero->numel() != 1 && zero->numel() != b->shape()[1])) return false;
        }
        if (form.output == IntegerOutput::dequantized) {
            const int64_t n = b->shape()[1];
            if (b->shape()[0] > kMaxDequantizedK) return false;
            if (node.input_dtypes[2] != DType::f32 || (node.input_shapes[2].numel() != 1 && node.input_shapes[2].numel() != n))
                return false;
            if (present(5) && (node.input_dtypes[5] != DType::f32 || node.input_shapes[5].numel() != n)) return false;
            if (present(6) && (node.input_dtypes[6] != DType::f32 || !integer8(node.input_dtypes[7]))) return false;
        }
        if (form.output == IntegerOutput::requantized) {
            const int64_t n = b->shape()[1];
            for (size_t i : {size_t{1}, size_t{4}, size_t{6}})
                if (node.input_dtypes[i] != DType::f32) return false;
            if (node.input_shapes[1].numel() != 1 || node.input_shapes[6].numel() != 1 || node.input_shapes[7].numel() != 1)
                return false;
            if (node.input_shapes[4].numel() != 1 && node.input_shapes[4].numel() != n) return false;
            if (!integer8(node.output_dtypes[0]) || node.input_dtypes[7] != node.output_dtypes[0]) return false;
        }
        return true;
    }

    // Per column: QLinearMatMul's f64 multipliers, or MatMulIntegerToFloat's f32 scales and bias.
    size_t column_bytes() const {
        const auto n = static_cast<size_t>(layout_.n);
        switch (form_.output) {
            case IntegerOutput::requantized: return n * sizeof(double);
            case IntegerOutput::dequantized: return 2 * n * sizeof(float);
            default: return 0;
        }
    }

    size_t workspace_bytes() const override {
        return column_bytes() + rows_ * static_cast<size_t>(int8_row_stride(layout_)) + rows_ * sizeof(int32_t) +
               int8_gemm_scratch_bytes(layout_, rows_);
    }

    void run(KernelContext& ctx) const override {
        const Tensor& a = ctx.input(form_.a);
        Tensor& out = ctx.output(0);
        if (out.numel() == 0) return;
        const int64_t k = layout_.k, n = layout_.n, stride = int8_row_stride(layout_), rows = out.numel() / n;
        const bool signed_a = a.dtype() == DType::i8;
        int32_t a_zero = ctx.has_input(form_.a_zero) ? int8_value(ctx.input(form_.a_zero), 0) : 0;
        if (signed_a) a_zero += 128;
        auto* workspace = static_cast<uint8_t*>(ctx.workspace(workspace_bytes()));
        // Column values (8-byte multiples), the row sums, then A's packed bytes: sums after the
        // bytes were misaligned whenever rows · stride was not a multiple of 4 (the avx2 layout).
        auto* row_sums = reinterpret_cast<int32_t*>(workspace + column_bytes());
        auto* packed_a = reinterpret_cast<uint8_t*>(row_sums + rows);
        pack_int8_rows(static_cast<const uint8_t*>(a.raw_data()), rows, k, stride, signed_a, packed_a, row_sums);
        // The output's address once: Tensor::data checks host access at every call.
        Correction state{packed_column_sums(layout_, weight_.data<uint8_t>()), b_zero_.data(), row_sums, a_zero, k, n,
                         out.raw_data(), out.dtype()};
        if (form_.output == IntegerOutput::requantized) {
            auto* multipliers = reinterpret_cast<double*>(workspace);
            const Tensor& b_scale = ctx.input(4);
            const double a_scale = ctx.input(1).data<float>()[0], y_scale = ctx.input(6).data<float>()[0];
            for (int64_t j = 0; j < n; ++j) multipliers[j] = a_scale * b_scale.data<float>()[b_scale.numel() == 1 ? 0 : j] / y_scale;
            state.multipliers = multipliers;
            state.y_zero = int8_value(ctx.input(7), 0);
        }
        if (form_.output == IntegerOutput::dequantized) {
            // Scale and bias as full rows, so that the epilogue's loop has no per-element choice.
            auto* scales = reinterpret_cast<float*>(workspace);
            float* bias = scales + n;
            const Tensor& scale = ctx.input(2);
            const float* ps = scale.data<float>();
            for (int64_t j = 0; j < n; ++j) scales[j] = ps[scale.numel() == 1 ? 0 : j];
            if (ctx.has_input(5)) std::copy_n(ctx.input(5).data<float>(), n, bias);
            else std::fill_n(bias, n, 0.0f);
            state.scales = scales;
            state.bias = bias;
            if (ctx.has_input(6)) state.y_grid = YGrid::of(ctx.input(6), ctx.input(7));
        }
        // The kernel's scratch (A widened) after A's bytes, an even count on the kernels that widen.
        gemm_u8s8(layout_, weight_.data<uint8_t>(), packed_a, rows, &Correction::tile, &state, packed_a + rows * stride);
    }

private:
    // B as s8: u8 values less 128.
    static Tensor pack_shifted(const Int8WeightLayout& layout, const Tensor& b) {
        std::vector<int8_t> s8(static_cast<size_t>(b.numel()));
        for (int64_t i = 0, count = b.numel(); i < count; ++i)
            s8[i] = b.dtype() == DType::u8 ? static_cast<int8_t>(int32_t{b.data<uint8_t>()[i]} - 128) : b.data<int8_t>()[i];
        return pack_int8_weight(layout, s8.data(), layout.n);
    }

    IntegerProductForm form_;
    size_t rows_;
    Int8WeightLayout layout_{};
    Tensor weight_;
    std::vector<int32_t> b_zero_;
};

// An integer product of two activations (attention's in a quantized file: MatMulIntegerToFloat
// from a QDQ file, QLinearMatMul in the operator format): every batch matrix of B packed at run
// time (K·N bytes against M·K·N multiply-adds), then the packed kernel and the epilogue of the
// weight products; the batch's matrices (heads) spread over the pool, each product inline in
// its task. Scales and zero points per tensor, as files quantize activations.
class RuntimePackedProduct final : public CompiledKernel {
public:
    explicit RuntimePackedProduct(IntegerProductForm form) : form_(form) {}

    static bool takes(const CompileContext& c, IntegerProductForm form) {
        const NodeSignature& node = c.node();
        if (c.constant(form.b)) return false;  // a weight: PackedIntegerProduct
        const Shape &a = node.input_shapes[form.a], &b = node.input_shapes[form.b];
        if (a.rank() < 2 || b.rank() < 2 || a[a.rank() - 1] != b[b.rank() - 2] || b[b.rank() - 2] > kMaxDequantizedK)
            return false;
        const auto integer8 = [](DType t) { return t == DType::u8 || t == DType::i8; };
        if (!integer8(node.input_dtypes[form.a]) || !integer8(node.input_dtypes[form.b])) return false;
        const auto present = [&](size_t i) { return i < node.inputs_present.size() && node.inputs_present[i]; };
        const auto one_value = [&](size_t i) { return !present(i) || node.input_shapes[i].numel() == 1; };
        if (!one_value(form.a_zero) || !one_value(form.b_zero)) return false;
        switch (form.output) {
            case IntegerOutput::dequantized:
                return node.input_dtypes[2] == DType::f32 && one_value(2) && one_value(6) &&
                       (!present(5) || node.input_shapes[5].numel() == b[b.rank() - 1]);
            case IntegerOutput::requantized:
                for (size_t i : {size_t{1}, size_t{4}, size_t{6}})
                    if (node.input_dtypes[i] != DType::f32 || !one_value(i)) return false;
                return one_value(7) && integer8(node.output_dtypes[0]) && node.input_dtypes[7] == node.output_dtypes[0];
            default: return node.output_dtypes[0] == DType::i32;
        }
    }

    void run(KernelContext& ctx) const override {
        const Tensor &a = ctx.input(form_.a), &b = ctx.input(form_.b);
        Tensor& out = ctx.output(0);
        if (out.numel() == 0) return;
        const Shape &sa = a.shape(), &sb = b.shape();
        const int64_t m = sa[sa.rank() - 2], k = sa[sa.rank() - 1], n = sb[sb.rank() - 1];
        const size_t rank = out.rank() - 2;
        const std::vector<int64_t> batch(out.shape().dims().begin(), out.shape().dims().end() - 2);
        const std::vector<int64_t> a_steps = batch_steps(sa, sa.rank() - 2, rank), b_steps = batch_steps(sb, sb.rank() - 2, rank);
        const Int8WeightLayout layout = int8_weight_layout(int8_kernel(), k, n);
        const int64_t stride = int8_row_stride(layout);
        const bool signed_a = a.dtype() == DType::i8, unsigned_b = b.dtype() == DType::u8;
        const int32_t a_zero = (ctx.has_input(form_.a_zero) ? int8_value(ctx.input(form_.a_zero), 0) : 0) + (signed_a ? 128 : 0);
        // B's zero point, shifted as B is (u8 less 128 to s8).
        const std::vector<int32_t> b_zero(static_cast<size_t>(n), (ctx.has_input(form_.b_zero) ? int8_value(ctx.input(form_.b_zero), 0) : 0) -
                                                                     (unsigned_b ? 128 : 0));
        // What the epilogue needs besides the sums, the same for every matrix.
        Correction common{nullptr, b_zero.data(), nullptr, a_zero, k, n, nullptr, out.dtype()};
        std::vector<float> scales, bias;
        std::vector<double> multipliers;
        if (form_.output == IntegerOutput::dequantized) {
            scales.assign(static_cast<size_t>(n), ctx.input(2).data<float>()[0]);
            bias.assign(static_cast<size_t>(n), 0.0f);
            if (ctx.has_input(5)) std::copy_n(ctx.input(5).data<float>(), n, bias.data());
            common.scales = scales.data();
            common.bias = bias.data();
            if (ctx.has_input(6)) common.y_grid = YGrid::of(ctx.input(6), ctx.input(7));
        } else if (form_.output == IntegerOutput::requantized) {
            multipliers.assign(static_cast<size_t>(n), double(ctx.input(1).data<float>()[0]) * ctx.input(4).data<float>()[0] /
                                                           ctx.input(6).data<float>()[0]);
            common.multipliers = multipliers.data();
            common.y_zero = int8_value(ctx.input(7), 0);
        }
        const auto* pa = static_cast<const uint8_t*>(a.raw_data());
        const auto* pb = static_cast<const uint8_t*>(b.raw_data());
        auto* py = static_cast<char*>(out.raw_data());
        const size_t element = dtype_size(out.dtype());
        parallel_for(product(batch, 0, rank), 1, [&](int64_t begin, int64_t end) {
            std::vector<int8_t> b_s8(static_cast<size_t>(k * n));
            std::vector<uint8_t> a_rows(static_cast<size_t>(m * stride));
            std::vector<int32_t> row_sums(static_cast<size_t>(m));
            for (int64_t p = begin; p < end; ++p) {
                const auto [oa, ob] = batch_offsets(p, batch, a_steps, b_steps);
                const uint8_t* b_matrix = pb + ob * k * n;
                for (int64_t i = 0; i < k * n; ++i)
                    b_s8[static_cast<size_t>(i)] = static_cast<int8_t>(unsigned_b ? int32_t{b_matrix[i]} - 128 : int8_t(b_matrix[i]));
                const Tensor packed = pack_int8_weight(layout, b_s8.data(), n);
                pack_int8_rows(pa + oa * m * k, m, k, stride, signed_a, a_rows.data(), row_sums.data());
                Correction state = common;
                state.column_sums = packed_column_sums(layout, packed.data<uint8_t>());
                state.row_sums = row_sums.data();
                state.out = py + static_cast<size_t>(p * m * n) * element;
                gemm_u8s8(layout, packed.data<uint8_t>(), a_rows.data(), m, &Correction::tile, &state);
            }
        });
    }

private:
    IntegerProductForm form_;
};

// The packed kernel where it takes the node, else the plain loops.
KernelFactory integer_product(IntegerProductForm form, Kernel plain) {
    return [form, plain](const CompileContext& c) -> std::unique_ptr<CompiledKernel> {
        if (RuntimePackedProduct::takes(c, form)) return std::make_unique<RuntimePackedProduct>(form);
        if (!PackedIntegerProduct::takes(c, form)) return std::make_unique<FunctionKernel>(plain);
        const Shape& a = c.node().input_shapes[form.a];
        const int64_t k = a[a.rank() - 1];
        return std::make_unique<PackedIntegerProduct>(c, form, static_cast<size_t>(k > 0 ? a.numel() / k : 0),
                                                      static_cast<size_t>(k));
    };
}

}  // namespace

void register_integer_matmul_kernels(KernelRegistry& r) {
    for (DType t : {DType::u8, DType::i8}) {
        r.add_compiled("MatMulInteger", t, integer_product(kMatMulInteger, matmul_integer_kernel));
        r.add_compiled("QLinearMatMul", t, integer_product(kQLinearMatMul, qlinear_matmul_kernel));
        r.add_compiled("MatMulIntegerToFloat", t, integer_product(kMatMulIntegerToFloat, matmul_integer_to_float_kernel));
    }
}

}  // namespace infer::cpu
