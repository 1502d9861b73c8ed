// Elementwise ops: unary math, binary arithmetic and comparisons with NumPy broadcasting, Where.
// Values are loaded into their compute type (f32 for f16/bf16), so the 16-bit types round once,
// on the store.
#include "backends/cuda/copy.hpp"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/indexing.cuh"
#include "backends/cuda/packed.cuh"

#include <cmath>
#include <type_traits>

namespace infer::cuda {

namespace {

// ---- unary

struct Sqrt { template <class C> __device__ C operator()(C x) const { return sqrt(x); } };
struct Reciprocal { template <class C> __device__ C operator()(C x) const { return C(1) / x; } };
struct Exp { template <class C> __device__ C operator()(C x) const { return exp(x); } };
struct Log { template <class C> __device__ C operator()(C x) const { return log(x); } };
struct Tanh { template <class C> __device__ C operator()(C x) const { return tanh(x); } };
struct Erf { template <class C> __device__ C operator()(C x) const { return erf(x); } };
// NaN passes through (a comparison with NaN is false), as PyTorch's relu does.
struct Relu { template <class C> __device__ C operator()(C x) const { return x < C(0) ? C(0) : x; } };
struct Neg { template <class C> __device__ C operator()(C x) const { return -x; } };
struct Abs { template <class C> __device__ C operator()(C x) const { return x < C(0) ? -x : x; } };
struct Sigmoid {
    // Written so that neither branch overflows exp() for large |x|.
    template <class C> __device__ C operator()(C x) const {
        if (x >= C(0)) return C(1) / (C(1) + exp(-x));
        const C e = exp(x);
        return e / (C(1) + e);
    }
};
struct GeluErf {
    template <class C> __device__ C operator()(C x) const {
        return C(0.5) * x * (C(1) + erf(x * C(0.70710678118654752440)));
    }
};
struct GeluTanh {
    template <class C> __device__ C operator()(C x) const {
        const C inner = C(0.79788456080286535588) * (x + C(0.044715) * x * x * x);
        return C(0.5) * x * (C(1) + tanh(inner));
    }
};

// One element through a unary op, in the compute type.
template <class T, class Op>
struct ApplyUnary {
    Op op;
    __device__ __forceinline__ T operator()(T x) const { return store<T>(op(load(x))); }
};

// kIntegers: the op is also defined on i32/i64 (Relu, Neg, Abs), not only on floats.
template <bool kIntegers = false, class Op>
void run_unary_with(const Launch& l, Op op) {
    const int64_t n = l.ctx.output(0).numel();
    const auto launch = [&](auto tag) {
        using T = typename decltype(tag)::type;
        launch_map_contiguous(l, static_cast<const T*>(l.in(0)), static_cast<T*>(l.out(0)), n,
                              ApplyUnary<T, Op>{op}, "unary_kernel");
    };
    if constexpr (kIntegers) dispatch_numeric(l.ctx.input(0).dtype(), l, launch);
    else dispatch_float(l.ctx.input(0).dtype(), l, launch);
}

template <class Op, bool kIntegers = false>
void run_unary(const Launch& l) { run_unary_with<kIntegers>(l, Op{}); }

void run_gelu(const Launch& l) {
    const std::string approximate = l.ctx.attrs().get_string("approximate", "none");
    if (approximate == "none") return run_unary_with(l, GeluErf{});
    if (approximate == "tanh") return run_unary_with(l, GeluTanh{});
    l.unsupported("approximate='" + approximate + "'");
}

__global__ void not_kernel(const uint8_t* in, uint8_t* out, int64_t n) {
    INFER_GRID_STRIDE(i, n) out[i] = in[i] ? 0 : 1;
}

void run_not(const Launch& l) {
    const int64_t n = l.ctx.output(0).numel();
    not_kernel<<<grid_for(n), kBlock, 0, l.handle()>>>(static_cast<const uint8_t*>(l.in(0)),
                                                      static_cast<uint8_t*>(l.out(0)), n);
    l.check_launch("not_kernel");
}

// ---- binary

struct Add { template <class C> __device__ C operator()(C a, C b) const { return a + b; } };
struct Sub { template <class C> __device__ C operator()(C a, C b) const { return a - b; } };
struct Mul { template <class C> __device__ C operator()(C a, C b) const { return a * b; } };
struct Div { template <class C> __device__ C operator()(C a, C b) const { return a / b; } };
struct Pow { template <class C> __device__ C operator()(C a, C b) const { return pow(a, b); } };
struct Equal { template <class C> __device__ uint8_t operator()(C a, C b) const { return a == b; } };
struct Less { template <class C> __device__ uint8_t operator()(C a, C b) const { return a < b; } };
struct Greater { template <class C> __device__ uint8_t operator()(C a, C b) const { return a > b; } };

// Stores an op's result: comparisons yield bytes, arithmetic yields the input type.
template <class Out, class R>
__device__ __forceinline__ Out store_result(R r) {
    if constexpr (std::is_same_v<Out, uint8_t>) return static_cast<uint8_t>(r);
    else return store<Out>(r);
}

template <class T, class Out, class Op, class Index>
__global__ void binary_kernel(const T* a, const T* b, Out* out, Index n, Indexer<2, Index> index,
                              Op op) {
    INFER_GRID_STRIDE_AS(Index, i, n) {
        Index offset[2];
        index.offsets(i, offset);
        out[i] = store_result<Out>(op(load(a[offset[0]]), load(b[offset[1]])));
    }
}

// V neighbours along an operand's innermost dimension: one vector load where it is contiguous
// there, one scalar load where it is broadcast.
template <int V, class T>
__device__ __forceinline__ void load_neighbours(const T* p, bool contiguous, Compute<T> (&x)[V]) {
    if (contiguous) {
        const Pack<T, V> pack = *reinterpret_cast<const Pack<T, V>*>(p);
#pragma unroll
        for (int j = 0; j < V; ++j) x[j] = load(pack.v[j]);
    } else {
        const Compute<T> value = load(*p);
#pragma unroll
        for (int j = 0; j < V; ++j) x[j] = value;
    }
}

// Each thread makes V neighbouring outputs, so the index math runs once per V elements and
// every access is a vector access.
template <int V, class T, class Out, class Op>
__global__ void binary_packed_kernel(const T* a, const T* b, Out* out, int32_t packs,
                                     Indexer<2, int32_t> index, bool a_contiguous, bool b_contiguous,
                                     Op op) {
    INFER_GRID_STRIDE_AS(int32_t, p, packs) {
        int32_t offset[2];
        index.offsets(p * V, offset);
        Compute<T> x[V], y[V];
        load_neighbours<V>(a + offset[0], a_contiguous, x);
        load_neighbours<V>(b + offset[1], b_contiguous, y);
        Pack<Out, V> result;
#pragma unroll
        for (int j = 0; j < V; ++j) result.v[j] = store_result<Out>(op(x[j], y[j]));
        reinterpret_cast<Pack<Out, V>*>(out)[p] = result;
    }
}

// Whether the packed kernel can make the outputs: every input is read whole groups at a time
// or broadcast along the innermost dimension (stride 0).
template <int V>
bool binary_packs(const Indexer<2, int32_t>& index, const void* a, const void* b, size_t input_size,
                  const void* out, size_t out_size) {
    if (!splits_into_groups<V>(index) || !is_aligned(out, out_size * V)) return false;
    const void* inputs[2] = {a, b};
    for (int k = 0; k < 2; ++k)
        if (index.inner_stride(k) != 0 && !moves_groups_whole<V>(index, k, inputs[k], input_size)) return false;
    return true;
}

template <class Op, bool kCompare>
void run_binary(const Launch& l) {
    const Tensor& a = l.ctx.input(0);
    const Tensor& b = l.ctx.input(1);
    if (a.dtype() != b.dtype())
        l.unsupported("inputs of different dtypes: " + a.describe() + " and " + b.describe());
    const Shape& out_shape = l.ctx.output(0).shape();
    const int64_t n = out_shape.numel();
    const auto wide = make_indexer<2>(
        out_shape.dims(), {broadcast_strides(a.shape(), out_shape), broadcast_strides(b.shape(), out_shape)},
        l);
    const auto launch = [&](auto tag) {
        using T = typename decltype(tag)::type;
        using Out = std::conditional_t<kCompare, uint8_t, T>;
        const auto* a_data = static_cast<const T*>(l.in(0));
        const auto* b_data = static_cast<const T*>(l.in(1));
        auto* out = static_cast<Out*>(l.out(0));
        with_narrowest_indexer(wide, n, [&](const auto& index) {
            using Index = typename std::decay_t<decltype(index)>::IndexType;
            constexpr int V = kPackWidth<T>;
            if constexpr (std::is_same_v<Index, int32_t>) {
                if (binary_packs<V>(index, a_data, b_data, sizeof(T), out, sizeof(Out))) {
                    const auto packs = static_cast<int32_t>(n / V);
                    binary_packed_kernel<V><<<grid_for(packs), kBlock, 0, l.handle()>>>(
                        a_data, b_data, out, packs, index, index.inner_stride(0) == 1,
                        index.inner_stride(1) == 1, Op{});
                    return l.check_launch("binary_packed_kernel");
                }
            }
            binary_kernel<<<grid_for(n), kBlock, 0, l.handle()>>>(a_data, b_data, out,
                                                                  static_cast<Index>(n), index, Op{});
            l.check_launch("binary_kernel");
        });
    };
    // Bool equality compares the stored bytes.
    if constexpr (kCompare)
        if (a.dtype() == DType::boolean) return launch(Tag<uint8_t>{});
    dispatch_numeric(a.dtype(), l, launch);
}

// Pow's exponent may have another dtype than the base (ONNX's T1); both are computed in float.
template <class T, class E>
__global__ void pow_kernel(const T* a, const E* b, T* out, int64_t n, Indexer<2> index) {
    INFER_GRID_STRIDE(i, n) {
        int64_t offset[2];
        index.offsets(i, offset);
        const float base = static_cast<float>(load(a[offset[0]]));
        const float exponent = static_cast<float>(load(b[offset[1]]));
        out[i] = store<T>(static_cast<Compute<T>>(powf(base, exponent)));
    }
}

void run_pow(const Launch& l) {
    const Tensor& a = l.ctx.input(0);
    const Tensor& b = l.ctx.input(1);
    const Shape& out_shape = l.ctx.output(0).shape();
    const int64_t n = out_shape.numel();
    const auto index = make_indexer<2>(
        out_shape.dims(), {broadcast_strides(a.shape(), out_shape), broadcast_strides(b.shape(), out_shape)},
        l);
    dispatch_float(a.dtype(), l, [&](auto base_tag) {
        using T = typename decltype(base_tag)::type;
        const auto launch = [&](auto exponent_tag) {
            using E = typename decltype(exponent_tag)::type;
            pow_kernel<<<grid_for(n), kBlock, 0, l.handle()>>>(
                static_cast<const T*>(l.in(0)), static_cast<const E*>(l.in(1)),
                static_cast<T*>(l.out(0)), n, index);
            l.check_launch("pow_kernel");
        };
        // ONNX's T1 also allows unsigned exponents, which no other CUDA kernel takes.
        switch (b.dtype()) {
            case DType::u32: return launch(Tag<uint32_t>{});
            case DType::u64: return launch(Tag<uint64_t>{});
            default: return dispatch_numeric(b.dtype(), l, launch);
        }
    });
}

// ---- Where(condition, x, y): moves elements without looking at them.

template <class T, class Index>
__global__ void where_kernel(const uint8_t* condition, const T* x, const T* y, T* out, Index n,
                             Indexer<3, Index> index) {
    INFER_GRID_STRIDE_AS(Index, i, n) {
        Index offset[3];
        index.offsets(i, offset);
        out[i] = condition[offset[0]] ? x[offset[1]] : y[offset[2]];
    }
}

void run_where(const Launch& l) {
    const Tensor& condition = l.ctx.input(0);
    const Tensor& x = l.ctx.input(1);
    const Tensor& y = l.ctx.input(2);
    if (condition.dtype() != DType::boolean || x.dtype() != y.dtype())
        l.unsupported("inputs " + condition.describe() + ", " + x.describe() + ", " + y.describe());
    const Shape& out_shape = l.ctx.output(0).shape();
    const int64_t n = out_shape.numel();
    const auto wide = make_indexer<3>(out_shape.dims(),
                                      {broadcast_strides(condition.shape(), out_shape),
                                       broadcast_strides(x.shape(), out_shape),
                                       broadcast_strides(y.shape(), out_shape)},
                                      l);
    dispatch_by_size(dtype_size(x.dtype()), l, [&](auto tag) {
        using T = typename decltype(tag)::type;
        with_narrowest_indexer(wide, n, [&](const auto& index) {
            using Index = typename std::decay_t<decltype(index)>::IndexType;
            where_kernel<<<grid_for(n), kBlock, 0, l.handle()>>>(
                static_cast<const uint8_t*>(l.in(0)), static_cast<const T*>(l.in(1)),
                static_cast<const T*>(l.in(2)), static_cast<T*>(l.out(0)), static_cast<Index>(n), index);
            l.check_launch("where_kernel");
        });
    });
}

}  // namespace

void register_elementwise_kernels(KernelRegistrar& r) {
    const auto& floats = kFloatTypes;
    const auto& numeric = kNumericTypes;
    r.add("Sqrt", floats, run_unary<Sqrt>);
    r.add("Reciprocal", floats, run_unary<Reciprocal>);
    r.add("Exp", floats, run_unary<Exp>);
    r.add("Log", floats, run_unary<Log>);
    r.add("Tanh", floats, run_unary<Tanh>);
    r.add("Erf", floats, run_unary<Erf>);
    r.add("Sigmoid", floats, run_unary<Sigmoid>);
    r.add("Gelu", floats, run_gelu);
    r.add("Relu", numeric, run_unary<Relu, true>);
    r.add("Neg", numeric, run_unary<Neg, true>);
    r.add("Abs", numeric, run_unary<Abs, true>);
    r.add("Not", {DType::boolean}, run_not);

    r.add("Add", numeric, run_binary<Add, false>);
    r.add("Sub", numeric, run_binary<Sub, false>);
    r.add("Mul", numeric, run_binary<Mul, false>);
    r.add("Div", numeric, run_binary<Div, false>);
    r.add("Pow", floats, run_pow);
    r.add("Equal", {DType::f32, DType::f16, DType::bf16, DType::i32, DType::i64, DType::boolean},
          run_binary<Equal, true>);
    r.add("Less", numeric, run_binary<Less, true>);
    r.add("Greater", numeric, run_binary<Greater, true>);

    r.add("Where", kEveryType, run_where);
}

}  // namespace infer::cuda
