// The dtype rules, shape_unary and the dtype check that every family's table uses.
#include "core/ops/shape_functions.hpp"

#include <string>

namespace infer::detail {

DType dtype_same_as_kernel_input(const InferenceContext& ctx, size_t) {
    const OpSchema* schema = ctx.node().id != kUnknownOp ? &op_schema(ctx.node().id) : find_op(ctx.node().op);
    return ctx.dtype(static_cast<size_t>(schema->kernel_dtype_input));
}
DType dtype_bool(const InferenceContext&, size_t) { return DType::boolean; }
DType dtype_i64(const InferenceContext&, size_t) { return DType::i64; }
DType dtype_of_input1(const InferenceContext& ctx, size_t) { return ctx.dtype(1); }
DType dtype_same_then_i64(const InferenceContext& ctx, size_t output) {
    return output == 0 ? ctx.dtype(0) : DType::i64;
}
DType dtype_from_to_attribute(const InferenceContext& ctx, size_t) {
    return dtype_from_onnx(ctx.attrs().get_int("to"));
}
DType dtype_from_value_attribute(const InferenceContext& ctx, size_t) {
    return ctx.attrs().has("value") ? ctx.attrs().get_tensor("value").dtype() : DType::f32;
}

std::vector<Shape> shape_unary(const InferenceContext& ctx) { return {ctx.shape(0)}; }

void check_same_dtypes(const InferenceContext& ctx, size_t first) {
    for (size_t i = first + 1; i < ctx.num_inputs(); ++i)
        if (ctx.has_input(i) && ctx.dtype(i) != ctx.dtype(first))
            ctx.fail("input " + std::to_string(i) + " is " + std::string(dtype_name(ctx.dtype(i))) +
                     " but input " + std::to_string(first) + " is " +
                     std::string(dtype_name(ctx.dtype(first))));
}

}  // namespace infer::detail
