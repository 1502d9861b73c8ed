// QuantizedMatMul (precision = int8, core/ops/table_fused.cpp) on CUDA, the same integers as the
// CPU kernel (src/backends/cpu/kernels/fused_quantized_matmul.cpp) and int8 tensor cores for
// the product:
// - the weight, symmetric per output column (s8, scale max|W[:, n]| / 127), quantized on the
//   GPU once per session when it is a constant (CompileContext::prepacked), else every run;
//   stored column by column (K contiguous), the operand layout cuBLAS's int8 products take;
// - A per row (u8 asymmetric: the row's range with 0 over 255 steps, or the calibrated range),
//   stored as s8 = u8 - 128, since cuBLAS multiplies signed bytes only. The shift cancels:
//   Σ (q - zero) · w = Σ (q - 128) · w - (zero - 128) · Σ w, so the zero point kept is zero - 128;
// - cuBLAS s8 × s8 → i32 (cublasGemmEx, CUBLAS_COMPUTE_32I), K, the columns and the rows
//   padded with zeros to the multiples its tensor-core kernels ask for;
// - one epilogue kernel: y = (acc - zero · Σ w) · scale · wscale + bias, then the activation.
// A, W, the bias and Y are all f32 or all f16 (an int8 session's activations on CUDA are f16:
// PassContext::activation_dtype); the arithmetic is f32 either way.
#include "backends/cuda/activation.cuh"
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/fast_divmod.hpp"
#include "backends/cuda/packed.cuh"

#include <climits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace infer::cuda {

namespace {

int64_t padded(int64_t v, int64_t to) { return (v + to - 1) / to * to; }
size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

// The quantized weight in one byte buffer: Wq [np, kp] s8 (column n of W as row n), then np f32
// scales, then np i32 column sums. Columns past n and values past k are zero.
struct WeightLayout {
    int64_t k = 0, n = 0, kp = 0, np = 0;

    WeightLayout() = default;
    WeightLayout(int64_t k_, int64_t n_) : k(k_), n(n_), kp(padded(k_, 16)), np(padded(n_, 16)) {}
    size_t scales_offset() const { return align256(static_cast<size_t>(np * kp)); }
    size_t sums_offset() const { return scales_offset() + align256(static_cast<size_t>(np) * sizeof(float)); }
    size_t bytes() const { return sums_offset() + align256(static_cast<size_t>(np) * sizeof(int32_t)); }
};

// Max that skips NaN (fmaxf returns the other operand), as the CPU's ranges do (fminf for min).
struct PeakOp {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
    static constexpr float identity = 0.0f;
};

// Into [0, 255]; NaN to 0.
__device__ __forceinline__ float to_u8_range(float v) { return v > 0.0f ? (v < 255.0f ? v : 255.0f) : 0.0f; }

// One block per (padded) column of W [k, n].
template <class T>
__global__ void quantize_columns_kernel(const T* w, WeightLayout layout, int8_t* q, float* scales, int32_t* sums) {
    __shared__ float scratch[32];
    const int64_t column = blockIdx.x;
    int8_t* out = q + column * layout.kp;
    if (column >= layout.n) {
        for (int64_t j = threadIdx.x; j < layout.kp; j += blockDim.x) out[j] = 0;
        if (threadIdx.x == 0) scales[column] = 1.0f, sums[column] = 0;
        return;
    }
    float peak = 0.0f;
    for (int64_t j = threadIdx.x; j < layout.k; j += blockDim.x) peak = fmaxf(peak, fabsf(load_float(w[j * layout.n + column])));
    peak = block_reduce(peak, PeakOp{}, scratch);
    const float scale = peak > 0.0f ? peak / 127.0f : 1.0f;
    // The sum in f32 is exact: at most 127 · k, below 2^24 for k up to 132 000.
    float sum = 0.0f;
    for (int64_t j = threadIdx.x; j < layout.kp; j += blockDim.x) {
        float v = 0.0f;
        if (j < layout.k) v = fminf(fmaxf(rintf(load_float(w[j * layout.n + column]) / scale), -127.0f), 127.0f);
        out[j] = static_cast<int8_t>(v);
        sum += v;
    }
    sum = block_reduce(sum, SumOp{}, scratch);
    if (threadIdx.x == 0) {
        scales[column] = scale;
        sums[column] = static_cast<int32_t>(sum);
    }
}

template <class T>
void quantize_weight(const T* w, const WeightLayout& layout, void* out, cudaStream_t stream) {
    auto* base = static_cast<char*>(out);
    quantize_columns_kernel<<<static_cast<unsigned>(layout.np), kBlock, 0, stream>>>(
        w, layout, reinterpret_cast<int8_t*>(base), reinterpret_cast<float*>(base + layout.scales_offset()),
        reinterpret_cast<int32_t*>(base + layout.sums_offset()));
}

// Max and min across a warp's lanes.
__device__ __forceinline__ void warp_range(float& lo, float& hi) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, offset));
        hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, offset));
    }
}

