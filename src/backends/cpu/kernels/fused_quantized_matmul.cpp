// QuantizedMatMul (core/ops/table_fused.cpp): the int8 form of FusedMatMul that
// `precision = int8` makes of products by a weight. The weight is quantized once per session,
// symmetric per output column (s8, scale max|W[:, n]| / 127), and packed for the int8 kernel;
// each run quantizes A per row (u8, asymmetric: the row's range including 0 over 255 steps),
// multiplies exactly in i32 (with a calibrated range, attributes a_low and a_high, every row
// takes that one range instead), and the epilogue dequantizes, adds the bias and applies the
// activation while the tile is in cache:
//   y[r, n] = (acc[r, n] - zero[r] · Σ_k Wq[k, n]) · scale[r] · wscale[n] + bias[n]
#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/gelu_rows.hpp"
#include "backends/cpu/kernels/vector_gelu.hpp"
#include "backends/cpu/kernels/int8_gemm.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "backends/cpu/kernels/quantized_rows.hpp"
#include "backends/cpu/kernels/register.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace infer::cpu {

namespace {

// Quantizes W [K, N] (f32) per column and packs it; the column scales follow the packed bytes.
Tensor quantize_weight(const Int8WeightLayout& layout, const Tensor& w) {
    const int64_t k = layout.k, n = layout.n;
    const float* pw = w.data<float>();
    std::vector<float> scale(static_cast<size_t>(n), 0.0f);
    for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j) scale[j] = std::max(scale[j], std::fabs(pw[i * n + j]));
    for (float& s : scale) s = s > 0 ? s / 127.0f : 1.0f;
    std::vector<int8_t> q(static_cast<size_t>(k * n));
    for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j)
            q[i * n + j] = static_cast<int8_t>(std::clamp(std::nearbyint(pw[i * n + j] / scale[j]), -127.0f, 127.0f));
    const Tensor packed = pack_int8_weight(layout, q.data(), n);
    Tensor out = Tensor::empty(DType::u8, Shape({layout.bytes + n * int64_t{sizeof(float)}}));
    std::copy_n(packed.data<uint8_t>(), layout.bytes, out.data<uint8_t>());
    std::copy_n(scale.data(), n, reinterpret_cast<float*>(out.data<uint8_t>() + layout.bytes));
    return out;
}

// One row of a tile: out[c] = (acc[c] - zero · sums[c]) · scale · scales[c] + bias[c], ReLU'd.
void dequantize_row(const int32_t* acc, int32_t zero, const int32_t* sums, float scale, const float* scales,
                    const float* bias, bool relu, float* out, int64_t cols) {
    for (int64_t c = 0; c < cols; ++c) {
        float v = static_cast<float>(acc[c] - zero * sums[c]) * (scale * scales[c]);
        if (bias) v += bias[c];
        out[c] = relu ? std::max(v, 0.0f) : v;
    }
}

// One tile's rows the same way, a vector of columns at a time, and GELU too while the values
// are in registers (a pass of its own over the tile, after, took 9% of an int8 MiniLM run on a
// Zen 3). A vector of columns' sums, scales and bias is loaded once for all the tile's rows:
// called per row, the epilogue spent as much in its calls and constants as in its arithmetic
// (a tile row is 4 vectors). The last columns go through the same vector steps on zero-padded
// copies, so that a column's value does not depend on where a tile's edge falls (a tail in
// scalar code, compiled without FMA, rounded differently from the vector lanes).
struct DequantizeTile {
    const int32_t* acc;
    int64_t ld;            // acc's row step
    int64_t rows, cols;
    const int32_t* zero;   // per row
    const float* scale;    // per row
    const int32_t* sums;   // per column: Σ_k Wq[k, c]
    const float* scales;   // per column
    const float* bias;     // per column, or null
    bool relu, gelu;
    float* out;
    int64_t out_ld;
};

template <class V>
[[gnu::always_inline]] inline V dequantized_lanes(IntLanes<V> acc, int32_t zero, IntLanes<V> sums, float scale, V scales,
                                                  V bias, bool relu, bool gelu) {
    V v = __builtin_convertvector(acc - zero * sums, V) * (scale * scales) + bias;
    if (relu) v = v > 0.0f ? v : 0.0f;
    if (gelu) v = gelu_lanes(v);
    return v;
}

template <class V>
[[gnu::always_inline]] inline void dequantize_tile_lanes(const DequantizeTile& t) {
    constexpr int64_t lanes = kLanes<V>;
    int64_t c = 0;
    for (; c + lanes <= t.cols; c += lanes) {
        const IntLanes<V> sums = load_int_lanes<V>(t.sums + c);
        const V scales = load_lanes<V>(t.scales + c), bias = t.bias ? load_lanes<V>(t.bias + c) : splat<V>(0.0f);
        for (int64_t r = 0; r < t.rows; ++r)
            store_lanes(t.out + r * t.out_ld + c, dequantized_lanes<V>(load_int_lanes<V>(t.acc + r * t.ld + c), t.zero[r],
                                                                       sums, t.scale[r], scales, bias, t.relu, t.gelu));
    }
    if (c == t.cols) return;
    const int64_t rest = t.cols - c;
    int32_t sums_rest[lanes] = {}, acc_rest[lanes] = {};
    float scales_rest[lanes] = {}, bias_rest[lanes] = {}, out_rest[lanes];
    std::copy_n(t.sums + c, rest, sums_rest);
    std::copy_n(t.scales + c, rest, scales_rest);
    if (t.bias) std::copy_n(t.bias + c, rest, bias_rest);
    const IntLanes<V> sums = load_int_lanes<V>(sums_rest);
    const V scales = load_lanes<V>(scales_rest), bias = load_lanes<V>(bias_rest);
    for (int64_t r = 0; r < t.rows; ++r) {
        std::copy_n(t.acc + r * t.ld + c, rest, acc_rest);
        store_lanes(out_rest, dequantized_lanes<V>(load_int_lanes<V>(acc_rest), t.zero[r], sums, t.scale[r], scales, bias,
                                                   t.relu, t.gelu));
        std::copy_n(out_rest, rest, t.out + r * t.out_ld + c);
    }
}

