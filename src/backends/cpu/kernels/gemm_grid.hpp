#pragma once
// How a matrix product C (m×n) is cut into blocks for the threads of the pool. Every block is an
// independent product, and each one packs its own panels of A (block rows × k) and B (k × block
// columns) before multiplying. Cutting along one side only makes every task pack the whole
// other operand: at batch 8 of a BERT-base FFN, sixteen tasks would each pack all 9 MiB of the
// weight. A grid of blocks keeps both panels small, so the choice minimizes rows + columns per
// block over the grids that give each thread one block.
#include <algorithm>
#include <cstdint>

namespace infer::cpu {

struct GemmGrid {
    int64_t block_rows = 0, block_cols = 0;  // multiples of 16 (whole SIMD panels) unless the side is shorter
    int64_t row_blocks = 1, col_blocks = 1;  // row_blocks * col_blocks <= tasks
    int64_t blocks() const { return row_blocks * col_blocks; }
};

inline GemmGrid choose_gemm_grid(int64_t m, int64_t n, int64_t tasks) {
    const auto ceil_div = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
    const auto block_of = [&](int64_t extent, int64_t parts) {
        return std::min(extent, ceil_div(ceil_div(extent, parts), 16) * 16);
    };
    GemmGrid best;
    for (int64_t row_parts = 1; row_parts <= tasks; ++row_parts) {
        GemmGrid grid;
        grid.block_rows = block_of(m, row_parts);
        grid.block_cols = block_of(n, tasks / row_parts);
        grid.row_blocks = ceil_div(m, grid.block_rows);
        grid.col_blocks = ceil_div(n, grid.block_cols);
        const int64_t panel = grid.block_rows + grid.block_cols, best_panel = best.block_rows + best.block_cols;
        // Smaller panels first; at equal panels, more blocks (more threads busy).
        if (best.block_rows == 0 || panel < best_panel || (panel == best_panel && grid.blocks() > best.blocks()))
            best = grid;
    }
    return best;
}

}  // namespace infer::cpu