constexpr int kRowsPerBlock = kBlock / 32;

// One warp per (padded) row of A [rows, k]: s8 values (u8 - 128), the row's scale and its zero
// point minus 128. Rows past `rows` are zero. A warp rather than a block per row: with a block
// each row waited on two block-wide reductions and a multiprocessor held 8 rows in flight, which
// left the kernel bound by latency, far below the memory's bandwidth. Each lane moves V
// neighbouring values per access (16 bytes of A, V bytes of the result) where k and A's address
// allow, V = 1 otherwise; the row is read twice, the second time mostly from cache.
template <class T, int V>
__global__ void quantize_rows_kernel(const T* a, int64_t rows, int64_t rows_padded, int64_t k, int64_t kp,
                                     bool calibrated, float low, float high, int8_t* q, float* row_scale,
                                     int32_t* row_zero) {
    const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
    const int lane = static_cast<int>(threadIdx.x % 32);
    if (row >= rows_padded) return;  // whole warps leave together
    int8_t* out = q + row * kp;
    if (row >= rows) {
        for (int64_t j = lane; j < kp; j += 32) out[j] = 0;
        return;
    }
    const auto* x = reinterpret_cast<const Pack<T, V>*>(a + row * k);
    const int64_t packs = k / V;
    float lo = low, hi = high;
    if (!calibrated) {
        lo = hi = 0.0f;
        for (int64_t j = lane; j < packs; j += 32) {
            const Pack<T, V> p = x[j];
#pragma unroll
            for (int e = 0; e < V; ++e) {
                const float v = load_float(p.v[e]);
                lo = fminf(lo, v), hi = fmaxf(hi, v);
            }
        }
        warp_range(lo, hi);
    }
    // The CPU's operations one for one (IEEE division, products rounded before rintf), so the
    // same bytes from the same values.
    float scale = (hi - lo) / 255.0f;
    if (!(scale > 0.0f)) scale = 1.0f;
    const float inverse = 1.0f / scale;
    const float zero = to_u8_range(rintf(__fmul_rn(-lo, inverse)));
    for (int64_t j = lane; j < packs; j += 32) {
        const Pack<T, V> p = x[j];
        Pack<int8_t, V> b;
#pragma unroll
        for (int e = 0; e < V; ++e)
            b.v[e] = static_cast<int8_t>(static_cast<int>(to_u8_range(rintf(__fmul_rn(load_float(p.v[e]), inverse)) + zero)) - 128);
        reinterpret_cast<Pack<int8_t, V>*>(out)[j] = b;
    }
    for (int64_t j = packs * V + lane; j < kp; j += 32) out[j] = 0;  // k is a multiple of V when V > 1
    if (lane == 0) {
        row_scale[row] = scale;
        row_zero[row] = static_cast<int32_t>(zero) - 128;
    }
}

// V neighbouring columns per thread: 16-byte loads of the sums and of the columns' scales and
// sums (rows of acc start on 64-byte boundaries, np being a multiple of 16), one store of Y, where
// n and Y's and the bias's addresses allow; V = 1 otherwise.
template <class T, int V>
__global__ void dequantize_kernel(const int32_t* acc, int64_t np, const float* row_scale, const int32_t* row_zero,
                                  const float* column_scale, const int32_t* column_sums, const T* bias, T* y,
                                  uint32_t groups, FastDivmod groups_per_row, Activation activation) {
    for (uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += gridDim.x * blockDim.x) {
        const uint32_t r = groups_per_row.quotient(g), c0 = (g - r * groups_per_row.divisor) * V;
        const Pack<int32_t, V> sums = *reinterpret_cast<const Pack<int32_t, V>*>(acc + r * np + c0);
        const Pack<int32_t, V> weight_sums = *reinterpret_cast<const Pack<int32_t, V>*>(column_sums + c0);
        const Pack<float, V> weight_scales = *reinterpret_cast<const Pack<float, V>*>(column_scale + c0);
        Pack<T, V> shift;
        if (bias) shift = *reinterpret_cast<const Pack<T, V>*>(bias + c0);
        const float scale = row_scale[r];
        const int32_t zero = row_zero[r];
        Pack<T, V> out;
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const int32_t corrected = sums.v[j] - zero * weight_sums.v[j];
            float v = __fmul_rn(static_cast<float>(corrected), __fmul_rn(scale, weight_scales.v[j]));
            if (bias) v = __fadd_rn(v, load_float(shift.v[j]));
            out.v[j] = store<T>(activate(v, activation));
        }
        *reinterpret_cast<Pack<T, V>*>(y + static_cast<size_t>(r) * groups_per_row.divisor * V + c0) = out;
    }
}

