// Ops that write fixed patterns or plain conversions: EyeLike, Dropout (inference: identity,
// mask all true) and CastLike (Cast to the dtype of its second input).
#include "backends/cpu/kernels/indexing_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"

#include <cstring>

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

void dropout_kernel(KernelContext& ctx) {
    // Training with a non-zero ratio drops random elements: no reproducible answer to give.
    const bool training = ctx.has_input(2) && ctx.input(2).to_vector<double>().at(0) != 0;
    const double ratio = ctx.has_input(1) ? ctx.input(1).to_vector<double>().at(0) : 0.5;
    if (training && ratio != 0) unsupported(ctx, "training_mode with a non-zero ratio");
    const Tensor& x = ctx.input(0);
    std::memcpy(ctx.output(0).raw_data(), x.raw_data(), x.nbytes());
    if (ctx.num_outputs() > 1 && ctx.output(1).defined()) {
        Tensor& mask = ctx.output(1);
        std::memset(mask.raw_data(), 1, mask.nbytes());  // bool true is the byte 1
    }
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
