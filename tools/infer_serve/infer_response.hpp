#pragma once
// The answer to an inference request: a JSON document, or with the binary tensor data
// extension, a JSON header followed by the raw bytes of the outputs asked for in binary (in the
// order of "outputs"), the header's size given in Inference-Header-Content-Length.
#include "infer_request.hpp"

#include <infer/batch.hpp>
#include <infer/graph.hpp>

#include <optional>
#include <string>

namespace infer::serve {

struct EncodedResponse {
    std::string body;
    std::string content_type;
    std::optional<size_t> json_length;  // set when binary data follows the JSON header
};

// `outputs` holds every output of the model for the request's rows; the request says which
// to send and how. Outputs go in the order the request named them, else the model's order.
EncodedResponse encode_infer_response(const std::string& model_name, const InferRequest& request,
                                      const Batch& outputs, const std::vector<TensorInfo>& model_outputs);

// {"error": message}, the body of every refused request.
std::string error_body(const std::string& message);

}  // namespace infer::serve
