#pragma once
// Lowering a graph to f16 or bf16, in the manner of mixed-precision autocast:
//  - matrix ops (MatMul, Gemm, Conv) always run in the low type, their weights converted once;
//  - numerically sensitive ops (reductions, Softmax, LayerNormalization, Pow, Exp, Log, Sqrt,
//    Erf) run in f32, so sums of squares and exponentials cannot overflow;
//  - every other op follows its computed float inputs: f32 if any of them is f32, else low.
// Graph inputs keep their declared f32 type and outputs are cast back to f32, so callers see
// the same interface at every precision. Casts are inserted only where a value crosses types.
#include "core/ir/graph_ir.hpp"

#include <infer/session.hpp>

#include <memory>

namespace infer::detail {

std::shared_ptr<GraphIR> lower_precision(const GraphIR& graph, DType low);

// What a session at `precision` plans from: the graph itself (not copied) for f32, else its
// lowering. The result must not outlive `graph`.
std::shared_ptr<const GraphIR> graph_for_precision(const GraphIR& graph, Precision precision);

}  // namespace infer::detail
