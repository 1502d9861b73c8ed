#pragma once
// ONNX import: a ModelProto becomes a validated GraphIR.
#include "core/ir/graph_ir.hpp"

#include <onnx/onnx_pb.h>

#include <memory>
#include <string>

namespace infer::detail {

// The newest default-domain opset infer reads; older ones are adapted (opset_adapter.cpp).
inline constexpr int64_t kNewestOpset = 21;
inline constexpr int64_t kOldestOpset = 1;

// `base_dir` resolves external weight files; `what` names the model in messages.
std::shared_ptr<GraphIR> import_onnx(const onnx::ModelProto& model, const std::string& base_dir,
                                     const std::string& what);

class ImportBuilder;

// One ONNX node with its tensor names resolved to value ids (-1: an absent optional input).
struct ImportedNode {
    std::string op, name;
    std::vector<int> inputs, outputs;
    Attributes attributes;
};

// Adds `node` to the graph in the op table's form. Nodes written in an older opset's form are
// rewritten: attributes that later became inputs turn into constant inputs, and ops whose
// meaning changed become equivalent subgraphs (opset_adapter.cpp).
void adapt_node(ImportBuilder& builder, ImportedNode node, int64_t opset);

}  // namespace infer::detail
