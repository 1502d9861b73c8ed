// Recognizes GELU written out as elementwise ops, x * 0.5 * (1 + erf(x / sqrt(2))), which is
// how PyTorch exports nn.GELU before opset 20, and replaces each occurrence with one Gelu node.
// The chain is five passes over the FFN's widest activation; Gelu is one, computed in f32
// inside the kernel at every precision. Accepted spellings: x / sqrt(2) or x * (1 / sqrt(2));
// the 0.5 applied to x, to (1 + erf), or to their product; either operand order everywhere.
// Only chains whose intermediate values have no other reader (and are not graph outputs) fuse.
#include "core/ops/op_schema.hpp"
#include "core/passes/pattern.hpp"
#include "core/passes/pipeline.hpp"

#include <cmath>

namespace infer::detail {

namespace {

struct GeluOps {
    OpId erf = op_id("Erf"), div = op_id("Div"), mul = op_id("Mul"), add = op_id("Add");
};

bool is_float(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

// A matched chain: the nodes it replaces (the last one last), the GELU's input and output.
struct Chain {
    std::vector<int> nodes;
    int x = -1, y = -1;
};

// The chain whose Erf is node `erf`, if the pattern holds around it.
std::optional<Chain> match_gelu(const Pattern& p, int erf, const GeluOps& op) {
    if (!p.is(erf, op.erf)) return std::nullopt;
    const NodeIR& e = p.node(erf);
    // x / sqrt(2) or x * (1 / sqrt(2)), read by the Erf alone.
    const int scaled = e.inputs[0];
    std::optional<int> input;
    int scaling = p.sole_producer(scaled, op.div);
    if (scaling >= 0 && p.is_scalar(p.node(scaling).inputs[1], std::sqrt(2.0)))
        input = p.node(scaling).inputs[0];
    else if (scaling = p.sole_producer(scaled, op.mul); scaling >= 0)
        input = p.other_than_scalar(p.node(scaling), 1.0 / std::sqrt(2.0));
    if (!input || !is_float(p.type(*input).dtype)) return std::nullopt;
    const int x = *input;
    // 1 + erf(...)
    const int add = p.sole_reader(e.outputs[0], op.add);
    if (add < 0 || !p.other_than_scalar(p.node(add), 1.0)) return std::nullopt;
    const int one_plus = p.node(add).outputs[0];
    // Then the Muls that bring in x and 0.5.
    const int first = p.sole_reader(one_plus, op.mul);
    if (first < 0) return std::nullopt;
    const int with_first = Pattern::other_input(p.node(first), one_plus);
    // (x * 0.5) * (1 + erf): the halving is a Mul of its own on x, read only here.
    const int half = p.sole_producer(with_first, op.mul);
    if (half >= 0 && p.other_than_scalar(p.node(half), 0.5) == x) {
        return Chain{{scaling, erf, add, half, first}, x, p.node(first).outputs[0]};
    }
    // ((1 + erf) * x) * 0.5 or ((1 + erf) * 0.5) * x
    const int second = p.sole_reader(p.node(first).outputs[0], op.mul);
    if (second < 0) return std::nullopt;
    const int with_second = Pattern::other_input(p.node(second), p.node(first).outputs[0]);
    if ((with_first == x && p.is_scalar(with_second, 0.5)) || (p.is_scalar(with_first, 0.5) && with_second == x)) {
        return Chain{{scaling, erf, add, first, second}, x, p.node(second).outputs[0]};
    }
    return std::nullopt;
}

}  // namespace

void fuse_gelu(Rewriter& rewriter, const PassContext& context) {
    if (!context.target_runs("Gelu")) return;
    const GeluOps op;
    const Pattern p(rewriter);
    for (size_t n = 0; n < p.graph().nodes.size(); ++n) {
        if (const auto chain = match_gelu(p, static_cast<int>(n), op))
            rewriter.replace(chain->nodes, {"Gelu", p.node(chain->nodes.back()).name, {chain->x}, {chain->y}, {}});
    }
}

}  // namespace infer::detail
