#pragma once
// Products on AMX tiles (Intel's Advanced Matrix Extensions: Sapphire Rapids and later Xeons),
// by a bf16 weight (TDPBF16PS) or an s8 one (TDPBUSD, u8 × s8 with exact i32 sums). One
// instruction multiplies a 16-row × 64-byte tile of A by a 16 × 64-byte tile of B into 16 × 16
// sums: 8 192 bf16 or 16 384 int8 multiply-adds, against 32 or 64 for an AVX-512 vdpbf16ps or
// vpdpbusd. The B tiles are the AVX-512 kernels' own panels (16 columns; a 64-byte step holds
// each column's K pair, bf16, or quad, int8), their K padded to whole tiles; A's rows are copied
// 32 at a time into a zero-padded buffer, so that every tile is whole (one tile configuration
// for every shape, and nothing past A is read).
#include "backends/cpu/kernels/int8_gemm.hpp"
#include "backends/cpu/kernels/packed_float_gemm.hpp"

#include <cstdint>

namespace infer::cpu {

// Bytes in a row of a tile, and rows in a tile: a layout for an AMX kernel pads its panels' K
// to whole tiles of 16 such rows (16 bf16 pairs, or 16 int8 quads).
inline constexpr int64_t kAmxTileRowBytes = 64, kAmxTileRows = 16;

// The CPU has AMX-TILE with AMX-BF16 (and AVX512_BF16) or AMX-INT8 (and AVX-512 VNNI), and the
// OS let this process use the tiles (Linux asks each process to request them:
// arch_prctl(ARCH_REQ_XCOMP_PERM)). Checked once.
bool amx_bf16_usable();
bool amx_int8_usable();

// A [m, K] (bf16 bits, rows `lda` apart) times B packed for the amx_bf16 kernel, over the
// calling thread's pool; finished sums go to `epilogue` at most kFloatTileRows rows at a time.
void gemm_amx_bf16(const PackedFloatLayout& layout, const uint16_t* b, const uint16_t* a, int64_t lda, int64_t m,
                   FloatEpilogue epilogue, void* state);
// A [m, int8_row_stride] (u8, padding zero) times B packed for the amx_int8 kernel, as
// gemm_u8s8; finished sums go to `epilogue` at most kInt8TileRows rows at a time.
void gemm_amx_u8s8(const Int8WeightLayout& layout, const uint8_t* packed, const uint8_t* a, int64_t m,
                   Int8Epilogue epilogue, void* state);

// The same blocking and packing with each tile instruction carried out in scalar code: lets
// machines without AMX (CI's among them) check the kernels' indexing against a reference.
void gemm_amx_bf16_emulated(const PackedFloatLayout& layout, const uint16_t* b, const uint16_t* a, int64_t lda,
                            int64_t m, FloatEpilogue epilogue, void* state);
void gemm_amx_u8s8_emulated(const Int8WeightLayout& layout, const uint8_t* packed, const uint8_t* a, int64_t m,
                            Int8Epilogue epilogue, void* state);

}  // namespace infer::cpu
