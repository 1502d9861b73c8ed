#pragma once
// Recognizes GELU written out as elementwise ops, x * 0.5 * (1 + erf(x / sqrt(2))), which is
// how PyTorch exports nn.GELU before opset 20, and replaces each occurrence with one Gelu node.
// The chain is five passes over the FFN's widest activation; Gelu is one, computed in f32
// inside the kernel at every precision. Accepted spellings: x / sqrt(2) or x * (1 / sqrt(2));
// the 0.5 applied to x, to (1 + erf), or to their product; either operand order everywhere.
// Only chains whose intermediate values have no other reader (and are not graph outputs) fuse.
#include "core/ir/graph_ir.hpp"

#include <memory>

namespace infer::detail {

// The graph itself (not copied) when nothing matched, else a validated copy with the chains
// fused. The result must not outlive `graph`.
std::shared_ptr<const GraphIR> fuse_gelu(const GraphIR& graph);

}  // namespace infer::detail
