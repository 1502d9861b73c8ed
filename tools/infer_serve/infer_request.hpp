#pragma once
// An inference request of the KServe v2 / Open Inference Protocol, parsed and checked against
// the model before anything runs: JSON tensors ("data", flat or nested, row-major) and the
// binary tensor data extension (the JSON header is the first Inference-Header-Content-Length
// bytes of the body, and each input with parameters.binary_data_size takes that many bytes of
// what follows, in the order of "inputs").
#include <infer/batch.hpp>
#include <infer/graph.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace infer::serve {

struct RequestedOutput {
    std::string name;
    bool binary = false;  // parameters.binary_data: raw bytes after the JSON header
};

struct InferRequest {
    std::string id;  // echoed in the response when given
    // The model's inputs in its declared order, each with its batch axis (shape[0] = rows).
    Batch inputs;
    int64_t rows = 0;
    // Outputs the client asked for; empty: every output of the model.
    std::vector<RequestedOutput> outputs;
    bool binary_data_output = false;  // parameters.binary_data_output: every output as bytes
    // parameters.timeout (microseconds, as tritonclient sends it): the request fails with 504
    // when it has not run by then.
    std::optional<std::chrono::microseconds> timeout;
    int priority = 0;  // parameters.priority: higher runs first
};

// The value of the Inference-Header-Content-Length header; throws RequestError (400) when it
// is not a non-negative integer.
size_t parse_json_length(std::string_view header_value);

// Parses a request body; `json_length` is the Inference-Header-Content-Length (absent: the
// whole body is JSON). Throws RequestError (400) naming what is wrong: malformed JSON, an
// unknown, missing or repeated input, a datatype or shape the model does not take, a data
// count that does not match the shape, binary sizes that do not add up, an unknown output.
InferRequest parse_infer_request(std::string_view body, std::optional<size_t> json_length,
                                 const std::vector<TensorInfo>& model_inputs,
                                 const std::vector<TensorInfo>& model_outputs);

}  // namespace infer::serve
