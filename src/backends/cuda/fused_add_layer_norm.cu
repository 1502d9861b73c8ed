// AddLayerNormalization (core/ops/table_fused.cpp) on the GPU: Y = LayerNorm(X + Skip), and as
// the second output either the sum or, with low_y_dtype, Y again narrowed to f16/bf16
// (fold_norm_casts.cpp: Y as the residual stream in f32 beside the low-type products reading it).
// Rows of up to 1 024 values take one warp each, which holds the row in registers: X and Skip
// are read once and the mean and variance are reduced by shuffles. On an H100 the earlier
// block-per-row kernel, which read each row three times, took 0.38 ms per DistilBERT layer norm
// at batch 512 (46% of the memory bandwidth). Longer rows keep that kernel.
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/packed.cuh"

#include <algorithm>

namespace infer::cuda {

namespace {

// X, Scale, Bias and the sum are of type T; Skip (S), Y and the narrowed Y (L) may be f16/bf16
// beside an f32 T. X and Skip may repeat over the leading rows (x_rows, skip_rows).
template <class T, class S, class Y, class L>
struct NormArgs {
    const T* x;
    const S* skip;
    const T* scale;
    const T* bias;  // or null
    Y* y;
    T* sum;    // or null
    L* low_y;  // or null
    int64_t rows, cols, x_rows, skip_rows;
    float epsilon;
};

// Values per lane in the warp kernel: rows of up to 32 · 32 = 1 024.
constexpr int kLaneValues = 32;
constexpr int kWarpRowsPerBlock = 8;

template <class T, class S, class Y, class L>
__device__ __forceinline__ void write_normalized(const NormArgs<T, S, Y, L>& a, int64_t row, int64_t i, float v,
                                                 float mean, float inv_std) {
    if (a.sum) a.sum[row * a.cols + i] = store<T>(static_cast<Compute<T>>(v));
    float normalized = (v - mean) * inv_std * load_float(a.scale[i]);
    if (a.bias) normalized += load_float(a.bias[i]);
    a.y[row * a.cols + i] = store<Y>(static_cast<Compute<Y>>(normalized));
    if (a.low_y) a.low_y[row * a.cols + i] = store<L>(normalized);
}

// Loads the V neighbours at p into out (as floats); p is a Pack boundary when V > 1.
template <int V, class T>
__device__ __forceinline__ void load_pack(const T* p, float* out) {
    const Pack<T, V> pack = *reinterpret_cast<const Pack<T, V>*>(p);
#pragma unroll
    for (int k = 0; k < V; ++k) out[k] = load_float(pack.v[k]);
}

template <int V, class T>
__device__ __forceinline__ void store_pack(T* p, const float* values) {
    Pack<T, V> pack;
#pragma unroll
    for (int k = 0; k < V; ++k) pack.v[k] = store<T>(static_cast<Compute<T>>(values[k]));
    *reinterpret_cast<Pack<T, V>*>(p) = pack;
}

// One warp per row, each lane holding packs of V neighbours: pack p of the row covers columns
// [p·V, p·V + V), and lane l takes packs l, l + 32, ... With V = 4 every access is one 8- or
// 16-byte load or store; scalar accesses left DistilBERT's batch-512 layer norms at about half
// the H100's memory bandwidth.
template <int V, class T, class S, class Y, class L>
__global__ void add_layer_norm_warp_kernel(NormArgs<T, S, Y, L> a) {
    constexpr int kPacks = kLaneValues / V;
    const int lane = static_cast<int>(threadIdx.x % 32);
    const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpRowsPerBlock + threadIdx.x / 32;
    if (row >= a.rows) return;
    // Rows that do not repeat (the common case) skip the 64-bit remainder, a long software routine.
    const T* x = a.x + (a.x_rows == a.rows ? row : row % a.x_rows) * a.cols;
    const S* s = a.skip + (a.skip_rows == a.rows ? row : row % a.skip_rows) * a.cols;
    const int packs = static_cast<int>(a.cols) / V;
    float v[kLaneValues], scale[kLaneValues], bias[kLaneValues];
    float total = 0.0f;
    // Scale and bias are loaded with X and Skip, not after the reductions: the compiler cannot
    // move a load above a store to Y that might alias it, so loading them beside each store made
    // a batch-1 layer norm one memory trip per pack long (cuobjdump's SASS showed the chain).
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
        const int i = (lane + 32 * j) * V;
        if (lane + 32 * j < packs) {
            float xs[V], ss[V];
            load_pack<V>(x + i, xs);
            load_pack<V>(s + i, ss);
            load_pack<V>(a.scale + i, scale + j * V);
            if (a.bias) load_pack<V>(a.bias + i, bias + j * V);
#pragma unroll
            for (int k = 0; k < V; ++k) {
                v[j * V + k] = xs[k] + ss[k];
                if (!a.bias) bias[j * V + k] = 0.0f;
                total += v[j * V + k];
            }
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) v[j * V + k] = scale[j * V + k] = bias[j * V + k] = 0.0f;
        }
    }
    const float count = static_cast<float>(a.cols);
    const float mean = warp_reduce(total, SumOp{}) / count;
    float squares = 0.0f;
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const float d = lane + 32 * j < packs ? v[j * V + k] - mean : 0.0f;
            squares += d * d;
        }
    }
    const float inv_std = rsqrtf(warp_reduce(squares, SumOp{}) / count + a.epsilon);
    const int64_t at = row * a.cols;
