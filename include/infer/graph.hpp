#pragma once
// A Graph is an immutable, validated model: named inputs and outputs, nodes and constants.
// Build one with GraphBuilder (below) or import one. `graph.run(batch, device)` is the one-line
// path: it compiles a Session for the device on first use, caches it, and runs it.
#include <infer/attributes.hpp>
#include <infer/batch.hpp>
#include <infer/device.hpp>
#include <infer/dtype.hpp>
#include <infer/shape.hpp>
#include <infer/tensor.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace infer {

namespace detail {
struct GraphIR;
struct GraphState;
}  // namespace detail

// What a graph input or output holds: a tensor, or a sequence of tensors (ONNX sequence
// type: a list whose length and element shapes may differ from run to run).
enum class ValueKind : uint8_t { tensor, sequence };

// A named graph input or output with its declared dtype and (possibly dynamic) shape. For a
// sequence, dtype is every element's and shape what the elements share (unknown dimensions
// kDynamic, rank 0 when unknown). An optional value (ONNX optional type) may be absent: an
// absent input is left out of the batch, an absent output is missing from the result.
struct TensorInfo {
    std::string name;
    DType dtype;
    Shape shape;
    ValueKind kind = ValueKind::tensor;
    bool optional = false;
};

class Graph {
public:
    // Loads an ONNX model; weights stored in external files are read from beside it. Or, given a
    // Hugging Face model folder (config.json and model.safetensors, or sharded checkpoints with
    // model.safetensors.index.json), builds the graph of its architecture from the checkpoint
    // (BERT, MiniLM, RoBERTa, DistilBERT, GPT-2; docs/models.md): inputs input_ids,
    // attention_mask (and token_type_ids), output last_hidden_state, logits for GPT-2's language
    // model, and sentence_embedding when the folder is a sentence-transformers model
    // (modules.json: its pooling and normalisation).
    // Throws ModelError for a malformed or inconsistent file, Unsupported for ops, element
    // types, opsets or architectures infer lacks; either names the file and the culprit.
    static Graph load(const std::string& path);
    // The same from bytes in memory; external weight files are looked up in `base_dir`.
    static Graph load_from_bytes(const void* data, size_t size, const std::string& name = "model",
                                 const std::string& base_dir = ".");

    // Writes the graph as an ONNX model (opset 20, weights inside the file), for other runtimes
    // to run the same graph: one built with GraphBuilder or from a checkpoint, for instance.
    // Throws Unsupported above ONNX's 2 GiB limit, InvalidArgument when the file cannot be written.
    void save_onnx(const std::string& path) const;

    const std::string& name() const;
    const std::vector<TensorInfo>& inputs() const;
    const std::vector<TensorInfo>& outputs() const;
    size_t node_count() const;
    std::map<std::string, size_t> op_histogram() const;  // op name → node count

    // Runs on `device` through a cached Session with default options. Thread-safe.
    Batch run(const Batch& inputs, const Device& device = Device::CPU) const;

    // For the library's own layers (sessions, importers); not needed by applications.
    explicit Graph(std::shared_ptr<const detail::GraphIR> ir);
    const detail::GraphIR& ir() const;

private:
    std::shared_ptr<detail::GraphState> state_;
};

// A handle to a tensor in a graph under construction. A default Value means "absent" and fills
// an optional input slot (e.g. Gemm without C).
struct Value {
    int id = -1;
    bool present() const { return id >= 0; }
};

class GraphBuilder {
public:
    explicit GraphBuilder(std::string name = "graph");
    ~GraphBuilder();
    GraphBuilder(GraphBuilder&&) noexcept;
    GraphBuilder& operator=(GraphBuilder&&) noexcept;

    // A graph input; dimensions may be kDynamic.
    Value input(const std::string& name, DType dtype, const Shape& shape);
    // A graph input holding a sequence of `dtype` tensors (ONNX sequence type), each of a shape
    // matching `element_shape`, or of any shape without one. Runs give it with Batch::set_sequence.
    Value sequence_input(const std::string& name, DType dtype, std::optional<Shape> element_shape = std::nullopt);
    // A graph input a run may leave out of its batch (ONNX optional type): a tensor, or a sequence
    // of tensors of `shape` with ValueKind::sequence.
    Value optional_input(const std::string& name, DType dtype, const Shape& shape, ValueKind kind = ValueKind::tensor);
    // A constant (weights); the tensor is copied to the CPU if it lives elsewhere.
    Value constant(const Tensor& value, const std::string& name = "");
    Value constant_i64(const std::vector<int64_t>& values);  // a 1-D i64 constant
    // Any op of the op table by its ONNX name. Throws ModelError for an unknown op or a wrong
    // number of inputs; types and shapes are checked by build().
    std::vector<Value> op(const std::string& op, const std::vector<Value>& inputs,
                          const Attributes& attributes = {}, size_t num_outputs = 1,
                          const std::string& node_name = "");
    Value op1(const std::string& op, const std::vector<Value>& inputs,
              const Attributes& attributes = {}, const std::string& node_name = "");
    void output(const std::string& name, Value value);
    // Validates (names, arity, dtypes, shapes, attributes) and freezes the graph.
    // Throws ModelError naming the first problem. The builder is empty afterwards.
    Graph build();

    // Shorthands for common ops (ONNX semantics).
    Value add(Value a, Value b) { return op1("Add", {a, b}); }
    Value sub(Value a, Value b) { return op1("Sub", {a, b}); }
    Value mul(Value a, Value b) { return op1("Mul", {a, b}); }
    Value div(Value a, Value b) { return op1("Div", {a, b}); }
    Value matmul(Value a, Value b) { return op1("MatMul", {a, b}); }
    Value gemm(Value a, Value b, Value c = {}, bool trans_a = false, bool trans_b = false);
    Value relu(Value x) { return op1("Relu", {x}); }
    Value sigmoid(Value x) { return op1("Sigmoid", {x}); }
    Value tanh(Value x) { return op1("Tanh", {x}); }
    Value gelu(Value x) { return op1("Gelu", {x}); }
    Value softmax(Value x, int64_t axis = -1);
    Value layer_norm(Value x, Value scale, Value bias, int64_t axis = -1, float epsilon = 1e-5f);
    Value reshape(Value x, const std::vector<int64_t>& shape);
    Value transpose(Value x, const std::vector<int64_t>& perm);
    Value cast(Value x, DType to);

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace infer
