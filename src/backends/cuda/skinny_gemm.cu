// Few-row products (skinny_gemm.hpp). Two kernels, one per weight layout, both accumulating in
// f32 and applying alpha, the bias and the activation before their one store:
//  - B [k, n] (a MatMul weight): a block owns 16 columns; its 256 threads are 2 column groups of 8
//    columns × 128 slices of k, so that a warp reads 16 rows × 32 contiguous bytes per load and
//    the weight streams through many blocks at once (a 768 × 768 weight is 48 blocks). Partial
//    sums meet through warp shuffles, then shared memory.
//  - B [n, k] (Gemm with transB, a tied embedding as the head): a warp owns one column and reads
//    its weight row along k, 16 bytes per lane; a warp shuffle sums the lanes.
// 16-byte loads need the operand 16-byte aligned with rows a multiple of 16 bytes apart; a
// 16-bit [k, n] weight whose rows are not (n odd) is read in aligned chunks shifted into place;
// otherwise the kernels read element by element.
#include "backends/cuda/activation.cuh"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/skinny_gemm.hpp"

#include <climits>

namespace infer::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kVector = 8;                  // elements per thread per load
constexpr int kColumnGroups = 2;            // B [k, n]: column groups of kVector per block
constexpr int kSlices = kThreads / kColumnGroups;
constexpr int kBlockColumns = kColumnGroups * kVector;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;

// Eight consecutive elements as f32, from one or two 16-byte loads.
template <class T>
__device__ __forceinline__ void load8(const T* p, float (&v)[kVector]) {
    if constexpr (std::is_same_v<T, float>) {
        const float4 lo = __ldg(reinterpret_cast<const float4*>(p));
        const float4 hi = __ldg(reinterpret_cast<const float4*>(p) + 1);
        v[0] = lo.x, v[1] = lo.y, v[2] = lo.z, v[3] = lo.w, v[4] = hi.x, v[5] = hi.y, v[6] = hi.z, v[7] = hi.w;
    } else {
        const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
        const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            T pair[2];
            memcpy(pair, &words[i], sizeof(pair));
            v[2 * i] = load_float(pair[0]);
            v[2 * i + 1] = load_float(pair[1]);
        }
    }
}

// Eight consecutive 16-bit elements at p, which is only 2-byte aligned (the rows of a [k, n]
// weight with n odd, such as GPT-2's 50 257-token head): the 16-byte chunk holding p and the next
// one, shifted into place. Both chunks must be readable: not for the last row's last columns.
template <class T>
__device__ __forceinline__ void load8_realigned(const T* p, float (&v)[kVector]) {
    static_assert(sizeof(T) == 2);
    const auto address = reinterpret_cast<uintptr_t>(p);
    const int shift = static_cast<int>(address & 15) / 2;  // in elements
    const auto* chunk = reinterpret_cast<const uint4*>(address & ~uintptr_t{15});
    const uint4 lo = __ldg(chunk);
    const uint4 hi = shift ? __ldg(chunk + 1) : make_uint4(0, 0, 0, 0);
    const uint32_t words[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    const int skip = shift / 2;  // whole words
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        // Constant indices chosen by selects keep `words` in registers.
        const uint32_t first = skip == 0 ? words[i] : skip == 1 ? words[i + 1] : skip == 2 ? words[i + 2] : words[i + 3];
        const uint32_t second = skip == 0 ? words[i + 1] : skip == 1 ? words[i + 2] : skip == 2 ? words[i + 3] : words[i + 4];
        const uint32_t word = (shift & 1) ? __funnelshift_r(first, second, 16) : first;
        T pair[2];
        memcpy(pair, &word, sizeof(pair));
        v[2 * i] = load_float(pair[0]);
        v[2 * i + 1] = load_float(pair[1]);
    }
}

// Up to eight consecutive elements (count of them, the rest 0), one at a time.
template <class T>
__device__ __forceinline__ void load_upto8(const T* p, int count, float (&v)[kVector]) {
#pragma unroll
    for (int i = 0; i < kVector; ++i) v[i] = i < count ? load_float(p[i]) : 0.0f;
}

