// How the CPU backend cuts a matrix product across threads (header-only, so checked directly).
#include "backends/cpu/kernels/gemm_grid.hpp"

#include <catch2/catch.hpp>

using infer::cpu::choose_gemm_grid;

TEST_CASE("GEMM grids cover the product with at most one block per task", "[gemm_grid]") {
    for (int64_t m : {1, 15, 16, 17, 128, 1000, 1024, 4096})
        for (int64_t n : {1, 48, 64, 768, 1000, 3072})
            for (int64_t tasks : {2, 3, 7, 16, 64}) {
                const auto grid = choose_gemm_grid(m, n, tasks);
                INFO(m << "x" << n << " over " << tasks << ": blocks " << grid.block_rows << "x" << grid.block_cols);
                CHECK(grid.blocks() <= tasks);
                CHECK(grid.blocks() >= 1);
                // The blocks tile the product exactly: the last block of each side is partial.
                CHECK(grid.row_blocks * grid.block_rows >= m);
                CHECK((grid.row_blocks - 1) * grid.block_rows < m);
                CHECK(grid.col_blocks * grid.block_cols >= n);
                CHECK((grid.col_blocks - 1) * grid.block_cols < n);
                CHECK((grid.block_rows % 16 == 0 || grid.block_rows == m));
                CHECK((grid.block_cols % 16 == 0 || grid.block_cols == n));
            }
}

TEST_CASE("GEMM grids cut both sides when that shrinks the packed panels", "[gemm_grid]") {
    // BERT-base FFN at batch 8 (1024 tokens x 3072) over 16 threads: rows alone would give each
    // block all 3072 columns of the weight to pack.
    const auto ffn = choose_gemm_grid(1024, 3072, 16);
    CHECK(ffn.row_blocks > 1);
    CHECK(ffn.col_blocks > 1);
    CHECK(ffn.block_rows + ffn.block_cols < 64 + 3072);
    CHECK(ffn.blocks() == 16);
    // A single sequence (128 tokens x 768): still every thread busy.
    CHECK(choose_gemm_grid(128, 768, 16).blocks() == 16);
    // Two threads, a square product: one cut, either way.
    CHECK(choose_gemm_grid(512, 512, 2).blocks() == 2);
}
