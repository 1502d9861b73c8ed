// LayerNormalization, RMSNormalization and BatchNormalization (inference). Statistics are
// computed in f32 whatever the storage type, as ONNX's stash_type=1 asks.
#include "backends/cuda/block_reduce.cuh"
#include "backends/cuda/copy.hpp"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/indexing.cuh"

#include <algorithm>

namespace infer::cuda {

namespace {

// One block per row: mean, then variance around the mean (two passes, no cancellation), then
// the normalized, scaled and shifted row. mean/inv_std may be null (outputs not requested).
// Not Centered (RMSNormalization): the mean is taken as 0, and there is no bias; X, the scale (P)
// and Y may then be of three float types (f16 X and Y beside an f32 scale after fold_norm_casts).
template <class T, class P, class Y, bool Centered>
__global__ void layer_norm_kernel(const T* x, const P* scale, const P* bias, Y* y, T* mean_out,
                                  T* inv_std_out, int64_t rows, int64_t cols, float epsilon) {
    __shared__ float scratch[32];
    for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
        const T* in = x + row * cols;
        Y* out = y + row * cols;
        float mean = 0.0f;
        if constexpr (Centered) {
            float sum = 0.0f;
            for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) sum += load_float(in[i]);
            mean = block_reduce(sum, SumOp{}, scratch) / static_cast<float>(cols);
        }
        float squares = 0.0f;
        for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
            const float d = load_float(in[i]) - mean;
            squares += d * d;
        }
        const float variance = block_reduce(squares, SumOp{}, scratch) / static_cast<float>(cols);
        const float inv_std = rsqrtf(variance + epsilon);
        for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) {
            float v = (load_float(in[i]) - mean) * inv_std * load_float(scale[i]);
            if (bias) v += load_float(bias[i]);
            out[i] = store<Y>(static_cast<Compute<Y>>(v));
        }
        if (threadIdx.x == 0) {
            if (mean_out) mean_out[row] = store<T>(static_cast<Compute<T>>(mean));
            if (inv_std_out) inv_std_out[row] = store<T>(static_cast<Compute<T>>(inv_std));
        }
    }
}

// LayerNormalization (Centered) or RMSNormalization: the same launch, RMSNormalization having
// no bias and no statistics outputs.
template <bool Centered>
void run_normalization(const Launch& l) {
    const Tensor& x = l.ctx.input(0);
    const Shape& shape = x.shape();
    const size_t axis = shape.normalize_axis(l.ctx.attrs().get_int("axis", -1));
    const float epsilon = l.ctx.attrs().get_float("epsilon", 1e-5f);
    int64_t rows = 1, cols = 1;
    for (size_t d = 0; d < axis; ++d) rows *= shape[d];
    for (size_t d = axis; d < shape.rank(); ++d) cols *= shape[d];
    const Shape normalized(std::vector<int64_t>(shape.dims().begin() + static_cast<long>(axis),
                                                shape.dims().end()));
    const bool has_bias = Centered && l.ctx.has_input(2);

    // Scale and bias may be broadcastable to the normalized shape rather than equal to it:
    // expand those into scratch so the kernel can index them like the row.
    const auto needs_expand = [&](size_t i) {
        if (l.ctx.input(i).numel() == cols) return false;
        if (l.ctx.input(i).rank() > normalized.rank())
            l.unsupported("input " + std::to_string(i) + " " + l.ctx.input(i).describe() +
                          " does not broadcast to the normalized shape " + normalized.to_string());
        return true;
    };
    const size_t expanded = (needs_expand(1) ? 1 : 0) + (has_bias && needs_expand(2) ? 1 : 0);
    const size_t element_size = dtype_size(l.ctx.input(1).dtype());  // the scale's and the bias's
    char* scratch = expanded ? static_cast<char*>(l.ctx.workspace(expanded * cols * element_size))
                             : nullptr;
    const auto parameter = [&](size_t i) -> const void* {
        if (!needs_expand(i)) return l.in(i);
        if (l.ctx.input(i).dtype() != l.ctx.input(1).dtype()) l.unsupported("scale and bias of different dtypes");
        void* target = scratch;
        scratch += cols * element_size;
        launch_strided_copy(l, element_size, target, normalized.contiguous_strides(), l.in(i),
                            broadcast_strides(l.ctx.input(i).shape(), normalized), normalized.dims());
        return target;
    };
    const void* scale = parameter(1);
    const void* bias = has_bias ? parameter(2) : nullptr;
    const auto optional_output = [&](size_t i) -> void* {
        return i < l.ctx.num_outputs() && l.ctx.output(i).defined() && l.ctx.output(i).numel() > 0
                   ? l.out(i)
                   : nullptr;
    };
    void* mean = optional_output(1);
    void* inv_std = optional_output(2);

    // Small rows get a small block, so that most threads have work.
    const int threads = static_cast<int>(std::clamp<int64_t>((cols + 31) / 32 * 32, 32, 256));
    const auto blocks = static_cast<unsigned>(std::min<int64_t>(rows, int64_t{1} << 20));
    const auto launch = [&](auto x_tag, auto parameter_tag, auto y_tag) {
        using T = typename decltype(x_tag)::type;
        using P = typename decltype(parameter_tag)::type;
        using Y = typename decltype(y_tag)::type;
        layer_norm_kernel<T, P, Y, Centered><<<blocks, threads, 0, l.handle()>>>(
            static_cast<const T*>(l.in(0)), static_cast<const P*>(scale), static_cast<const P*>(bias),
            static_cast<Y*>(l.out(0)), static_cast<T*>(mean), static_cast<T*>(inv_std), rows, cols, epsilon);
        l.check_launch("layer_norm_kernel");
    };
    if constexpr (Centered) {
        dispatch_float(x.dtype(), l, [&](auto tag) { launch(tag, tag, tag); });
    } else {
        dispatch_float(x.dtype(), l, [&](auto x_tag) {
            dispatch_float(l.ctx.input(1).dtype(), l, [&](auto scale_tag) {
                dispatch_float(l.ctx.output(0).dtype(), l, [&](auto y_tag) { launch(x_tag, scale_tag, y_tag); });
            });
        });
    }
}

