#include "backends/cpu/kernels/int8_gemm.hpp"

#include "backends/cpu/kernels/amx_gemm.hpp"
#include "backends/cpu/kernels/cpu_features.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <infer/error.hpp>

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace infer::cpu {

namespace {

// Copies a row of A, its bytes xor `flip`, 32 at a time, and returns the sum of what it wrote
// (vpsadbw against zero sums bytes); `done` is where it stopped.
__attribute__((target("avx2"))) int32_t copy_and_sum_avx2(const uint8_t* from, uint8_t* to, int64_t k, uint8_t flip,
                                                          int64_t& done) {
    const __m256i mask = _mm256_set1_epi8(static_cast<char>(flip)), zero = _mm256_setzero_si256();
    __m256i sums = zero;
    int64_t j = 0;
    for (; j + 32 <= k; j += 32) {
        const __m256i v = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + j)), mask);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + j), v);
        sums = _mm256_add_epi64(sums, _mm256_sad_epu8(v, zero));
    }
    done = j;
    alignas(32) int64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sums);
    return static_cast<int32_t>(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// u8 to i16, 16 at a time; returns how many it did.
__attribute__((target("avx2"))) int64_t widen_avx2(const uint8_t* from, int16_t* to, int64_t count) {
    int64_t i = 0;
    for (; i + 16 <= count; i += 16)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + i),
                            _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i))));
    return i;
}

// `rows` rows of `stride` u8 values as i16, in parallel over rows.
void widen_rows(const uint8_t* from, int64_t rows, int64_t stride, int16_t* to) {
    const bool avx2 = has_avx2();
    parallel_for(rows, grain_for(stride), [&](int64_t begin, int64_t end) {
        const int64_t first = begin * stride, count = (end - begin) * stride;
        int64_t i = avx2 ? widen_avx2(from + first, to + first, count) : 0;
        for (; i < count; ++i) to[first + i] = from[first + i];
    });
}

// Tile shapes: rows of A per tile and panels of B per tile, chosen so that the accumulators,
// the weight registers and one broadcast A value fill the register file without spilling
// (VNNI: 6×4 + 4 of 32 zmm; AVX2: 4×3 + 3 + 1 of 16 ymm).
struct TileShape {
    int rows, panels;
};
TileShape tile_shape(Int8Kernel kernel) {
    return kernel == Int8Kernel::avx512_vnni ? TileShape{6, 4} : TileShape{4, 3};
}
constexpr int64_t kMaxTileRows = kInt8TileRows, kMaxTileCols = kInt8TileColumns;

// ---- AVX-512 VNNI: panels of 16 columns, K in groups of 4 bytes; one vpdpbusd per group
// and panel adds four u8×s8 products into each of 16 i32 lanes.
template <int R, int P>
__attribute__((target("avx512f,avx512bw,avx512vnni"))) void tile_vnni(const uint8_t* a, int64_t lda,
                                                                       const uint8_t* b, int64_t panel_bytes,
                                                                       int64_t groups, int32_t* acc) {
    __m512i sum[R][P];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) sum[r][p] = _mm512_setzero_si512();
    for (int64_t g = 0; g < groups; ++g) {
        __m512i w[P];
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) w[p] = _mm512_loadu_si512(b + p * panel_bytes + g * 64);
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            int32_t four;
            std::memcpy(&four, a + r * lda + g * 4, 4);
            const __m512i x = _mm512_set1_epi32(four);
#pragma GCC unroll 4
            for (int p = 0; p < P; ++p) sum[r][p] = _mm512_dpbusd_epi32(sum[r][p], x, w[p]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) _mm512_storeu_si512(acc + r * kMaxTileCols + p * 16, sum[r][p]);
}

// ---- AVX2: panels of 8 columns, K in pairs of i16; vpmaddwd multiplies the pair of A (one
// broadcast i32) by each column's pair and adds the two products into its i32 lane.
template <int R, int P>
__attribute__((target("avx2"))) void tile_avx2(const int16_t* a, int64_t lda, const uint8_t* b, int64_t panel_bytes,
                                               int64_t groups, int32_t* acc) {
    __m256i sum[R][P];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p) sum[r][p] = _mm256_setzero_si256();
    for (int64_t g = 0; g < groups; ++g) {
        __m256i w[P];
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p)
            w[p] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + p * panel_bytes + g * 32));
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            int32_t pair;
            std::memcpy(&pair, a + r * lda + g * 2, 4);
            const __m256i x = _mm256_set1_epi32(pair);