template <class T>
__device__ __forceinline__ void finish(T* y, int64_t ldy, const T* bias, int row, int column, float sum, float alpha,
                                       Activation activation) {
    float v = alpha * sum;
    if (bias) v += load_float(bias[column]);
    y[row * ldy + column] = store<T>(static_cast<Compute<T>>(activate(v, activation)));
}

// How a kernel reads eight elements of B: 16-byte loads, 16-byte loads realigned (16-bit types
// whose rows are not 16-byte multiples apart), or one element at a time.
enum class Loads { vector, realigned, scalar };

// B [k, n]. Rows is the kernel's most rows (1, 2, 4, 8); m ≤ Rows are present.
template <class T, int Rows, Loads Mode>
__global__ void __launch_bounds__(kThreads) skinny_kn_kernel(const T* __restrict__ a, int64_t lda, const T* __restrict__ b,
                                                             int64_t ldb, const T* __restrict__ bias, T* __restrict__ y,
                                                             int64_t ldy, int m, int n, int k, float alpha,
                                                             Activation activation) {
    const int group = threadIdx.x % kColumnGroups, slice = threadIdx.x / kColumnGroups;
    const int column0 = blockIdx.x * kBlockColumns + group * kVector;
    const int count = min(kVector, n - column0);
    float acc[Rows][kVector] = {};
    if (count > 0) {
#pragma unroll 4
        for (int kk = slice; kk < k; kk += kSlices) {
            float w[kVector];
            const T* row = b + static_cast<int64_t>(kk) * ldb + column0;
            if constexpr (Mode == Loads::vector) {
                load8(row, w);
            } else if constexpr (Mode == Loads::realigned) {
                if (count == kVector && kk + 1 < k) load8_realigned(row, w);
                else load_upto8(row, count, w);
            } else {
                load_upto8(row, count, w);
            }
#pragma unroll
            for (int r = 0; r < Rows; ++r) {
                if (r >= m) break;
                const float x = load_float(a[r * lda + kk]);
#pragma unroll
                for (int j = 0; j < kVector; ++j) acc[r][j] = fmaf(x, w[j], acc[r][j]);
            }
        }
    }
    // The warp's 16 slices of each column group, then the 8 warps through shared memory.
#pragma unroll
    for (int r = 0; r < Rows; ++r)
#pragma unroll
        for (int j = 0; j < kVector; ++j)
#pragma unroll
            for (int offset = kColumnGroups; offset < 32; offset *= 2)
                acc[r][j] += __shfl_xor_sync(kFullMask, acc[r][j], offset);
    __shared__ float partial[kWarps][Rows][kBlockColumns];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane < kColumnGroups)
#pragma unroll
        for (int r = 0; r < Rows; ++r)
#pragma unroll
            for (int j = 0; j < kVector; ++j) partial[warp][r][lane * kVector + j] = acc[r][j];
    __syncthreads();
    for (int o = threadIdx.x; o < m * kBlockColumns; o += kThreads) {
        const int r = o / kBlockColumns, c = o % kBlockColumns, column = blockIdx.x * kBlockColumns + c;
        if (column >= n) continue;
        float sum = 0.0f;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) sum += partial[w][r][c];
        finish(y, ldy, bias, r, column, sum, alpha, activation);
    }
}