__attribute__((target("avx2,fma"))) void dequantize_tile_avx2(const DequantizeTile& t) { dequantize_tile_lanes<__m256>(t); }
__attribute__((target("avx512f"))) void dequantize_tile_avx512(const DequantizeTile& t) { dequantize_tile_lanes<__m512>(t); }

struct Dequantize {
    const QuantizedRows* rows;
    const int32_t* column_sums;
    const float* column_scales;
    const float* bias;
    float* y;
    int64_t n;
    RowActivation activation;

    static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const int32_t* acc, int64_t ld) {
        const VectorIsa isa = float_vector_isa();
        const auto& d = *static_cast<const Dequantize*>(self);
        const bool relu = d.activation == RowActivation::relu,
                   gelu = isa != VectorIsa::scalar && d.activation == RowActivation::gelu;
        const float* bias = d.bias ? d.bias + col0 : nullptr;
        float* out = d.y + row0 * d.n + col0;
        const DequantizeTile t{acc,  ld,   rows, cols, d.rows->zero + row0, d.rows->scale + row0, d.column_sums + col0,
                               d.column_scales + col0, bias, relu, gelu, out, d.n};
        switch (isa) {
        case VectorIsa::avx512: dequantize_tile_avx512(t); break;
        case VectorIsa::avx2: dequantize_tile_avx2(t); break;
        case VectorIsa::scalar:
            for (int64_t r = 0; r < rows; ++r)
                dequantize_row(acc + r * ld, t.zero[r], t.sums, t.scale[r], t.scales, bias, relu, out + r * d.n, cols);
        }
        if (!relu && !gelu)
            for (int64_t r = 0; r < rows; ++r) activate_row(out + r * d.n, cols, d.activation);
    }
};

class QuantizedMatMulKernel final : public CompiledKernel {
public:
    explicit QuantizedMatMulKernel(const CompileContext& c) {
        const NodeSignature& node = c.node();
        const Shape& a = node.input_shapes[0];
        const Shape& w = node.input_shapes[1];
        k_ = w[0];
        n_ = w[1];
        rows_ = 1;
        for (size_t i = 0; i + 1 < a.rank(); ++i) rows_ *= a[i];
        layout_ = int8_weight_layout(int8_kernel(), k_, n_);
        if (node.attributes->has("a_low") && node.attributes->has("a_high"))
            range_ = {node.attributes->get_float("a_low", 0.0f), node.attributes->get_float("a_high", 0.0f)};
        activation_ = row_activation_named(node.attributes->get_string("activation", ""));
        if (c.constant(1)) {
            const Int8WeightLayout layout = layout_;
            weight_ = c.prepacked(1, "int8/" + std::string(int8_kernel_name(layout.kernel)),
                                  [layout](const Tensor& value) { return quantize_weight(layout, value); });
        }
    }

    size_t workspace_bytes() const override {
        return quantized_rows_bytes(rows_, int8_row_stride(layout_)) + int8_gemm_scratch_bytes(layout_, rows_);
    }

    void run(KernelContext& ctx) const override {
        const Tensor& a = ctx.input(0);
        Tensor& out = ctx.output(0);
        if (out.numel() == 0) return;
        // A weight computed at run time (never made by the pass, but legal) is quantized per run.
        const Tensor weight = weight_.defined() ? weight_ : quantize_weight(layout_, ctx.input(1));
        const auto* packed = weight.data<uint8_t>();
        const int64_t rows = out.numel() / n_;
        const size_t rows_bytes = quantized_rows_bytes(rows, int8_row_stride(layout_));
        auto* memory = static_cast<char*>(ctx.workspace(rows_bytes + int8_gemm_scratch_bytes(layout_, rows)));
        const QuantizedRows q =
            range_ ? quantize_rows_in_range(a.data<float>(), rows, k_, int8_row_stride(layout_), range_->first,
                                            range_->second, memory)
                   : quantize_rows(a.data<float>(), rows, k_, int8_row_stride(layout_), memory);
        Dequantize d{&q,
                     packed_column_sums(layout_, packed),
                     reinterpret_cast<const float*>(packed + layout_.bytes),
                     ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr,
                     out.data<float>(),
                     n_,
                     activation_};
        gemm_u8s8(layout_, packed, q.values, rows, &Dequantize::tile, &d, memory + rows_bytes);
    }

private:
    int64_t k_ = 0, n_ = 0, rows_ = 0;
    Int8WeightLayout layout_{};
    RowActivation activation_ = RowActivation::none;
    std::optional<std::pair<float, float>> range_;  // static quantization: A's calibrated range
    Tensor weight_;
};

}  // namespace

void register_quantized_matmul_kernel(KernelRegistry& r) {
    r.add_compiled("QuantizedMatMul", DType::f32,
                   [](const CompileContext& c) { return std::make_unique<QuantizedMatMulKernel>(c); });
}

}  // namespace infer::cpu
