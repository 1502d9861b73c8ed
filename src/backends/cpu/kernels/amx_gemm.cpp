#include "backends/cpu/kernels/amx_gemm.hpp"

#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/gemm_grid.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

namespace infer::cpu {

namespace {

constexpr int64_t kTileBytes = kAmxTileRows * kAmxTileRowBytes;  // one tile: 1 KB
constexpr int64_t kGroupRows = 2 * kAmxTileRows;                  // rows of A under each pair of B tiles
constexpr int64_t kPanel = 16;                                    // columns of a panel: a B tile's width
constexpr int64_t kSumColumns = 2 * kPanel;                       // columns of the sums buffer: two panels

// LDTILECFG's 64-byte operand (palette 1): each tile's rows and bytes per row. Every tile used
// here is whole, 16 rows of 64 bytes, so one configuration serves every shape.
struct alignas(64) TileConfig {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t bytes_per_row[16] = {};
    uint8_t rows[16] = {};
};

// The tile registers' roles: 0-3 the sums of a 32-row × 32-column block (rows 0-15 × panel 0,
// rows 0-15 × panel 1, rows 16-31 × panel 0, rows 16-31 × panel 1), 4-5 the two tiles of A,
// 6-7 the two of B. The instructions name their tiles as literals, hence one function per use.
// Everything that inlines them carries the same target: GCC inlines from the bottom up, so the
// templates below carry it for every instance (the emulated ones have no tile instruction).
#define INFER_AMX_TARGET __attribute__((target("amx-tile,amx-bf16,amx-int8")))
#define INFER_AMX INFER_AMX_TARGET __attribute__((always_inline)) inline

// TDPBF16PS (bf16 pairs into f32 sums) or TDPBUSD (u8 quads by s8 quads into i32 sums).
struct Bf16Product {
    using Sum = float;
};
struct Int8Product {
    using Sum = int32_t;
};

template <class Product>
struct AmxTiles {
    INFER_AMX void configure() {
        TileConfig config;
        for (int t = 0; t < 8; ++t) {
            config.bytes_per_row[t] = kAmxTileRowBytes;
            config.rows[t] = kAmxTileRows;
        }
        asm volatile("" ::"r"(&config) : "memory");  // the instruction's asm names only 8 of the 64 bytes it reads
        _tile_loadconfig(&config);
    }
    INFER_AMX void release() { _tile_release(); }
    INFER_AMX void zero_sums() {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
    // One K tile: A's two tiles (rows `stride` bytes apart) by one or two panels' tiles.
    INFER_AMX void step(const uint8_t* a0, const uint8_t* a1, int64_t stride, const uint8_t* b0, const uint8_t* b1) {
// The product's instruction on literal tiles (sums c += a · b).
#define INFER_TILE_PRODUCT(c, a, b)                         \
    if constexpr (std::is_same_v<Product, Bf16Product>) \
        _tile_dpbf16ps(c, a, b);                            \
    else                                                    \
        _tile_dpbusd(c, a, b)
        _tile_loadd(4, a0, stride);
        _tile_loadd(5, a1, stride);
        _tile_loadd(6, b0, kAmxTileRowBytes);
        INFER_TILE_PRODUCT(0, 4, 6);
        INFER_TILE_PRODUCT(2, 5, 6);
        if (b1) {
            _tile_loadd(7, b1, kAmxTileRowBytes);
            INFER_TILE_PRODUCT(1, 4, 7);
            INFER_TILE_PRODUCT(3, 5, 7);
        }
#undef INFER_TILE_PRODUCT
    }
    INFER_AMX void store_sums(void* sums, bool two_panels) {
        constexpr int64_t stride = kSumColumns * 4;
        auto* bytes = static_cast<char*>(sums);
        _tile_stored(0, bytes, stride);
        _tile_stored(2, bytes + kAmxTileRows * stride, stride);
        if (two_panels) {
            _tile_stored(1, bytes + kPanel * 4, stride);
            _tile_stored(3, bytes + kAmxTileRows * stride + kPanel * 4, stride);
        }
    }
};

float widen(const uint8_t* bf16) {
    uint16_t bits;
    std::memcpy(&bits, bf16, sizeof bits);
    const uint32_t wide = uint32_t{bits} << 16;
    float value;
    std::memcpy(&value, &wide, sizeof value);
    return value;
}

// The same operations on tiles kept in memory, in scalar code (the *_emulated entry points).
template <class Product>
struct EmulatedTiles {
    using Sum = typename Product::Sum;
    Sum sums[4][kAmxTileRows][kPanel];
    void configure() {}
    void release() {}
    void zero_sums() { std::memset(sums, 0, sizeof sums); }
    // c += A (16 rows of 64 bytes) · B (16 rows of 64 bytes: each column's pair or quad), as
    // TDPBF16PS / TDPBUSD do.
    static void multiply(Sum (&c)[kAmxTileRows][kPanel], const uint8_t* a, int64_t stride, const uint8_t* b) {
        constexpr int64_t per = std::is_same_v<Product, Bf16Product> ? 2 : 4;  // K values per 4 bytes
        for (int64_t r = 0; r < kAmxTileRows; ++r)
            for (int64_t col = 0; col < kPanel; ++col)
                for (int64_t step = 0; step < kAmxTileRows; ++step)
                    for (int64_t v = 0; v < per; ++v) {
                        const uint8_t* x = a + r * stride + step * 4 + v * (4 / per);
                        const uint8_t* w = b + step * kAmxTileRowBytes + col * 4 + v * (4 / per);
                        if constexpr (std::is_same_v<Product, Bf16Product>)
                            c[r][col] += widen(x) * widen(w);
                        else
                            c[r][col] += int32_t{*x} * int32_t{static_cast<int8_t>(*w)};
                    }
    }
    void step(const uint8_t* a0, const uint8_t* a1, int64_t stride, const uint8_t* b0, const uint8_t* b1) {
        multiply(sums[0], a0, stride, b0);
        multiply(sums[2], a1, stride, b0);
        if (b1) {
            multiply(sums[1], a0, stride, b1);
            multiply(sums[3], a1, stride, b1);
        }
    }
    void store_sums(void* out, bool two_panels) {
        for (int t = 0; t < 4; ++t) {
            if (t % 2 && !two_panels) continue;
            Sum* to = static_cast<Sum*>(out) + (t >= 2 ? kAmxTileRows * kSumColumns : 0) + (t % 2 ? kPanel : 0);
            for (int64_t r = 0; r < kAmxTileRows; ++r) std::memcpy(to + r * kSumColumns, sums[t][r], sizeof sums[t][r]);
        }
    }
};

// A product on tiles, in bytes: panel p of B (16 columns) at b + p·panel_bytes, its K tiles
// one after another (1 KB each); A's rows lda bytes apart, the first row_bytes of each used
// (the rest of a tile row zero); the sums of type Sum to the epilogue, at most epilogue_rows
// rows at a time.
template <class Sum>
struct TileProduct {
    const uint8_t* b;
    int64_t panel_bytes, k_tiles;
    const uint8_t* a;
    int64_t lda, row_bytes;
    int64_t m, n;
    void (*epilogue)(void*, int64_t, int64_t, int64_t, int64_t, const Sum*, int64_t);
    int64_t epilogue_rows;
    void* state;
    GemmGrid grid;
};

// One block of the product, rows [row_begin, row_end) × columns [col_begin, col_end): its rows
// 32 at a time copied into `group` (32 rows of whole K tiles, zero-padded), each pair of panels
// then swept down K under those rows, the 32 × 32 sums handed to the epilogue.
template <class Tiles, class Sum>
INFER_AMX void multiply_block(Tiles& tiles, const TileProduct<Sum>& p, int64_t row_begin, int64_t row_end,
                              int64_t col_begin, int64_t col_end, uint8_t* group, Sum* sums) {
    const int64_t stride = p.k_tiles * kAmxTileRowBytes;
    for (int64_t row0 = row_begin; row0 < row_end; row0 += kGroupRows) {
        const int64_t rows = std::min(kGroupRows, row_end - row0);
        for (int64_t r = 0; r < kGroupRows; ++r) {
            uint8_t* to = group + r * stride;
            const int64_t copied = r < rows ? p.row_bytes : 0;
            if (copied) std::memcpy(to, p.a + (row0 + r) * p.lda, static_cast<size_t>(copied));
            std::memset(to + copied, 0, static_cast<size_t>(stride - copied));
        }
        asm volatile("" ::"r"(group) : "memory");  // tile loads are asm that does not say it reads memory
        for (int64_t col0 = col_begin; col0 < col_end; col0 += kSumColumns) {
            const bool two_panels = col0 + kPanel < col_end;
            const uint8_t* panel = p.b + (col0 / kPanel) * p.panel_bytes;
            tiles.zero_sums();
            for (int64_t t = 0; t < p.k_tiles; ++t) {
                const uint8_t* b0 = panel + t * kTileBytes;
                tiles.step(group + t * kAmxTileRowBytes, group + kAmxTileRows * stride + t * kAmxTileRowBytes, stride, b0,
                           two_panels ? b0 + p.panel_bytes : nullptr);
            }
            tiles.store_sums(sums, two_panels);
            const int64_t cols = std::min(kSumColumns, col_end - col0);
            for (int64_t r = 0; r < rows; r += p.epilogue_rows)
                p.epilogue(p.state, row0 + r, std::min(p.epilogue_rows, rows - r), col0, cols, sums + r * kSumColumns,
                           kSumColumns);
        }
    }
}

// A thread's blocks [begin, end) of the grid, the tiles configured once for all of them.
template <class Tiles, class Sum>
INFER_AMX void run_blocks(const TileProduct<Sum>& p, int64_t begin, int64_t end, uint8_t* group, Sum* sums) {
    Tiles tiles;
    tiles.configure();
    for (int64_t block = begin; block < end; ++block) {
        const int64_t row_begin = (block / p.grid.col_blocks) * p.grid.block_rows;
        const int64_t col_begin = (block % p.grid.col_blocks) * p.grid.block_cols;
        multiply_block(tiles, p, row_begin, std::min(p.m, row_begin + p.grid.block_rows), col_begin,
                       std::min(p.n, col_begin + p.grid.block_cols), group, sums);
    }
    tiles.release();
}

template <class Tiles, class Sum>
INFER_AMX_TARGET void blocks_on(const TileProduct<Sum>& p, int64_t begin, int64_t end, uint8_t* group, Sum* sums) {
    run_blocks<Tiles>(p, begin, end, group, sums);
}

#undef INFER_AMX
#undef INFER_AMX_TARGET

template <class Sum>
using Blocks = void (*)(const TileProduct<Sum>&, int64_t, int64_t, uint8_t*, Sum*);

// The product over the pool, cut as gemm_grid.hpp says.
template <class Sum>
void multiply(Blocks<Sum> blocks, TileProduct<Sum> p, int64_t k) {
    if (p.m <= 0 || p.n <= 0) return;
    const int64_t tasks = p.m * p.n * k >= kParallelGemmWork ? pool_thread_count() : 1;
    p.grid = choose_gemm_grid(p.m, p.n, tasks);
    parallel_for(p.grid.blocks(), 1, [&](int64_t begin, int64_t end) {
        // Per thread, bounded by K: 32 rows of A and one block of sums.
        thread_local std::vector<uint8_t> group;
        thread_local std::vector<Sum> sums;
        group.resize(static_cast<size_t>(kGroupRows * p.k_tiles * kAmxTileRowBytes));
        sums.resize(static_cast<size_t>(kGroupRows * kSumColumns));
        blocks(p, begin, end, group.data(), sums.data());
    });
}

TileProduct<float> bf16_product(const PackedFloatLayout& l, const uint16_t* b, const uint16_t* a, int64_t lda, int64_t m,
                                FloatEpilogue epilogue, void* state) {
    return {reinterpret_cast<const uint8_t*>(b), l.panel_step * 2, l.steps / kAmxTileRows, reinterpret_cast<const uint8_t*>(a),
            lda * 2, l.k * 2, m, l.n, epilogue, kFloatTileRows, state, {}};
}

TileProduct<int32_t> int8_product(const Int8WeightLayout& l, const uint8_t* packed, const uint8_t* a, int64_t m,
                                  Int8Epilogue epilogue, void* state) {
    const int64_t stride = int8_row_stride(l);
    return {packed, l.panel_bytes, l.groups / kAmxTileRows, a, stride, stride, m, l.n, epilogue, kInt8TileRows, state, {}};
}

// Linux grants the AMX tile data state to a process that asks (arch/x86/include/uapi/asm/prctl.h).
constexpr int kArchRequestComponentPermission = 0x1023;
constexpr int kTileDataComponent = 18;

// CPUID leaf 7's EDX bits: AMX-BF16 22, AMX-TILE 24, AMX-INT8 25; then the OS's grant.
bool amx_usable(unsigned feature_bit) {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
    if (!(edx & (1u << 24)) || !(edx & (1u << feature_bit))) return false;
    static const bool granted = syscall(SYS_arch_prctl, kArchRequestComponentPermission, kTileDataComponent) == 0;
    return granted;
}

}  // namespace

bool amx_bf16_usable() {
    static const bool usable = __builtin_cpu_supports("avx512bf16") && amx_usable(22);
    return usable;
}

bool amx_int8_usable() {
    static const bool usable =
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni") && amx_usable(25);
    return usable;
}

void gemm_amx_bf16(const PackedFloatLayout& l, const uint16_t* b, const uint16_t* a, int64_t lda, int64_t m,
                   FloatEpilogue epilogue, void* state) {
    multiply<float>(blocks_on<AmxTiles<Bf16Product>, float>, bf16_product(l, b, a, lda, m, epilogue, state), l.k);
}

void gemm_amx_u8s8(const Int8WeightLayout& l, const uint8_t* packed, const uint8_t* a, int64_t m, Int8Epilogue epilogue,
                   void* state) {
    multiply<int32_t>(blocks_on<AmxTiles<Int8Product>, int32_t>, int8_product(l, packed, a, m, epilogue, state), l.k);
}

void gemm_amx_bf16_emulated(const PackedFloatLayout& l, const uint16_t* b, const uint16_t* a, int64_t lda, int64_t m,
                            FloatEpilogue epilogue, void* state) {
    multiply<float>(blocks_on<EmulatedTiles<Bf16Product>, float>, bf16_product(l, b, a, lda, m, epilogue, state), l.k);
}

void gemm_amx_u8s8_emulated(const Int8WeightLayout& l, const uint8_t* packed, const uint8_t* a, int64_t m,
                            Int8Epilogue epilogue, void* state) {
    multiply<int32_t>(blocks_on<EmulatedTiles<Int8Product>, int32_t>, int8_product(l, packed, a, m, epilogue, state), l.k);
}

}  // namespace infer::cpu