// Where each part of a run's scratch memory lies.
struct Scratch {
    size_t values = 0, scales, zeros, acc, weight, bytes;

    Scratch(int64_t rows, const WeightLayout& w) {
        const int64_t rows_padded = padded(rows, 16);
        scales = align256(static_cast<size_t>(rows_padded * w.kp));
        zeros = scales + align256(static_cast<size_t>(rows) * sizeof(float));
        acc = zeros + align256(static_cast<size_t>(rows) * sizeof(int32_t));
        weight = acc + align256(static_cast<size_t>(rows_padded * w.np) * sizeof(int32_t));
        bytes = weight + w.bytes();  // used when the weight is not a constant
    }
};

int64_t rows_of(const Shape& a) {
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < a.rank(); ++i) rows *= a[i];
    return rows;
}

size_t quantized_matmul_workspace(const NodeSignature& node) {
    if (node.input_shapes.size() < 2 || node.input_shapes[1].rank() != 2) return 0;
    const Shape& w = node.input_shapes[1];
    return Scratch(rows_of(node.input_shapes[0]), WeightLayout(w[0], w[1])).bytes;
}

struct QuantizedMatMul {
    WeightLayout layout;
    std::string activation;
    std::optional<std::pair<float, float>> range;  // static quantization: A's calibrated range
    Tensor weight;                                 // quantized on the device, when W is a constant

    void operator()(const Launch& l) const {
        const DType type = l.ctx.input(0).dtype();
        if ((type != DType::f32 && type != DType::f16) || l.ctx.input(1).dtype() != type ||
            (l.ctx.has_input(2) && l.ctx.input(2).dtype() != type))
            l.unsupported("inputs other than all f32 or all f16");
        if (type == DType::f16) run<__half>(l);
        else run<float>(l);
    }

