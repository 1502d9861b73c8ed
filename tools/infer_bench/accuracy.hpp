#pragma once
// What a lowered precision (f16, bf16, int8) costs in accuracy: a point's outputs against the
// CPU's f32 outputs on the same inputs, as the worst over the graph's float outputs.
#include <infer/batch.hpp>

#include <optional>

namespace infer::bench {

struct Accuracy {
    double relative_error = 0;  // max |got - f32| / max |f32|
    double least_cosine = 1;    // the least cosine between rows (last axis) of got and f32
    // The share of rows whose argmax (over the last axis, the classes or the vocabulary)
    // agrees with f32's; for outputs of one value per row there is none.
    std::optional<double> argmax_agreement;
};

// `outputs` against `reference`, output by output (same names, shapes); only f32 outputs count.
Accuracy compare_outputs(const Batch& outputs, const Batch& reference);

}  // namespace infer::bench