#pragma GCC unroll 4
            for (int p = 0; p < P; ++p) sum[r][p] = _mm256_add_epi32(sum[r][p], _mm256_madd_epi16(x, w[p]));
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int p = 0; p < P; ++p)
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc + r * kMaxTileCols + p * 8), sum[r][p]);
}

// ---- portable: the AVX2 layout in plain C++.
void tile_portable(int rows, int panels, const int16_t* a, int64_t lda, const uint8_t* b, int64_t panel_bytes,
                   int64_t groups, int32_t* acc) {
    for (int r = 0; r < rows; ++r)
        for (int p = 0; p < panels; ++p) {
            const auto* w = reinterpret_cast<const int16_t*>(b + p * panel_bytes);
            int32_t* out = acc + r * kMaxTileCols + p * 8;
            for (int c = 0; c < 8; ++c) out[c] = 0;
            for (int64_t g = 0; g < groups; ++g)
                for (int c = 0; c < 8; ++c)
                    out[c] += int32_t{a[r * lda + 2 * g]} * w[g * 16 + 2 * c] + int32_t{a[r * lda + 2 * g + 1]} * w[g * 16 + 2 * c + 1];
        }
}

// Run-time rows and panels to the template instance that has them in registers.
template <template <int, int> class Table, int R = 1>
auto pick(int rows, int panels) {
    if constexpr (R < Table<1, 1>::max_rows) {
        if (rows > R) return pick<Table, R + 1>(rows, panels);
    }
    switch (panels) {
        case 1: return Table<R, 1>::fn;
        case 2: return Table<R, 2>::fn;
        case 3: return Table<R, 3>::fn;
        default: return Table<R, 4 <= Table<1, 1>::max_panels ? 4 : 3>::fn;
    }
}
template <int R, int P>
struct VnniTiles {
    static constexpr int max_rows = 6, max_panels = 4;
    static constexpr auto fn = &tile_vnni<R, P>;
};
template <int R, int P>
struct Avx2Tiles {
    static constexpr int max_rows = 4, max_panels = 3;
    static constexpr auto fn = &tile_avx2<R, P>;
};

bool cpu_has(Int8Kernel kernel) {
    switch (kernel) {
        case Int8Kernel::avx512_vnni:
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512vnni");
        case Int8Kernel::amx_int8: return amx_int8_usable();
        case Int8Kernel::avx2: return __builtin_cpu_supports("avx2");
        case Int8Kernel::portable: return true;
    }
    return false;
}

}  // namespace

bool int8_kernel_supported(Int8Kernel kernel) { return cpu_has(kernel); }

std::string_view int8_kernel_name(Int8Kernel kernel) {
    switch (kernel) {
        case Int8Kernel::amx_int8: return "amx_int8";
        case Int8Kernel::avx512_vnni: return "avx512_vnni";
        case Int8Kernel::avx2: return "avx2";
        case Int8Kernel::portable: return "portable";
    }
    return "?";
}

Int8Kernel int8_kernel() {
    Int8Kernel best = cpu_has(Int8Kernel::amx_int8)      ? Int8Kernel::amx_int8
                      : cpu_has(Int8Kernel::avx512_vnni) ? Int8Kernel::avx512_vnni
                      : cpu_has(Int8Kernel::avx2)      ? Int8Kernel::avx2
                                                       : Int8Kernel::portable;
    if (const char* wanted = std::getenv("INFER_INT8_KERNEL"); wanted && *wanted) {
        for (Int8Kernel k : {Int8Kernel::portable, Int8Kernel::avx2, Int8Kernel::avx512_vnni, Int8Kernel::amx_int8})
            if (int8_kernel_name(k) == wanted) {
                if (!cpu_has(k))
                    throw Unsupported("INFER_INT8_KERNEL=" + std::string(wanted) + ": this CPU cannot run that kernel");
                return k;
            }
        throw InvalidArgument("INFER_INT8_KERNEL=" + std::string(wanted) + ": expected portable, avx2, avx512_vnni or amx_int8");
    }
    return best;
}

