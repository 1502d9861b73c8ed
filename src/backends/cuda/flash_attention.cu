// The fused attention kernel (see flash_attention.hpp). Layout of the work:
//   block  = 4 warps = 64 query rows of one (batch, head); grid = query tiles × heads × batch
//   warp   = 16 query rows, its Q fragments held in registers for the whole key walk
//   step   = 64 keys: K and V tiles copied asynchronously into shared memory (double-buffered
//            for heads up to 64 wide: the next tile loads during this one), S = Q·Kᵀ (16 × 64 per warp) in
//            f32 registers, online softmax on them, then O += P·V with P reused straight from
//            the registers of S (the accumulator layout of m16n8k16 is its A-operand layout).
// Fragment layouts of mma.sync.m16n8k16 (g = lane / 4, t = lane % 4):
//   A (16×16, row-major): a0 = [g][2t..2t+1], a1 = [g+8][2t..], a2 = [g][2t+8..], a3 = [g+8][2t+8..]
//   B (16×8, by column):  b0 = [2t..2t+1][g], b1 = [2t+8..2t+9][g]
//   C (16×8, f32):        c0,c1 = [g][2t..2t+1], c2,c3 = [g+8][2t..2t+1]
#include "backends/cuda/flash_attention.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/device_types.cuh"

#include <cmath>
#include <cstring>

