#pragma once
// How much device memory a model needs at given input shapes, known before anything is
// allocated: weights (after precision lowering), the activation arena and graph outputs, and
// scratch (per-stream library workspaces plus the largest kernel scratch). Sessions check it
// before uploading weights to an accelerator and fail early with OutOfMemory carrying it.
#include <infer/device.hpp>
#include <infer/shape.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace infer {

class Graph;
struct SessionOptions;

struct MemoryEstimate {
    Device device;
    uint64_t weights_bytes = 0;
    uint64_t activations_bytes = 0;  // the arena of intermediates, inputs copied in, outputs
    uint64_t workspace_bytes = 0;
    uint64_t device_total_bytes = 0;
    uint64_t device_free_bytes = 0;  // when the estimate was made

    uint64_t total_bytes() const { return weights_bytes + activations_bytes + workspace_bytes; }
    bool fits() const { return total_bytes() <= device_free_bytes; }
    // "cuda:0: weights 127.3 MiB + activations 48.0 MiB + workspace 32.0 MiB = 207.3 MiB of
    // 140.1 GiB free (fits)"
    std::string to_string() const;
};

// The estimate for running `graph` with `options` on inputs of these shapes (by input name;
// every input must be given, with its dynamic dims filled in). Nothing is uploaded or run.
// Throws InvalidArgument for missing or mismatched shapes, and for graphs whose shapes depend on
// input values (their plan needs the values).
MemoryEstimate estimate_memory(const Graph& graph, const SessionOptions& options,
                               const std::map<std::string, Shape>& input_shapes);

}  // namespace infer