Int8WeightLayout int8_weight_layout(Int8Kernel kernel, int64_t k, int64_t n) {
    Int8WeightLayout l;
    l.kernel = kernel;
    l.k = k;
    l.n = n;
    const bool vnni = kernel == Int8Kernel::avx512_vnni || kernel == Int8Kernel::amx_int8;
    l.group = vnni ? 4 : 2;
    l.panel_width = vnni ? 16 : 8;
    l.groups = ceil_div(std::max<int64_t>(k, 1), l.group);
    if (kernel == Int8Kernel::amx_int8) l.groups = ceil_div(l.groups, kAmxTileRows) * kAmxTileRows;  // whole B tiles
    l.panels = ceil_div(std::max<int64_t>(n, 1), l.panel_width);
    const int64_t element = vnni ? 1 : 2;  // s8, or s8 widened to i16
    l.panel_bytes = l.groups * l.group * l.panel_width * element;
    l.sums_offset = ceil_div(l.panels * l.panel_bytes, 64) * 64;
    l.bytes = l.sums_offset + l.panels * l.panel_width * int64_t{sizeof(int32_t)};
    return l;
}

Tensor pack_int8_weight(const Int8WeightLayout& l, const int8_t* b, int64_t ldb) {
    Tensor packed = Tensor::empty(DType::u8, Shape({l.bytes}));
    auto* out = packed.data<uint8_t>();
    std::memset(out, 0, static_cast<size_t>(l.bytes));
    auto* sums = reinterpret_cast<int32_t*>(out + l.sums_offset);
    const bool vnni = l.kernel == Int8Kernel::avx512_vnni || l.kernel == Int8Kernel::amx_int8;
    // Loops by row, panel and column, so that no index needs a division (products of two
    // activations pack their B at every run, a head at a time).
    for (int64_t kk = 0; kk < l.k; ++kk) {
        const int64_t g = kk / l.group, j = kk % l.group;
        const int8_t* row = b + kk * ldb;
        for (int64_t panel = 0; panel < l.panels; ++panel) {
            const int64_t col0 = panel * l.panel_width, cols = std::min(l.panel_width, l.n - col0);
            // Within a panel, group g holds panel_width columns of `group` consecutive K values.
            const int64_t first = g * l.panel_width * l.group + j;
            uint8_t* base = out + panel * l.panel_bytes;
            for (int64_t c = 0; c < cols; ++c) {
                const int8_t v = row[col0 + c];
                sums[col0 + c] += v;
                if (vnni)
                    reinterpret_cast<int8_t*>(base)[first + c * l.group] = v;
                else
                    reinterpret_cast<int16_t*>(base)[first + c * l.group] = v;
            }
        }
    }
    return packed;
}

size_t int8_gemm_scratch_bytes(const Int8WeightLayout& l, int64_t m) {
    const bool widens = l.kernel == Int8Kernel::avx2 || l.kernel == Int8Kernel::portable;
    return widens ? static_cast<size_t>(m * int8_row_stride(l)) * sizeof(int16_t) : 0;
}

void gemm_u8s8(const Int8WeightLayout& l, const uint8_t* packed, const uint8_t* a, int64_t m, Int8Epilogue epilogue,
               void* state, void* scratch) {
    if (m <= 0 || l.n <= 0) return;
    if (l.kernel == Int8Kernel::amx_int8) return gemm_amx_u8s8(l, packed, a, m, epilogue, state);
    const TileShape shape = tile_shape(l.kernel);
    const int64_t lda = int8_row_stride(l);
    const int64_t col_tiles = ceil_div(l.panels, shape.panels), row_tiles = ceil_div(m, shape.rows);
    const int64_t tile_macs = shape.rows * shape.panels * l.panel_width * l.groups * l.group;
    // The i16 kernels read A widened, once per call: widened per tile, A's rows were widened
    // again for every column tile (a third of the avx2 product's time on MiniLM's layers).
    std::vector<int16_t> own;
    int16_t* wide = static_cast<int16_t*>(scratch);
    if (l.kernel != Int8Kernel::avx512_vnni) {
        if (!wide) {
            own.resize(static_cast<size_t>(m * lda));
            wide = own.data();
        }
        widen_rows(a, m, lda, wide);
    }
    // Tasks run (column tile, row tile) in that order, so a thread's consecutive tiles reuse
    // the same panels of B from cache while rows of A stream past.
    parallel_for(col_tiles * row_tiles, grain_for(tile_macs, int64_t{1} << 20), [&](int64_t begin, int64_t end) {
        alignas(64) int32_t acc[kMaxTileRows * kMaxTileCols];
        for (int64_t t = begin; t < end; ++t) {
            const int64_t ct = t / row_tiles, rt = t % row_tiles;
            const int64_t row0 = rt * shape.rows, first_panel = ct * shape.panels;
            const int rows = static_cast<int>(std::min<int64_t>(shape.rows, m - row0));
            const int panels = static_cast<int>(std::min<int64_t>(shape.panels, l.panels - first_panel));
            const uint8_t* b = packed + first_panel * l.panel_bytes;
            const uint8_t* a_rows = a + row0 * lda;
            if (l.kernel == Int8Kernel::avx512_vnni) {
                pick<VnniTiles>(rows, panels)(a_rows, lda, b, l.panel_bytes, l.groups, acc);
            } else {
                const int16_t* wide_rows = wide + row0 * lda;
                if (l.kernel == Int8Kernel::avx2)
                    pick<Avx2Tiles>(rows, panels)(wide_rows, lda, b, l.panel_bytes, l.groups, acc);
                else
                    tile_portable(rows, panels, wide_rows, lda, b, l.panel_bytes, l.groups, acc);
            }
            const int64_t col0 = first_panel * l.panel_width;
            epilogue(state, row0, rows, col0, std::min<int64_t>(panels * l.panel_width, l.n - col0), acc, kMaxTileCols);
        }
    });
}

