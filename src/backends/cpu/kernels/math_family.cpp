// CPU kernels of the op table's math family (src/core/ops/table_math.cpp), registered file by
// file; Size, too small for a file of its own, lives here.
#include "backends/cpu/kernels/math_kernels.hpp"
#include "backends/cpu/kernels/register.hpp"

namespace infer::cpu {

namespace {

// Size reads only the shape, so one kernel serves every dtype.
void size_kernel(KernelContext& ctx) { *ctx.output(0).data<int64_t>() = ctx.input(0).numel(); }

}  // namespace

void register_math_family_kernels(KernelRegistry& r) {
    register_math_arithmetic_kernels(r);
    register_math_function_kernels(r);
    register_math_cast_kernels(r);
    register_math_matmul_kernels(r);
    register_math_reduce_sum_kernels(r);
    register_math_unary_kernels(r);
    register_math_activation_kernels(r);
    register_math_binary_kernels(r);
    register_math_variadic_kernels(r);
    register_math_reduce_kernels(r);
    register_math_axis_kernels(r);
    register_math_einsum_kernels(r);
    register_math_det_kernels(r);
    for (DType t : kAllDTypes) r.add("Size", t, size_kernel);
}

}  // namespace infer::cpu