// B [n, k]: warp `column` of the grid takes the dot products of the m rows with B's row `column`.
template <class T, int Rows, bool Vectors>
__global__ void __launch_bounds__(kThreads) skinny_nk_kernel(const T* __restrict__ a, int64_t lda, const T* __restrict__ b,
                                                             int64_t ldb, const T* __restrict__ bias, T* __restrict__ y,
                                                             int64_t ldy, int m, int n, int k, float alpha,
                                                             Activation activation) {
    const int lane = threadIdx.x % 32;
    const int column = blockIdx.x * kWarps + threadIdx.x / 32;
    if (column >= n) return;  // whole warps only: the shuffles below see all 32 lanes
    const T* w_row = b + static_cast<int64_t>(column) * ldb;
    float acc[Rows] = {};
    if (Vectors) {
#pragma unroll 2
        for (int kk = lane * kVector; kk < k; kk += 32 * kVector) {
            float w[kVector];
            load8(w_row + kk, w);
#pragma unroll
            for (int r = 0; r < Rows; ++r) {
                if (r >= m) break;
                float x[kVector];
                load8(a + r * lda + kk, x);
#pragma unroll
                for (int j = 0; j < kVector; ++j) acc[r] = fmaf(x[j], w[j], acc[r]);
            }
        }
    } else {
        for (int kk = lane; kk < k; kk += 32) {
            const float w = load_float(w_row[kk]);
#pragma unroll
            for (int r = 0; r < Rows; ++r) {
                if (r >= m) break;
                acc[r] = fmaf(load_float(a[r * lda + kk]), w, acc[r]);
            }
        }
    }
#pragma unroll
    for (int r = 0; r < Rows; ++r) {
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) acc[r] += __shfl_xor_sync(kFullMask, acc[r], offset);
        if (lane == 0 && r < m) finish(y, ldy, bias, r, column, acc[r], alpha, activation);
    }
}

bool aligned16(const void* p, int64_t row_elements, size_t element) {
    return reinterpret_cast<uintptr_t>(p) % 16 == 0 && (row_elements * static_cast<int64_t>(element)) % 16 == 0;
}

template <class T, int Rows>
void launch(const Launch& l, const SkinnyProduct& p) {
    const auto* a = static_cast<const T*>(p.a);
    const auto* b = static_cast<const T*>(p.b);
    const auto* bias = static_cast<const T*>(p.bias);
    auto* y = static_cast<T*>(p.y);
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    if (p.b_transposed) {
        const bool vectors = k % kVector == 0 && aligned16(p.b, p.ldb, sizeof(T)) && aligned16(p.a, p.lda, sizeof(T));
        const auto blocks = static_cast<unsigned>((n + kWarps - 1) / kWarps);
        if (vectors)
            skinny_nk_kernel<T, Rows, true><<<blocks, kThreads, 0, l.handle()>>>(a, p.lda, b, p.ldb, bias, y, p.ldy, m, n, k,
                                                                                 p.alpha, p.activation);
        else
            skinny_nk_kernel<T, Rows, false><<<blocks, kThreads, 0, l.handle()>>>(a, p.lda, b, p.ldb, bias, y, p.ldy, m, n, k,
                                                                                  p.alpha, p.activation);
        l.check_launch("skinny_nk_kernel");
    } else {
        const auto blocks = static_cast<unsigned>((n + kBlockColumns - 1) / kBlockColumns);
        const auto run = [&](auto mode) {
            skinny_kn_kernel<T, Rows, decltype(mode)::value><<<blocks, kThreads, 0, l.handle()>>>(
                a, p.lda, b, p.ldb, bias, y, p.ldy, m, n, k, p.alpha, p.activation);
        };
        const bool realign = sizeof(T) == 2 && aligned16(p.b, 0, sizeof(T));
        if (n % kVector == 0 && aligned16(p.b, p.ldb, sizeof(T))) run(std::integral_constant<Loads, Loads::vector>{});
        else if constexpr (sizeof(T) == 2) {
            if (realign) run(std::integral_constant<Loads, Loads::realigned>{});
            else run(std::integral_constant<Loads, Loads::scalar>{});
        } else {
            run(std::integral_constant<Loads, Loads::scalar>{});
        }
        l.check_launch("skinny_kn_kernel");
    }
}

}  // namespace

bool skinny_gemm(const Launch& l, const SkinnyProduct& p) {
    if (p.m < 1 || p.m > kSkinnyRows || p.k < 1 || p.n < 1) return false;
    // 32-bit element indices inside the kernels (the row offsets into B are 64-bit).
    if (p.k > INT_MAX / 2 || p.n > INT_MAX / 2) return false;
    dispatch_float(p.type, l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if (p.m == 1) launch<T, 1>(l, p);
        else if (p.m == 2) launch<T, 2>(l, p);
        else if (p.m <= 4) launch<T, 4>(l, p);
        else launch<T, 8>(l, p);
    });
    return true;
}

}  // namespace infer::cuda
