// Helpers shared by the case tables, and the table of all cases.
#include "op_case.hpp"

#include "core/ops/op_schema.hpp"

namespace ops {

BuildFn node(const std::string& op, infer::Attributes attributes, std::vector<Operand> operands, size_t outputs) {
    return [=](infer::GraphBuilder& b, const std::vector<infer::Value>& inputs, DType) {
        std::vector<infer::Value> args;
        if (operands.empty()) args = inputs;
        for (const Operand& o : operands) {
            if (o.kind == Operand::input) args.push_back(inputs.at(static_cast<size_t>(o.index)));
            else if (o.kind == Operand::constant) args.push_back(b.constant_i64(o.values));
            else args.push_back(infer::Value{});
        }
        return b.op(op, args, attributes, outputs);
    };
}

int64_t onnx_type(DType type) { return infer::detail::dtype_to_onnx(type); }

const std::vector<Case>& all_cases() {
    static const std::vector<Case> cases = [] {
        std::vector<Case> all;
        for (auto* family : {&math_arithmetic_cases, &math_cases, &indexing_movement_cases, &indexing_cases,
                             &neural_layers_cases, &neural_cases, &control_cases, &sequence_cases, &fused_cases})
            for (Case& c : family()) all.push_back(std::move(c));
        return all;
    }();
    return cases;
}

}  // namespace ops
