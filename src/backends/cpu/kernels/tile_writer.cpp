// TileWriter (packed_float_gemm.hpp): the float products' usual epilogue, a tile at a time.
// Built with -ffp-contract=off (src/CMakeLists.txt): scale · x + bias is a product rounded, then
// a sum rounded, in the whole vectors, the tails and the row path alike. Left to GCC, it fused
// them at -O2 and not always at -O1 (the sanitizer builds), and a column's value then depended
// on where a tile's edge fell.
#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/half_convert.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"
#include "backends/cpu/kernels/vector_gelu.hpp"
#include "backends/cpu/kernels/vector_lanes.hpp"

#include <algorithm>

namespace infer::cpu {
namespace {

// Row by row through the row kernels: where no vector path is (a CPU without AVX2, the tanh
// GELU), and the reference the vector path computes the same as.
void write_rows(const TileWriter& w, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc,
                int64_t ld) {
    alignas(64) float narrowed[kFloatTileColumns];
    for (int64_t r = 0; r < rows; ++r) {
        const float* from = acc + r * ld;
        float* to = w.bf16_out ? narrowed : static_cast<float*>(w.y) + (row0 + r) * w.ld + col0;
        const float* bias = w.bias ? w.bias + col0 : nullptr;
        for (int64_t c = 0; c < cols; ++c) to[c] = from[c] * w.scale + (bias ? bias[c] : 0.0f);
        activate_row(to, cols, w.activation);
        if (w.bf16_out)
            float_to_bfloat16_serial(narrowed, static_cast<uint16_t*>(w.y) + (row0 + r) * w.ld + col0,
                                     static_cast<size_t>(cols));
    }
}

template <class V>
using HalfWordLanes = typename VectorOf<uint16_t, sizeof(V) / 2>::type;

// f32 lanes to bf16 bits as float_to_bfloat16_bits rounds them: to nearest even, a NaN kept
// quiet with its sign and top payload bits.
template <class V>
[[gnu::always_inline]] inline HalfWordLanes<V> bfloat16_lanes(V v) {
    using I = IntLanes<V>;
    const I f = (I)v;
    const I high = (I)((typename VectorOf<uint32_t, sizeof(V)>::type)f >> 16);  // logical shift
    const I rounded = (I)((typename VectorOf<uint32_t, sizeof(V)>::type)(f + 0x7fff + (high & 1)) >> 16);
    const I bits = (f & 0x7fffffff) > 0x7f800000 ? (high | 0x40) : rounded;
    return __builtin_convertvector(bits, HalfWordLanes<V>);
}

// Rows of one vector of columns (a vector's worth of bias loaded once for all of them). The last
// columns of a tile come here as zero-padded copies, so a column's value does not depend on
// where a tile's edge falls.
template <class V>
[[gnu::always_inline]] inline void write_column_vector(const TileWriter& w, int64_t rows, const float* acc, int64_t ld,
                                                       V bias, void* out, int64_t out_ld) {
    for (int64_t r = 0; r < rows; ++r) {
        V v = load_lanes<V>(acc + r * ld) * w.scale + bias;
        if (w.activation == RowActivation::relu) v = v < 0.0f ? 0.0f : v;  // NaN stays NaN
        else if (w.activation == RowActivation::gelu) v = gelu_lanes(v);
        if (w.bf16_out) {
            const HalfWordLanes<V> bits = bfloat16_lanes(v);
            std::memcpy(static_cast<uint16_t*>(out) + r * out_ld, &bits, sizeof bits);
        } else {
            store_lanes(static_cast<float*>(out) + r * out_ld, v);
        }
    }
}

template <class V>
[[gnu::always_inline]] inline void write_tile_lanes(const TileWriter& w, int64_t row0, int64_t rows, int64_t col0,
                                                    int64_t cols, const float* acc, int64_t ld) {
    constexpr int64_t L = kLanes<V>;
    const size_t element = w.bf16_out ? sizeof(uint16_t) : sizeof(float);
    char* out = static_cast<char*>(w.y) + static_cast<size_t>(row0 * w.ld + col0) * element;
    int64_t c = 0;
    for (; c + L <= cols; c += L)
        write_column_vector<V>(w, rows, acc + c, ld, w.bias ? load_lanes<V>(w.bias + col0 + c) : splat<V>(0.0f),
                               out + static_cast<size_t>(c) * element, w.ld);
    if (c == cols) return;
    const int64_t rest = cols - c;
    alignas(64) float acc_rest[kFloatTileRows * L] = {}, bias_rest[L] = {};
    alignas(64) float out_rest[kFloatTileRows * L];
    for (int64_t r = 0; r < rows; ++r) std::copy_n(acc + r * ld + c, rest, acc_rest + r * L);
    if (w.bias) std::copy_n(w.bias + col0 + c, rest, bias_rest);
    write_column_vector<V>(w, rows, acc_rest, L, load_lanes<V>(bias_rest), out_rest, L);
    const size_t row_bytes = static_cast<size_t>(rest) * element, step = static_cast<size_t>(w.ld) * element;
    for (int64_t r = 0; r < rows; ++r)
        std::memcpy(out + static_cast<size_t>(c) * element + static_cast<size_t>(r) * step,
                    reinterpret_cast<const char*>(out_rest) + static_cast<size_t>(r * L) * element, row_bytes);
}

__attribute__((target("avx2,fma"))) void write_tile_avx2(const TileWriter& w, int64_t row0, int64_t rows, int64_t col0,
                                                         int64_t cols, const float* acc, int64_t ld) {
    write_tile_lanes<__m256>(w, row0, rows, col0, cols, acc, ld);
}
__attribute__((target("avx512f,avx512bw,avx512vl"))) void write_tile_avx512(const TileWriter& w, int64_t row0,
                                                                           int64_t rows, int64_t col0, int64_t cols,
                                                                           const float* acc, int64_t ld) {
    write_tile_lanes<__m512>(w, row0, rows, col0, cols, acc, ld);
}

}  // namespace

// Each vector of columns goes through the scale, bias, activation and bf16 rounding in registers:
// row by row, the activation's and the narrowing's calls and passes over a 64-column tile row
// took as long as the arithmetic (GELU 4.7% and the narrowing 4.2% of a bf16 MiniLM run).
void TileWriter::tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const float* acc, int64_t ld) {
    const auto& w = *static_cast<const TileWriter*>(self);
    const bool vector_activation = w.activation != RowActivation::gelu_tanh;
    switch (vector_activation && rows <= kFloatTileRows ? float_vector_isa() : VectorIsa::scalar) {
    case VectorIsa::avx512: return write_tile_avx512(w, row0, rows, col0, cols, acc, ld);
    case VectorIsa::avx2: return write_tile_avx2(w, row0, rows, col0, cols, acc, ld);
    case VectorIsa::scalar: return write_rows(w, row0, rows, col0, cols, acc, ld);
    }
}

}  // namespace infer::cpu
