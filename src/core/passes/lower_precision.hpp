#pragma once
// Lowering a graph to f16 or bf16, in the manner of mixed-precision autocast:
//  - matrix ops (MatMul, Gemm, Conv) always run in the low type, their weights converted once;
//  - ops whose results can overflow the low type or need f32 to sum (ReduceMean, ReduceSum, Pow,
//    Exp, Log, Sqrt) run in f32, and so does LayerNormalization, which keeps the residual
//    stream in f32;
//  - every other op follows its computed float inputs: f32 if any of them is f32, else low.
//    Softmax and Erf among them: the kernels compute in f32 internally and round only the
//    bounded result.
// f32 constants converted to the low type are clamped to its finite range (masks use -FLT_MAX).
// In f16, an op with a constant f16 cannot hold (genuine values beyond 65504, or all of them
// below its smallest normal 2^-14) runs in f32, and so does every node named in `keep_f32`:
// sessions name there the nodes whose f16 results a run found out of range (see session.cpp).
// Graph inputs keep their declared f32 type and outputs are cast back to f32, so callers see
// the same interface at every precision. Casts are inserted only where a value crosses types.
#include "core/ir/graph_ir.hpp"

#include <memory>
#include <set>
#include <string>

namespace infer::detail {

std::shared_ptr<GraphIR> lower_precision(const GraphIR& graph, DType low,
                                         const std::set<std::string>& keep_f32 = {});

// The nodes named in `names` and every node downstream of them, by name.
std::set<std::string> nodes_from(const GraphIR& graph, const std::set<std::string>& names);

}  // namespace infer::detail
