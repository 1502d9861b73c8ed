#include "backends/cpu/kernels/amx_bf16_gemm.hpp"

#include "backends/cpu/kernels/blas.hpp"
#include "backends/cpu/kernels/gemm_grid.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace infer::cpu {

namespace {

constexpr int64_t kTileRows = 16;                   // rows of A (and of the sums) in a tile
constexpr int64_t kTileValues = 2 * kAmxTilePairs;  // K values in a row of an A tile: 64 bytes
constexpr int64_t kGroupRows = 2 * kTileRows;       // rows of A under each pair of B tiles
constexpr int64_t kPanel = 16;                      // columns of a panel (a B tile's width)
constexpr int64_t kSumColumns = 2 * kPanel;         // columns of the sums buffer: two panels

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
// templates below carry it for both instances (the emulated one has no tile instruction in it).
#define INFER_AMX_TARGET __attribute__((target("amx-tile,amx-bf16")))
#define INFER_AMX INFER_AMX_TARGET __attribute__((always_inline)) inline
struct AmxTiles {
    INFER_AMX void configure() {
        TileConfig config;
        for (int t = 0; t < 8; ++t) {
            config.bytes_per_row[t] = 64;
            config.rows[t] = kTileRows;
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
    // One step of 32 K values: A's two tiles (rows `stride` bytes apart) by one or two panels.
    INFER_AMX void step(const uint16_t* a0, const uint16_t* a1, int64_t stride, const uint16_t* b0, const uint16_t* b1) {
        _tile_loadd(4, a0, stride);
        _tile_loadd(5, a1, stride);
        _tile_loadd(6, b0, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(2, 5, 6);
        if (b1) {
            _tile_loadd(7, b1, 64);
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(3, 5, 7);
        }
    }
    INFER_AMX void store_sums(float* sums, bool two_panels) {
        constexpr int64_t stride = kSumColumns * sizeof(float);
        _tile_stored(0, sums, stride);
        _tile_stored(2, sums + kTileRows * kSumColumns, stride);
        if (two_panels) {
            _tile_stored(1, sums + kPanel, stride);
            _tile_stored(3, sums + kTileRows * kSumColumns + kPanel, stride);
        }
    }
};

float widen(uint16_t bits) {
    const uint32_t wide = uint32_t{bits} << 16;
    float value;
    std::memcpy(&value, &wide, sizeof value);
    return value;
}

// The same operations on tiles kept in memory, in scalar code (gemm_amx_bf16_emulated).
struct EmulatedTiles {
    float sums[4][kTileRows][kPanel];
    void configure() {}
    void release() {}
    void zero_sums() { std::memset(sums, 0, sizeof sums); }
    // sums[c] += A (16 rows × 32 values) · B (16 pairs × 16 columns' pairs), as TDPBF16PS.
    static void multiply(float (&c)[kTileRows][kPanel], const uint16_t* a, int64_t stride, const uint16_t* b) {
        for (int64_t r = 0; r < kTileRows; ++r) {
            const auto* row = reinterpret_cast<const uint16_t*>(reinterpret_cast<const char*>(a) + r * stride);
            for (int64_t col = 0; col < kPanel; ++col)
                for (int64_t p = 0; p < kAmxTilePairs; ++p)
                    c[r][col] += widen(row[2 * p]) * widen(b[p * 2 * kPanel + 2 * col]) +
                                 widen(row[2 * p + 1]) * widen(b[p * 2 * kPanel + 2 * col + 1]);
        }
    }
    void step(const uint16_t* a0, const uint16_t* a1, int64_t stride, const uint16_t* b0, const uint16_t* b1) {
        multiply(sums[0], a0, stride, b0);
        multiply(sums[2], a1, stride, b0);
        if (b1) {
            multiply(sums[1], a0, stride, b1);
            multiply(sums[3], a1, stride, b1);
        }
    }
    void store_sums(float* out, bool two_panels) {
        for (int t = 0; t < 4; ++t) {
            if ((t == 1 || t == 3) && !two_panels) continue;
            float* to = out + (t >= 2 ? kTileRows * kSumColumns : 0) + (t % 2 ? kPanel : 0);
            for (int64_t r = 0; r < kTileRows; ++r) std::memcpy(to + r * kSumColumns, sums[t][r], sizeof sums[t][r]);
        }
    }
};

// The product's operands and its cut into blocks (gemm_grid.hpp).
struct Product {
    const PackedFloatLayout& l;
    const uint16_t* b;
    const uint16_t* a;
    int64_t lda, m;
    FloatEpilogue epilogue;
    void* state;
    GemmGrid grid;
};

// One block of the product, rows [row_begin, row_end) × columns [col_begin, col_end): its rows
// 32 at a time copied into `group` (32 rows of K padded with zeros to the panels' steps), each
// pair of panels then swept down K under those rows, the 32 × 32 sums handed to the epilogue.
template <class Tiles>
INFER_AMX void multiply_block(Tiles& tiles, const Product& p, int64_t row_begin, int64_t row_end,
                                                          int64_t col_begin, int64_t col_end, uint16_t* group, float* sums) {
    const PackedFloatLayout& l = p.l;
    const int64_t padded_k = l.steps * 2;
    const int64_t stride = padded_k * static_cast<int64_t>(sizeof(uint16_t));
    for (int64_t row0 = row_begin; row0 < row_end; row0 += kGroupRows) {
        const int64_t rows = std::min(kGroupRows, row_end - row0);
        for (int64_t r = 0; r < kGroupRows; ++r) {
            uint16_t* to = group + r * padded_k;
            const int64_t copied = r < rows ? l.k : 0;
            if (copied) std::memcpy(to, p.a + (row0 + r) * p.lda, sizeof(uint16_t) * static_cast<size_t>(copied));
            std::memset(to + copied, 0, sizeof(uint16_t) * static_cast<size_t>(padded_k - copied));
        }
        asm volatile("" ::"r"(group) : "memory");  // tile loads are asm that does not say it reads memory
        for (int64_t col0 = col_begin; col0 < col_end; col0 += kSumColumns) {
            const bool two_panels = col0 + kPanel < col_end;
            const uint16_t* panel = p.b + (col0 / kPanel) * l.panel_step;
            tiles.zero_sums();
            for (int64_t pair = 0; pair < l.steps; pair += kAmxTilePairs) {
                const uint16_t* b0 = panel + pair * l.row_step;
                tiles.step(group + 2 * pair, group + kTileRows * padded_k + 2 * pair, stride, b0,
                           two_panels ? b0 + l.panel_step : nullptr);
            }
            tiles.store_sums(sums, two_panels);
            const int64_t cols = std::min(kSumColumns, col_end - col0);
            for (int64_t r = 0; r < rows; r += kFloatTileRows)
                p.epilogue(p.state, row0 + r, std::min(kFloatTileRows, rows - r), col0, cols, sums + r * kSumColumns,
                           kSumColumns);
        }
    }
}

// A thread's blocks [begin, end) of the grid, the tiles configured once for all of them.
template <class Tiles>
INFER_AMX void run_blocks(const Product& p, int64_t begin, int64_t end, uint16_t* group,
                                                      float* sums) {
    Tiles tiles;
    tiles.configure();
    for (int64_t block = begin; block < end; ++block) {
        const int64_t row_begin = (block / p.grid.col_blocks) * p.grid.block_rows;
        const int64_t col_begin = (block % p.grid.col_blocks) * p.grid.block_cols;
        multiply_block(tiles, p, row_begin, std::min(p.m, row_begin + p.grid.block_rows), col_begin,
                       std::min(p.l.n, col_begin + p.grid.block_cols), group, sums);
    }
    tiles.release();
}

INFER_AMX_TARGET void amx_blocks(const Product& p, int64_t begin, int64_t end,
                                                               uint16_t* group, float* sums) {
    run_blocks<AmxTiles>(p, begin, end, group, sums);
}

INFER_AMX_TARGET void emulated_blocks(const Product& p, int64_t begin, int64_t end, uint16_t* group, float* sums) {
    run_blocks<EmulatedTiles>(p, begin, end, group, sums);
}

#undef INFER_AMX
#undef INFER_AMX_TARGET

using Blocks = void (*)(const Product&, int64_t, int64_t, uint16_t*, float*);

void multiply(Blocks blocks, const PackedFloatLayout& l, const uint16_t* b, const uint16_t* a, int64_t lda, int64_t m,
              FloatEpilogue epilogue, void* state) {
    if (m <= 0 || l.n <= 0) return;
    const int64_t tasks = m * l.n * l.k >= kParallelGemmWork ? pool_thread_count() : 1;
    const Product product{l, b, a, lda, m, epilogue, state, choose_gemm_grid(m, l.n, tasks)};
    parallel_for(product.grid.blocks(), 1, [&](int64_t begin, int64_t end) {
        // Per thread, bounded by K: 32 rows of A and one block of sums.
        thread_local std::vector<uint16_t> group;
        thread_local std::vector<float> sums;
        group.resize(static_cast<size_t>(kGroupRows * l.steps * 2));
        sums.resize(static_cast<size_t>(kGroupRows * kSumColumns));
        blocks(product, begin, end, group.data(), sums.data());
    });
}

// Linux grants the AMX tile data state to a process that asks (arch/x86/include/uapi/asm/prctl.h).
constexpr int kArchRequestComponentPermission = 0x1023;
constexpr int kTileDataComponent = 18;

}  // namespace

bool amx_bf16_usable() {
    static const bool usable = [] {
        unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
        if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
        const bool amx_bf16 = edx & (1u << 22), amx_tile = edx & (1u << 24);
        if (!amx_bf16 || !amx_tile || !__builtin_cpu_supports("avx512bf16")) return false;
        return syscall(SYS_arch_prctl, kArchRequestComponentPermission, kTileDataComponent) == 0;
    }();
    return usable;
}

void gemm_amx_bf16(const PackedFloatLayout& l, const uint16_t* b, const uint16_t* a, int64_t lda, int64_t m,
                   FloatEpilogue epilogue, void* state) {
    multiply(amx_blocks, l, b, a, lda, m, epilogue, state);
}

void gemm_amx_bf16_emulated(const PackedFloatLayout& l, const uint16_t* b, const uint16_t* a, int64_t lda, int64_t m,
                            FloatEpilogue epilogue, void* state) {
    multiply(emulated_blocks, l, b, a, lda, m, epilogue, state);
}

}  // namespace infer::cpu