#pragma unroll
    for (int j = 0; j < kPacks; ++j) {
        if (lane + 32 * j >= packs) continue;
        const int64_t i = at + (lane + 32 * j) * V;
        float normalized[V];
#pragma unroll
        for (int k = 0; k < V; ++k)
            normalized[k] = (v[j * V + k] - mean) * inv_std * scale[j * V + k] + bias[j * V + k];
        if (a.sum) store_pack<V>(a.sum + i, v + j * V);
        store_pack<V>(a.y + i, normalized);
        if (a.low_y) store_pack<V>(a.low_y + i, normalized);
    }
}

// Longer rows: one block per row, reading X and Skip again in each pass.
template <class T, class S, class Y, class L>
__global__ void add_layer_norm_block_kernel(NormArgs<T, S, Y, L> a) {
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        const T* x = a.x + (row % a.x_rows) * a.cols;
        const S* s = a.skip + (row % a.skip_rows) * a.cols;
        float total = 0.0f;
        for (int64_t i = threadIdx.x; i < a.cols; i += blockDim.x) total += load_float(x[i]) + load_float(s[i]);
        const float mean = block_reduce(total, SumOp{}, scratch) / static_cast<float>(a.cols);
        float squares = 0.0f;
        for (int64_t i = threadIdx.x; i < a.cols; i += blockDim.x) {
            const float d = load_float(x[i]) + load_float(s[i]) - mean;
            squares += d * d;
        }
        const float inv_std = rsqrtf(block_reduce(squares, SumOp{}, scratch) / static_cast<float>(a.cols) + a.epsilon);
        for (int64_t i = threadIdx.x; i < a.cols; i += blockDim.x)
            write_normalized(a, row, i, load_float(x[i]) + load_float(s[i]), mean, inv_std);
    }
}

// Rows of `input` that repeat over the output's leading rows: the input's shape must be the
// output's trailing dims (after leading 1s), as with a position embedding of [1, S, E].
int64_t repeating_rows(const Launch& l, const Shape& input, const Shape& out) {
    if (input.rank() > out.rank()) l.unsupported("operand " + input.to_string() + " is deeper than " + out.to_string());
    int64_t numel = 1;
    bool leading = true;
    for (size_t i = 0; i < input.rank(); ++i) {
        const int64_t dim = input[i], full = out[out.rank() - input.rank() + i];
        if (leading && dim == 1 && full != 1) continue;
        leading = false;
        if (dim != full) l.unsupported("operand " + input.to_string() + " broadcasts to " + out.to_string() + " inside rows");
        numel *= dim;
    }
    return std::max<int64_t>(1, numel / out[out.rank() - 1]);
}