void pack_int8_rows(const uint8_t* from, int64_t rows, int64_t k, int64_t stride, bool signed_a, uint8_t* to, int32_t* sums) {
    const uint8_t flip = signed_a ? 0x80 : 0;  // i8 + 128 as u8
    const bool avx2 = has_avx2();
    parallel_for(rows, grain_for(k), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            uint8_t* row = to + r * stride;
            const uint8_t* source = from + r * k;
            int64_t j = 0;
            int32_t sum = avx2 ? copy_and_sum_avx2(source, row, k, flip, j) : 0;
            for (; j < k; ++j) {
                row[j] = static_cast<uint8_t>(source[j] ^ flip);
                sum += row[j];
            }
            std::fill(row + k, row + stride, uint8_t{0});
            sums[r] = sum;
        }
    });
}

template <class Q>
Q requantized(int32_t v, double multiplier, int32_t zero) {
    return static_cast<Q>(std::clamp(std::nearbyint(v * multiplier) + zero, double(std::numeric_limits<Q>::min()),
                                     double(std::numeric_limits<Q>::max())));
}

namespace {

// requantize_row's AVX2 part: four values at a time in f64, so that each rounds as the scalar
// form does; returns how many it did.
template <class Q>
__attribute__((target("avx2"))) int64_t requantize_avx2(const int32_t* v, const double* multiplier, int32_t zero, Q* y,
                                                        int64_t count) {
    const __m256d z = _mm256_set1_pd(zero), lowest = _mm256_set1_pd(std::numeric_limits<Q>::min()),
                  highest = _mm256_set1_pd(std::numeric_limits<Q>::max());
    int64_t c = 0;
    for (; c + 4 <= count; c += 4) {
        const __m256d product = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + c))),
                                              _mm256_loadu_pd(multiplier + c));
        __m256d q = _mm256_round_pd(product, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q = _mm256_min_pd(_mm256_max_pd(_mm256_add_pd(q, z), lowest), highest);
        alignas(16) int32_t out[4];
        _mm_store_si128(reinterpret_cast<__m128i*>(out), _mm256_cvtpd_epi32(q));
        for (int i = 0; i < 4; ++i) y[c + i] = static_cast<Q>(out[i]);
    }
    return c;
}

}  // namespace

template <class Q>
void requantize_row(const int32_t* v, const double* multiplier, int32_t zero, Q* y, int64_t count) {
    static const bool avx2 = has_avx2();
    const int64_t done = avx2 ? requantize_avx2(v, multiplier, zero, y, count) : 0;
    for (int64_t c = done; c < count; ++c) y[c] = requantized<Q>(v[c], multiplier[c], zero);
}

template uint8_t requantized<uint8_t>(int32_t, double, int32_t);
template int8_t requantized<int8_t>(int32_t, double, int32_t);
template void requantize_row<uint8_t>(const int32_t*, const double*, int32_t, uint8_t*, int64_t);
template void requantize_row<int8_t>(const int32_t*, const double*, int32_t, int8_t*, int64_t);

}  // namespace infer::cpu