namespace infer::cuda {

namespace {

constexpr int kWarps = 4;
constexpr int kRowsPerWarp = 16;
constexpr int kQueryTile = kWarps * kRowsPerWarp;  // 64 query rows per block
constexpr int kKeyTile = 64;
constexpr int kThreads = kWarps * 32;
constexpr float kLog2e = 1.4426950408889634f;

template <class T>
__device__ __forceinline__ void mma_16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1) {
    if constexpr (std::is_same_v<T, __half>) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
}

// Two floats as one 32-bit register of two 16-bit values, the first in the low half.
template <class T>
__device__ __forceinline__ uint32_t pack(float lo, float hi) {
    uint32_t bits;
    if constexpr (std::is_same_v<T, __half>) {
        const __half2 v = __floats2half2_rn(lo, hi);
        memcpy(&bits, &v, 4);
    } else {
        const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        memcpy(&bits, &v, 4);
    }
    return bits;
}

__device__ __forceinline__ uint32_t load_pair(const void* p) { return *static_cast<const uint32_t*>(p); }

// Four 8×8 matrices of 16-bit values from shared memory, transposed: lanes 8m..8m+7 give the
// row addresses of matrix m; each lane receives [2t..2t+1][g] of every matrix.
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t r[4], const void* row) {
    const auto address = static_cast<unsigned>(__cvta_generic_to_shared(row));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// 16 bytes from global to shared memory without passing through registers (sm_80+), or 16
// zero bytes where `bytes` is 0 (the source is then not read); completed by cp_async_wait.
__device__ __forceinline__ void cp_async_16(void* shared, const void* global, int bytes) {
    const auto address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most `Pending` of this thread's committed groups are still in flight.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

struct KernelArgs {
    const void *q, *k, *v, *bias;
    void* out;
    int batch, heads, sq, sk, query_tiles;
    int input_row;  // elements between sequence positions of Q, K and V (packed: three heads' rows)
    BiasStrides bias_strides;
    float scale_log2;  // scale · log2(e): the softmax runs on exp2
};

// K and V tiles in shared memory: two of each where they fit the 48 KB of static shared memory
// (D <= 64), so that the next tile loads while this one is multiplied; one for larger heads.
template <int D>
constexpr int kStages = D <= 64 ? 2 : 1;
// Blocks per multiprocessor the compiler must leave registers for: four where the double
// buffers allow it (137 registers a thread gave three, 18.75% occupancy, on an H100), and for
// wider heads what their registers allowed before the asynchronous copies.
template <int D>
constexpr int kMinBlocks = D <= 64 ? 4 : D <= 96 ? 3 : 2;

template <class T, int D>
__global__ void __launch_bounds__(kThreads, kMinBlocks<D>) flash_attention_kernel(KernelArgs a) {
    constexpr int kStride = D + 8;  // shared rows padded by 16 bytes: fragment reads hit distinct banks
    constexpr int kSteps = D / 16;  // k-steps of Q·Kᵀ
    constexpr int kTiles = D / 8;   // n-tiles of the output
    __shared__ __align__(16) T keys[kStages<D>][kKeyTile * kStride];
    __shared__ __align__(16) T values[kStages<D>][kKeyTile * kStride];

    const int tile = blockIdx.x % a.query_tiles;
    const int head = (blockIdx.x / a.query_tiles) % a.heads;
    const int b = blockIdx.x / (a.query_tiles * a.heads);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int64_t row_elements = static_cast<int64_t>(a.heads) * D, input_row = a.input_row;
    const T* q = static_cast<const T*>(a.q) + static_cast<int64_t>(b) * a.sq * input_row + head * D;
    const T* k = static_cast<const T*>(a.k) + static_cast<int64_t>(b) * a.sk * input_row + head * D;
    const T* v = static_cast<const T*>(a.v) + static_cast<int64_t>(b) * a.sk * input_row + head * D;
    const T* bias = a.bias ? static_cast<const T*>(a.bias) + b * a.bias_strides.batch + head * a.bias_strides.head
                           : nullptr;

    // Stages the K and V tiles from key0 into buffer `stage`, 16 bytes per copy, as one group of
    // asynchronous copies; keys past the end become zeros, so that their (masked)
    // probabilities of 0 never meet garbage in P·V.
    const auto load_tile = [&](int stage, int key0) {
        constexpr int kChunks = D / 8;
#pragma unroll(D <= 64 ? 4 : 1)
        for (int i = threadIdx.x; i < kKeyTile * kChunks; i += kThreads) {
            const int r = i / kChunks, c = (i % kChunks) * 8;
            const bool inside = key0 + r < a.sk;
            const int64_t offset = inside ? static_cast<int64_t>(key0 + r) * input_row + c : 0;
            cp_async_16(&keys[stage][r * kStride + c], k + offset, inside ? 16 : 0);
            cp_async_16(&values[stage][r * kStride + c], v + offset, inside ? 16 : 0);
        }
        cp_async_commit();
    };
    load_tile(0, 0);  // in flight while Q's fragments load

    // This thread's two query rows; rows past the end read zeros and are never written.
    const int row0 = tile * kQueryTile + warp * kRowsPerWarp + g, row1 = row0 + 8;
    const bool live0 = row0 < a.sq, live1 = row1 < a.sq;
    uint32_t qf[kSteps][4];
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
        const int col = s * 16 + 2 * t;
        qf[s][0] = live0 ? load_pair(q + row0 * input_row + col) : 0u;
        qf[s][1] = live1 ? load_pair(q + row1 * input_row + col) : 0u;
        qf[s][2] = live0 ? load_pair(q + row0 * input_row + col + 8) : 0u;
        qf[s][3] = live1 ? load_pair(q + row1 * input_row + col + 8) : 0u;
    }

    float o[kTiles][4];
#pragma unroll
    for (int n = 0; n < kTiles; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float max0 = -INFINITY, max1 = -INFINITY, sum0 = 0.0f, sum1 = 0.0f;

    for (int key0 = 0, tile_index = 0; key0 < a.sk; key0 += kKeyTile, ++tile_index) {
        const int stage = kStages<D> == 2 ? tile_index % 2 : 0;
        const bool more = key0 + kKeyTile < a.sk;
        if constexpr (kStages<D> == 2) {
            // The other buffer was last read in the previous step, which every warp has left.
            if (more) {
                load_tile(stage ^ 1, key0 + kKeyTile);
                cp_async_wait<1>();  // this step's tile has landed; the next may still be in flight
            } else {
                cp_async_wait<0>();
            }
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();  // every thread's copies of this tile are visible to all
        const T* keys_tile = keys[stage];
        const T* values_tile = values[stage];

        // S = Q·Kᵀ for this warp's 16 rows and the tile's 64 keys (8 n-tiles).
        float s[kKeyTile / 8][4];
#pragma unroll
        for (int j = 0; j < kKeyTile / 8; ++j) {
            s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
            const T* key_row = &keys_tile[(j * 8 + g) * kStride + 2 * t];
#pragma unroll
            for (int step = 0; step < kSteps; ++step)
                mma_16816<T>(s[j], qf[step], load_pair(key_row + step * 16), load_pair(key_row + step * 16 + 8));
        }

        // Scale, bias, bounds; then the running max of each row across its quad of lanes.
        float tile_max0 = -INFINITY, tile_max1 = -INFINITY;
#pragma unroll
        for (int j = 0; j < kKeyTile / 8; ++j) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int key = key0 + j * 8 + 2 * t + (e & 1);
                const int row = e < 2 ? row0 : row1;
                float x = s[j][e] * a.scale_log2;
                if (key >= a.sk) {
                    x = -INFINITY;
                } else if (bias && row < a.sq) {
                    x += load_float(bias[row * a.bias_strides.query + key * a.bias_strides.key]) * kLog2e;
                }
                s[j][e] = x;
                if (e < 2) tile_max0 = fmaxf(tile_max0, x);
                else tile_max1 = fmaxf(tile_max1, x);
            }
        }
#pragma unroll
        for (int offset = 1; offset < 4; offset *= 2) {
            tile_max0 = fmaxf(tile_max0, __shfl_xor_sync(0xffffffffu, tile_max0, offset));
            tile_max1 = fmaxf(tile_max1, __shfl_xor_sync(0xffffffffu, tile_max1, offset));
        }
        const float new_max0 = fmaxf(max0, tile_max0), new_max1 = fmaxf(max1, tile_max1);
        // A row masked so far has a max of -inf; subtracting 0 instead keeps exp2 at 0, not NaN.
        const float base0 = new_max0 == -INFINITY ? 0.0f : new_max0;
        const float base1 = new_max1 == -INFINITY ? 0.0f : new_max1;
        const float rescale0 = exp2f(max0 - base0), rescale1 = exp2f(max1 - base1);
        max0 = new_max0;
        max1 = new_max1;
        sum0 *= rescale0;
        sum1 *= rescale1;
#pragma unroll
        for (int n = 0; n < kTiles; ++n) {
            o[n][0] *= rescale0;
            o[n][1] *= rescale0;
            o[n][2] *= rescale1;
            o[n][3] *= rescale1;
        }
        // P = exp2(S - max); each lane keeps its partial row sums (the quad is summed at the end).
        uint32_t p[kKeyTile / 16][4];
#pragma unroll
        for (int j = 0; j < kKeyTile / 8; ++j) {
            const float p0 = exp2f(s[j][0] - base0), p1 = exp2f(s[j][1] - base0);
            const float p2 = exp2f(s[j][2] - base1), p3 = exp2f(s[j][3] - base1);
            sum0 += p0 + p1;
            sum1 += p2 + p3;
            // n-tiles 2i and 2i+1 of S are the two column halves of A's k-step i.
            p[j / 2][(j % 2) * 2 + 0] = pack<T>(p0, p1);
            p[j / 2][(j % 2) * 2 + 1] = pack<T>(p2, p3);
        }

        // O += P·V: for each k-step of 16 keys, V's B fragments for two n-tiles per ldmatrix.
        const int matrix = lane / 8, matrix_row = lane % 8;
#pragma unroll
        for (int step = 0; step < kKeyTile / 16; ++step) {
            const T* v_rows = &values_tile[(step * 16 + matrix_row + (matrix & 1) * 8) * kStride + (matrix >> 1) * 8];
#pragma unroll
            for (int n = 0; n < kTiles; n += 2) {
                uint32_t bv[4];
                ldmatrix_x4_trans(bv, v_rows + n * 8);
                mma_16816<T>(o[n], p[step], bv[0], bv[1]);
                mma_16816<T>(o[n + 1], p[step], bv[2], bv[3]);
            }
        }
        __syncthreads();  // this tile's buffer is no longer read: the next loads may overwrite it
        if constexpr (kStages<D> == 1) {
            if (more) load_tile(0, key0 + kKeyTile);
        }
    }
    cp_async_wait<0>();  // with no keys at all, the first tile's copies are still outstanding

#pragma unroll
    for (int offset = 1; offset < 4; offset *= 2) {
        sum0 += __shfl_xor_sync(0xffffffffu, sum0, offset);
        sum1 += __shfl_xor_sync(0xffffffffu, sum1, offset);
    }
    // A fully masked row has no probability mass; it is written as zeros rather than 0/0.
    const float inverse0 = sum0 > 0.0f ? 1.0f / sum0 : 0.0f, inverse1 = sum1 > 0.0f ? 1.0f / sum1 : 0.0f;
    T* out = static_cast<T*>(a.out) + static_cast<int64_t>(b) * a.sq * row_elements + head * D;
#pragma unroll
    for (int n = 0; n < kTiles; ++n) {
        const int col = n * 8 + 2 * t;
        if (live0) *reinterpret_cast<uint32_t*>(out + row0 * row_elements + col) = pack<T>(o[n][0] * inverse0, o[n][1] * inverse0);
        if (live1) *reinterpret_cast<uint32_t*>(out + row1 * row_elements + col) = pack<T>(o[n][2] * inverse1, o[n][3] * inverse1);
    }
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <class T>
void launch(const Launch& l, const AttentionProblem& p, const KernelArgs& args, unsigned blocks) {
    switch (p.head_dim) {
        case 32: flash_attention_kernel<T, 32><<<blocks, kThreads, 0, l.handle()>>>(args); break;
        case 64: flash_attention_kernel<T, 64><<<blocks, kThreads, 0, l.handle()>>>(args); break;
        case 96: flash_attention_kernel<T, 96><<<blocks, kThreads, 0, l.handle()>>>(args); break;
        default: flash_attention_kernel<T, 128><<<blocks, kThreads, 0, l.handle()>>>(args); break;
    }
    l.check_launch("flash_attention_kernel");
}

}  // namespace

bool flash_attention_covers(DType type, int64_t head_dim, int64_t value_head_dim) {
    const bool sized = head_dim == 32 || head_dim == 64 || head_dim == 96 || head_dim == 128;
    return (type == DType::f16 || type == DType::bf16) && sized && value_head_dim == head_dim;
}

bool flash_attention(const Launch& l, const AttentionProblem& p) {
    if (!flash_attention_covers(p.type, p.head_dim, p.head_dim)) return false;
    // 16-byte loads of K and V rows: every row start must be aligned (D is a multiple of 8).
    if (!aligned16(p.q) || !aligned16(p.k) || !aligned16(p.v) || !aligned16(p.out) || p.input_row % 8 != 0) return false;
    const int64_t query_tiles = (p.sq + kQueryTile - 1) / kQueryTile;
    const int64_t blocks = query_tiles * p.heads * p.batch;
    // Indices inside the kernel are 32-bit where they count rows and blocks.
    constexpr int64_t kIntLimit = int64_t{1} << 31;
    if (blocks >= kIntLimit || p.sq >= kIntLimit / p.input_row || p.sk >= kIntLimit / p.input_row ||
        p.input_row < p.heads * p.head_dim)
        return false;
    KernelArgs args{p.q, p.k, p.v, p.bias, p.out, static_cast<int>(p.batch), static_cast<int>(p.heads),
                    static_cast<int>(p.sq), static_cast<int>(p.sk), static_cast<int>(query_tiles),
                    static_cast<int>(p.input_row), p.bias_strides, p.scale * kLog2e};
    if (p.type == DType::f16) launch<__half>(l, p, args, static_cast<unsigned>(blocks));
    else launch<__nv_bfloat16>(l, p, args, static_cast<unsigned>(blocks));
    return true;
}

}  // namespace infer::cuda