void run_add_layer_norm(const Launch& l) {
    const Tensor& y = l.ctx.output(0);
    if (y.numel() == 0) return;
    const Shape& shape = y.shape();
    const int64_t cols = shape[shape.rank() - 1], rows = y.numel() / cols;
    const auto defined_output = [&](size_t i) { return l.ctx.num_outputs() > i && l.ctx.output(i).defined(); };
    const bool narrow = l.ctx.attrs().has("low_y_dtype") && defined_output(1);
    const bool keep_sum = !narrow && defined_output(1);
    const DType x_type = l.ctx.input(0).dtype(), skip_type = l.ctx.input(1).dtype();
    const DType low_type = narrow ? l.ctx.output(1).dtype() : DType::f32;
    const auto launch = [&](auto x_tag, auto skip_tag, auto y_tag, auto low_tag) {
        using T = typename decltype(x_tag)::type;
        using S = typename decltype(skip_tag)::type;
        using Y = typename decltype(y_tag)::type;
        using L = typename decltype(low_tag)::type;
        const NormArgs<T, S, Y, L> args{static_cast<const T*>(l.in(0)),
                                        static_cast<const S*>(l.in(1)),
                                        static_cast<const T*>(l.in(2)),
                                        l.ctx.has_input(3) ? static_cast<const T*>(l.in(3)) : nullptr,
                                        static_cast<Y*>(l.out(0)),
                                        keep_sum ? static_cast<T*>(l.out(1)) : nullptr,
                                        narrow ? static_cast<L*>(l.out(1)) : nullptr,
                                        rows,
                                        cols,
                                        repeating_rows(l, l.ctx.input(0).shape(), shape),
                                        repeating_rows(l, l.ctx.input(1).shape(), shape),
                                        l.ctx.attrs().get_float("epsilon", 1e-5f)};
        if (cols <= 32 * kLaneValues) {
            const auto blocks = static_cast<unsigned>((rows + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock);
            constexpr int V = 4;
            const auto whole = [&](const auto* p) { return !p || is_aligned(p, sizeof(*p) * V); };
            if (cols % V == 0 && whole(args.x) && whole(args.skip) && whole(args.scale) && whole(args.bias) &&
                whole(args.y) && whole(args.sum) && whole(args.low_y))
                add_layer_norm_warp_kernel<V><<<blocks, 32 * kWarpRowsPerBlock, 0, l.handle()>>>(args);
            else
                add_layer_norm_warp_kernel<1><<<blocks, 32 * kWarpRowsPerBlock, 0, l.handle()>>>(args);
            l.check_launch("add_layer_norm_warp_kernel");
        } else {
            const int threads = static_cast<int>(std::clamp<int64_t>((cols + 31) / 32 * 32, 32, 256));
            const auto blocks = static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 20));
            add_layer_norm_block_kernel<<<blocks, threads, 0, l.handle()>>>(args);
            l.check_launch("add_layer_norm_block_kernel");
        }
    };
    if (skip_type == x_type && y.dtype() == x_type && !narrow) {
        dispatch_float(x_type, l, [&](auto tag) { launch(tag, tag, tag, tag); });
        return;
    }
    // The folded form: f32 X and sum, Skip and Y each f32 or the low type; or Y in f32 (the
    // residual stream) and again in the low type.
    if (x_type != DType::f32) l.unsupported("X " + l.ctx.input(0).describe() + " beside Skip " + l.ctx.input(1).describe());
    if (!narrow) {
        dispatch_float(skip_type, l, [&](auto skip_tag) {
            dispatch_float(y.dtype(), l, [&](auto y_tag) { launch(Tag<float>{}, skip_tag, y_tag, y_tag); });
        });
        return;
    }
    if (y.dtype() != DType::f32 || !is_16bit_float(low_type))
        l.unsupported("Y " + y.describe() + " narrowed to " + l.ctx.output(1).describe());
    dispatch_float(skip_type, l, [&](auto skip_tag) {
        dispatch_float(low_type, l, [&](auto low_tag) { launch(Tag<float>{}, skip_tag, Tag<float>{}, low_tag); });
    });
}

}  // namespace

void register_add_layer_norm_kernel(KernelRegistrar& r) {
    r.add("AddLayerNormalization", kFloatTypes, run_add_layer_norm);
}

}  // namespace infer::cuda
