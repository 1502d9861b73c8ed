#pragma once
// Products by a bf16 weight on AMX (Intel's Advanced Matrix Extensions: Sapphire Rapids and
// later Xeons): one TDPBF16PS multiplies a 16-row × 32-value tile of A by a 16-pair × 16-column
// tile of B into 16 × 16 f32 sums, 8 192 multiply-adds per instruction against 32 for an
// AVX-512 vdpbf16ps. B is the bf16 kernel's pair panel (packed_float_gemm.hpp: a step of a panel
// is 16 columns' pairs, 64 bytes, which is one row of a B tile), its steps padded to whole tiles
// of 16 pairs; A's rows are copied 32 at a time into a zero-padded buffer so that every tile is
// whole (no tile configuration per shape, and nothing past A is read).
#include "backends/cpu/kernels/packed_float_gemm.hpp"

#include <cstdint>

namespace infer::cpu {

// Pairs of K per B tile: a layout for the amx_bf16 kernel pads its panels' steps to this.
inline constexpr int64_t kAmxTilePairs = 16;

// The CPU has AMX-TILE, AMX-BF16 and AVX512_BF16, and the OS let this process use the tiles
// (Linux asks each process to request them: arch_prctl(ARCH_REQ_XCOMP_PERM)). Checked once.
bool amx_bf16_usable();

// A [m, K] (bf16 bits, rows `lda` apart) times B packed for the amx_bf16 kernel, over the
// calling thread's pool; finished sums go to `epilogue` at most kFloatTileRows rows at a time.
void gemm_amx_bf16(const PackedFloatLayout& layout, const uint16_t* b, const uint16_t* a, int64_t lda, int64_t m,
                   FloatEpilogue epilogue, void* state);

// The same blocking and packing with each tile instruction carried out in scalar code: lets
// machines without AMX (CI's among them) check the kernel's indexing against other kernels.
void gemm_amx_bf16_emulated(const PackedFloatLayout& layout, const uint16_t* b, const uint16_t* a, int64_t lda,
                            int64_t m, FloatEpilogue epilogue, void* state);

}  // namespace infer::cpu