// Folds the four per-channel inputs into y = x * factor[c] + shift[c].
template <class P>
__global__ void batch_norm_fold_kernel(const P* scale, const P* bias, const P* mean,
                                       const P* variance, float* factor, float* shift,
                                       int64_t channels, float epsilon) {
    INFER_GRID_STRIDE(c, channels) {
        const float f = load_float(scale[c]) * rsqrtf(load_float(variance[c]) + epsilon);
        factor[c] = f;
        shift[c] = load_float(bias[c]) - load_float(mean[c]) * f;
    }
}

template <class T>
__global__ void batch_norm_kernel(const T* x, T* y, const float* factor, const float* shift,
                                  int64_t n, int64_t channels, int64_t inner) {
    INFER_GRID_STRIDE(i, n) {
        const int64_t c = (i / inner) % channels;
        y[i] = store<T>(static_cast<Compute<T>>(load_float(x[i]) * factor[c] + shift[c]));
    }
}

void run_batch_norm(const Launch& l) {
    const Tensor& x = l.ctx.input(0);
    const DType parameter_type = l.ctx.input(1).dtype();
    for (size_t i = 2; i < 5; ++i)
        if (l.ctx.input(i).dtype() != parameter_type)
            l.unsupported("scale, B, mean and var of different dtypes");
    const int64_t channels = x.shape()[1];
    int64_t inner = 1;
    for (size_t d = 2; d < x.rank(); ++d) inner *= x.shape()[d];
    const int64_t n = x.numel();
    const float epsilon = l.ctx.attrs().get_float("epsilon", 1e-5f);
    auto* factor = static_cast<float*>(l.ctx.workspace(2 * channels * sizeof(float)));
    float* shift = factor + channels;
    dispatch_float(parameter_type, l, [&](auto tag) {
        using P = typename decltype(tag)::type;
        batch_norm_fold_kernel<<<grid_for(channels), kBlock, 0, l.handle()>>>(
            static_cast<const P*>(l.in(1)), static_cast<const P*>(l.in(2)),
            static_cast<const P*>(l.in(3)), static_cast<const P*>(l.in(4)), factor, shift,
            channels, epsilon);
        l.check_launch("batch_norm_fold_kernel");
    });
    dispatch_float(x.dtype(), l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        batch_norm_kernel<<<grid_for(n), kBlock, 0, l.handle()>>>(
            static_cast<const T*>(l.in(0)), static_cast<T*>(l.out(0)), factor, shift, n, channels,
            inner);
        l.check_launch("batch_norm_kernel");
    });
}

// Workspace: scale and bias expanded to the normalized shape when they only broadcast to it.
size_t layer_norm_expanded_parameters(const NodeSignature& node) {
    if (node.input_shapes.empty()) return 0;
    const auto& x = node.input_shapes[0].dims();
    int64_t axis = node.attributes->get_int("axis", -1);
    if (axis < 0) axis += static_cast<int64_t>(x.size());
    axis = std::clamp<int64_t>(axis, 0, static_cast<int64_t>(x.size()));
    int64_t cols = 1;
    for (size_t d = static_cast<size_t>(axis); d < x.size(); ++d) cols *= x[d];
    return static_cast<size_t>(2 * cols) * dtype_size(node.input_dtypes.size() > 1 ? node.input_dtypes[1] : node.input_dtypes[0]);
}

// Workspace: the per-channel scale and shift folded from the four parameter vectors.
size_t batch_norm_folded_parameters(const NodeSignature& node) {
    if (node.input_shapes.empty() || node.input_shapes[0].rank() < 2) return 0;
    return static_cast<size_t>(2 * node.input_shapes[0].dims()[1]) * sizeof(float);
}

}  // namespace

void register_normalization_kernels(KernelRegistrar& r) {
    r.add("LayerNormalization", kFloatTypes, run_normalization<true>, layer_norm_expanded_parameters);
    r.add("RMSNormalization", kFloatTypes, run_normalization<false>, layer_norm_expanded_parameters);
    r.add("BatchNormalization", kFloatTypes, run_batch_norm, batch_norm_folded_parameters);
}

}  // namespace infer::cuda
