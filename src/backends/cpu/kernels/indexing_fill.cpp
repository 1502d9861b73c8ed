// Ops that write fixed patterns or plain conversions: EyeLike, Dropout (inference: identity,
// mask all true; training: random elements dropped) and CastLike (Cast to the dtype of its
// second input).
#include "backends/cpu/kernels/indexing_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <cstring>
#include <random>

namespace infer::cpu {

namespace {

void eye_like_kernel(KernelContext& ctx) {
    Tensor& out = ctx.output(0);
    const int64_t rows = out.shape()[0], cols = out.shape()[1];
    const int64_t k = ctx.attrs().get_int("k", 0);
    std::memset(out.raw_data(), 0, out.nbytes());
    visit_type(out.dtype(), [&](auto type) {
        using T = decltype(type);
        T* dst = static_cast<T*>(out.raw_data());
        for (int64_t r = 0; r < rows; ++r)
            if (r + k >= 0 && r + k < cols) dst[r * cols + r + k] = from_double<T>(1.0);
    });
}

// Dropout's random numbers: MT19937 seeded with the node's `seed` (std::mt19937's seeding is
// MT19937's own, which numpy's RandomState also uses for an integer seed), each uniform draw
// built from 53 bits of two outputs as numpy's random_sample builds it. A seeded node thus
// drops exactly the elements numpy's reference drops (the ONNX tests' expectations); without
// a seed, every run draws anew.
double uniform_53(std::mt19937& generator) {
    const uint32_t high = generator() >> 5, low = generator() >> 6;
    return (high * 67108864.0 + low) / 9007199254740992.0;
}

void dropout_kernel(KernelContext& ctx) {
    const bool training = ctx.has_input(2) && ctx.input(2).to_vector<double>().at(0) != 0;
    const double ratio = ctx.has_input(1) ? ctx.input(1).to_vector<double>().at(0) : 0.5;
    if (!(ratio >= 0 && ratio < 1)) invalid_argument(ctx, "ratio must be in [0, 1), got " + std::to_string(ratio));
    const Tensor& x = ctx.input(0);
    const bool with_mask = ctx.num_outputs() > 1 && ctx.output(1).defined();
    if (!training || ratio == 0) {
        std::memcpy(ctx.output(0).raw_data(), x.raw_data(), x.nbytes());
        if (with_mask) std::memset(ctx.output(1).raw_data(), 1, ctx.output(1).nbytes());  // bool true is the byte 1
        return;
    }
    if (!is_floating(x.dtype())) invalid_argument(ctx, "training mode drops elements of floating-point inputs only");
    std::mt19937 generator(ctx.attrs().has("seed") ? static_cast<uint32_t>(ctx.attrs().get_int("seed"))
                                                     : std::random_device{}());
    const double scale = 1.0 / (1.0 - ratio);
    auto* mask = with_mask ? static_cast<uint8_t*>(ctx.output(1).raw_data()) : nullptr;
    visit_type(x.dtype(), [&](auto type) {
        using T = decltype(type);
        const T* src = static_cast<const T*>(x.raw_data());
        T* dst = static_cast<T*>(ctx.output(0).raw_data());
        for (int64_t i = 0; i < x.numel(); ++i) {  // in order: the draws are one sequence
            const bool keep = uniform_53(generator) >= ratio;
            dst[i] = from_double<T>(keep ? to_double(src[i]) * scale : 0.0);
            if (mask) mask[i] = keep;
        }
    });
}

void cast_like_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    Tensor& out = ctx.output(0);
    if (in.dtype() == out.dtype()) {
        std::memcpy(out.raw_data(), in.raw_data(), in.nbytes());
        return;
    }
    visit_type(in.dtype(), [&](auto from) {
        visit_type(out.dtype(), [&](auto to) {
            using S = decltype(from);
            using D = decltype(to);
            const S* src = static_cast<const S*>(in.raw_data());
            D* dst = static_cast<D*>(out.raw_data());
            parallel_for(in.numel(), 32768, [&](int64_t begin, int64_t end) {
                for (int64_t i = begin; i < end; ++i) dst[i] = from_double<D>(to_double(src[i]));
            });
        });
    });
}

}  // namespace

void register_indexing_fill(KernelRegistry& r) {
    for (DType t : kAllDTypes) {
        r.add("EyeLike", t, eye_like_kernel);
        r.add("Dropout", t, dropout_kernel);
        r.add("CastLike", t, cast_like_kernel);
    }
}

}  // namespace infer::cpu
