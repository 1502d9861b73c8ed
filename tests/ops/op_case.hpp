#pragma once
// One op test case: a single-node graph, how to draw its inputs, and its float64 reference.
// The runner (runner.cpp) builds the graph once per backend and dtype, runs it twice with
// different random inputs and compares every output with the reference.
#include "reference.hpp"

#include <infer/infer.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ops {

using infer::DType;
using infer::Shape;
using ref::Dims;
using ref::RefTensor;

inline const std::vector<DType> kFloatTypes{DType::f32, DType::f16, DType::bf16, DType::f64};

enum class Fill {
    signed_values,  // uniform magnitude in [0.1, 2] * scale, random sign: never zero
    positive,       // uniform in [0.1, 2] * scale, for Log, Sqrt, variances, Pow bases
    integers,       // uniform integers in [lo, hi], zero allowed: indices, ties for comparisons
    boolean,
};

struct InputSpec {
    std::string name;
    Shape shape;
    std::optional<DType> dtype;  // empty: the dtype the case runs in
    Fill fill = Fill::signed_values;
    int64_t lo = 0, hi = 0;
    double scale = 1.0;
    double offset = 0.0;  // added after scaling: a large mean tests numerically stable kernels
    // A constant of the graph (drawn once per graph, the same in every run), as a model's
    // weights are: kernels that prepack their constant operands take that path.
    bool weight = false;
};

// Graph inputs (weights: constants) in the order of Case::inputs; the build function adds other
// constants and the node.
using BuildFn = std::function<std::vector<infer::Value>(
    infer::GraphBuilder&, const std::vector<infer::Value>& inputs, DType dtype)>;
// Reference outputs from the inputs as the graph saw them (already rounded to `dtype`).
using ReferenceFn =
    std::function<std::vector<RefTensor>(const std::vector<RefTensor>& inputs, DType dtype)>;

struct Case {
    std::string op;
    std::string label;
    std::vector<InputSpec> inputs;
    BuildFn build;
    ReferenceFn reference;
    std::vector<DType> dtypes = kFloatTypes;
    // Long dot products or sums: f32 kernels sum in another order than the reference, which
    // costs about K * eps * max|term| absolutely, more than the default 1e-6 near a cancelled sum.
    bool accumulates = false;
    // The CPU backend need not support it (extra integer variants); otherwise every dtype but
    // bf16 and f64 must be supported on the CPU.
    bool cpu_optional = false;
};

// ---- building blocks for the case tables
// `spec` in a dtype of its own, whatever the case runs in.
inline InputSpec typed(InputSpec spec, DType type) {
    spec.dtype = type;
    return spec;
}

inline InputSpec x(std::string name, Shape shape, double scale = 1.0) {
    return {std::move(name), std::move(shape), std::nullopt, Fill::signed_values, 0, 0, scale};
}
// A weight: a constant operand (see InputSpec::weight).
inline InputSpec weight(std::string name, Shape shape, double scale = 1.0) {
    InputSpec spec{std::move(name), std::move(shape), std::nullopt, Fill::signed_values, 0, 0, scale};
    spec.weight = true;
    return spec;
}
inline InputSpec positive(std::string name, Shape shape, double scale = 1.0) {
    return {std::move(name), std::move(shape), std::nullopt, Fill::positive, 0, 0, scale};
}
// Integer-valued data; `type` empty means the case's dtype (float ties for comparisons).
inline InputSpec integers(std::string name, Shape shape, int64_t lo, int64_t hi,
                          std::optional<DType> type = DType::i64) {
    return {std::move(name), std::move(shape), type, Fill::integers, lo, hi, 1.0};
}
inline InputSpec booleans(std::string name, Shape shape) {
    return {std::move(name), std::move(shape), DType::boolean, Fill::boolean, 0, 0, 1.0};
}

// One operand of the node: a graph input by position, an i64 constant, or an absent slot.
struct Operand {
    enum Kind { input, constant, absent } kind;
    int index = 0;
    Dims values;
};
inline Operand arg(int index) { return {Operand::input, index, {}}; }
inline Operand ints(Dims values) { return {Operand::constant, 0, std::move(values)}; }
inline Operand absent() { return {Operand::absent, 0, {}}; }

// A node of `op` over the operands (default: every graph input, in order).
BuildFn node(const std::string& op, infer::Attributes attributes = {},
             std::vector<Operand> operands = {}, size_t outputs = 1);

int64_t onnx_type(DType type);  // TensorProto element type, for Cast's "to"

// One function per cases_<family>[_<part>].cpp file.
std::vector<Case> math_arithmetic_cases();
std::vector<Case> math_cases();
std::vector<Case> indexing_movement_cases();
std::vector<Case> indexing_cases();
std::vector<Case> neural_layers_cases();
std::vector<Case> neural_cases();
std::vector<Case> control_cases();
std::vector<Case> sequence_cases();
std::vector<Case> fused_cases();
const std::vector<Case>& all_cases();

}  // namespace ops