    template <class T>
    void run(const Launch& l) const {
        const Tensor& y = l.ctx.output(0);
        if (y.numel() == 0) return;
        const Activation act = activation_named(l, activation);
        const int64_t rows = y.numel() / layout.n;
        if (rows * layout.n > INT_MAX || rows * layout.np > INT_MAX)
            l.unsupported("more than 2^31 outputs: " + y.shape().to_string());
        const Scratch s(rows, layout);
        char* work = static_cast<char*>(l.ctx.workspace(s.bytes));
        const char* w = static_cast<const char*>(weight.defined() ? weight.raw_data() : work + s.weight);
        if (!weight.defined()) {
            quantize_weight(static_cast<const T*>(l.in(1)), layout, work + s.weight, l.handle());
            l.check_launch("quantize_columns_kernel");
        }
        const int64_t rows_padded = padded(rows, 16);
        auto* values = reinterpret_cast<int8_t*>(work + s.values);
        auto* scales = reinterpret_cast<float*>(work + s.scales);
        auto* zeros = reinterpret_cast<int32_t*>(work + s.zeros);
        auto* acc = reinterpret_cast<int32_t*>(work + s.acc);
        const auto row_blocks = static_cast<unsigned>((rows_padded + kRowsPerBlock - 1) / kRowsPerBlock);
        const T* a = static_cast<const T*>(l.in(0));
        const auto quantize = [&](auto width) {
            constexpr int V = decltype(width)::value;
            quantize_rows_kernel<T, V><<<row_blocks, kBlock, 0, l.handle()>>>(
                a, rows, rows_padded, layout.k, layout.kp, range.has_value(), range ? range->first : 0.0f,
                range ? range->second : 0.0f, values, scales, zeros);
        };
        constexpr int kWide = 16 / sizeof(T);  // values of A per 16 bytes
        if (layout.k % kWide == 0 && is_aligned(a, 16)) quantize(std::integral_constant<int, kWide>{});
        else quantize(std::integral_constant<int, 1>{});
        l.check_launch("quantize_rows_kernel");
        // Column-major for cuBLAS: acc^T [np, rows] = Wq [kp, np]^T · Aq^T [kp, rows]; with
        // k = 0 the sums are zeros (cuBLAS takes no empty inner dimension).
        const int32_t one = 1, none = 0;
        if (layout.kp == 0)
            INFER_CUDA_CHECK(cudaMemsetAsync(acc, 0, static_cast<size_t>(rows_padded * layout.np) * sizeof(int32_t),
                                             l.handle()),
                             l.where());
        else
            INFER_CUBLAS_CHECK(cublasGemmEx(l.stream.cublas(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(layout.np),
                                            static_cast<int>(rows_padded), static_cast<int>(layout.kp), &one, w,
                                            CUDA_R_8I, static_cast<int>(layout.kp), values, CUDA_R_8I,
                                            static_cast<int>(layout.kp), &none, acc, CUDA_R_32I,
                                            static_cast<int>(layout.np), CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT),
                               l.where() + ", int8 product " + std::to_string(rows_padded) + "x" +
                                   std::to_string(layout.np) + "x" + std::to_string(layout.kp));
        const auto* column_scales = reinterpret_cast<const float*>(w + layout.scales_offset());
        const auto* column_sums = reinterpret_cast<const int32_t*>(w + layout.sums_offset());
        const T* bias = l.ctx.has_input(2) ? static_cast<const T*>(l.in(2)) : nullptr;
        T* out = static_cast<T*>(l.out(0));
        const auto dequantize = [&](auto width) {
            constexpr int V = decltype(width)::value;
            const auto groups = static_cast<uint32_t>(rows * layout.n / V);
            dequantize_kernel<T, V><<<grid_for(groups), kBlock, 0, l.handle()>>>(
                acc, layout.np, scales, zeros, column_scales, column_sums, bias, out, groups,
                FastDivmod(static_cast<uint32_t>(layout.n / V)), act);
        };
        const auto fits = [&](int v) {
            return layout.n % v == 0 && is_aligned(out, v * sizeof(T)) && (!bias || is_aligned(bias, v * sizeof(T)));
        };
        if (fits(8)) dequantize(std::integral_constant<int, 8>{});
        else if (fits(4)) dequantize(std::integral_constant<int, 4>{});
        else dequantize(std::integral_constant<int, 1>{});
        l.check_launch("dequantize_kernel");
    }
};

CudaKernelFunction compile_quantized_matmul(const CompileContext& c) {
    const NodeSignature& node = c.node();
    QuantizedMatMul kernel;
    kernel.layout = WeightLayout(node.input_shapes[1][0], node.input_shapes[1][1]);
    kernel.activation = node.attributes->get_string("activation", "");
    if (node.attributes->has("a_low") && node.attributes->has("a_high"))
        kernel.range = {node.attributes->get_float("a_low", 0.0f), node.attributes->get_float("a_high", 0.0f)};
    if (c.constant(1) && (c.constant(1)->dtype() == DType::f32 || c.constant(1)->dtype() == DType::f16)) {
        const WeightLayout layout = kernel.layout;
        const Device device = c.device();
        kernel.weight = c.prepacked(1, "cuda/int8-columns", [layout, device](const Tensor& host) {
            // Quantized where it will be used: the f32 weight goes up once, the kernel runs on
            // the legacy stream and is waited for, so the bytes are ready for any stream.
            const Tensor w = host.contiguous().to(device);
            Tensor packed = Tensor::empty(DType::u8, Shape({static_cast<int64_t>(layout.bytes())}), device);
            DeviceGuard guard(device.index);
            if (w.dtype() == DType::f16)
                quantize_weight(static_cast<const __half*>(w.raw_data()), layout, packed.raw_data(), cudaStreamLegacy);
            else
                quantize_weight(static_cast<const float*>(w.raw_data()), layout, packed.raw_data(), cudaStreamLegacy);
            INFER_CUDA_CHECK(cudaGetLastError(), "quantizing a weight for int8 on " + device.to_string());
            INFER_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy), "quantizing a weight for int8 on " + device.to_string());
            return packed;
        });
    }
    return kernel;
}

}  // namespace

void register_quantized_matmul_kernel(KernelRegistrar& r) {
    for (DType type : {DType::f32, DType::f16})
        r.add_compiled("QuantizedMatMul", type, compile_quantized_matmul, quantized_matmul_workspace);
}

}  // namespace infer::cuda
