#pragma once
// The graph IR: values (tensors) named by index, nodes in topological order, constants.
// It is built by GraphBuilder or an importer, validated once, and never changed afterwards;
// sessions read it to make plans.
#include <infer/attributes.hpp>
#include <infer/graph.hpp>
#include <infer/tensor.hpp>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace infer::detail {

// A dtype and a shape that may be unknown (rank unknown) or partly dynamic (kDynamic dims).
// For a sequence, the element dtype and the shape every element has (unknown when they
// differ); how many elements, and each one's shape, plans know (planner/sequence_values.hpp).
// An optional value may hold nothing; plans know whether it does.
struct TensorType {
    DType dtype = DType::f32;
    std::optional<Shape> shape;
    ValueKind kind = ValueKind::tensor;
    bool optional = false;
    bool is_plain_tensor() const { return kind == ValueKind::tensor && !optional; }
};

struct ValueIR {
    std::string name;
    TensorType type;  // filled by validation (shape inference)
};

// The interned id of an op: its index in the op table (ops/op_schema.hpp). Strings stay at the
// ONNX boundary and in messages; passes and the planner compare ids.
using OpId = uint16_t;
constexpr OpId kUnknownOp = 0xffff;

struct NodeIR {
    std::string op;                 // name in the op table
    std::string name;               // unique within the graph
    std::vector<int> inputs;        // value ids; -1 marks an absent optional input
    std::vector<int> outputs;       // value ids
    Attributes attributes;
    OpId id = kUnknownOp;           // the op table's id for `op`, set by validate()
};

struct GraphIR {
    std::string name;
    std::vector<ValueIR> values;
    std::vector<NodeIR> nodes;            // topologically sorted
    std::vector<int> inputs;              // value ids of graph inputs
    std::vector<int> outputs;             // value ids of graph outputs
    std::vector<std::string> output_names;  // names callers see (may differ from value names)
    std::unordered_map<int, Tensor> constants;  // value id → host tensor
    std::vector<TensorInfo> input_infos, output_infos;
};

// Checks structure (unique names, ids in range, each value produced once, topological order,
// op arity) and runs shape inference, filling every value's type and the infos.
// Throws ModelError naming the graph and the first problem found.
void validate(GraphIR& graph);

}  // namespace infer::detail
