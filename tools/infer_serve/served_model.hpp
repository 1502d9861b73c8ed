#pragma once
// A model as the server holds it: a session per device, one Batcher over them, and the rule
// that turns a protocol request into batcher items. A request of N rows becomes N items, each
// batched with whatever else is waiting (rather than run as a batch of its own), so that a
// client sending rows one by one and a client sending them in blocks share the same batches;
// the rows' answers are stacked back in order.
#include "infer_request.hpp"
#include "infer_response.hpp"

#include <infer/batcher.hpp>
#include <infer/graph.hpp>
#include <infer/session.hpp>

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace infer::serve {

struct ModelOptions {
    std::vector<Device> devices{Device::CPU};
    Precision precision = Precision::f32;
    int threads = 0;  // CPU threads per session; 0: all cores
    bool graph_capture = true;  // SessionOptions::graph_capture (CUDA graphs)
    // length_buckets and trim_outputs, when left empty, come from the model: for a token model
    // (every input [batch, sequence] of integers, the sequence dynamic) sequences are padded to
    // 16, 32, 64, ... 512 and outputs whose axis 1 is dynamic are cut back to each row's length.
    BatcherOptions batcher;
    bool length_buckets_from_model = true;  // false: pad to the longest item of a batch
    // batcher.batch_sizes, when left empty: powers of two up to max_batch (false: exact sizes).
    bool batch_sizes_from_model = true;
    // For a token model on a GPU: run every batch shape the batcher will form (batch sizes x
    // length buckets) before serving, so that no request pays for planning, the first
    // node-by-node run and the CUDA graph capture of its shape (about 100 ms each for MiniLM
    // on an H200, 36 shapes).
    bool warm_up = true;
};

class ServedModel {
public:
    // Compiles a session per device. Throws Unsupported when an input or output has no dynamic
    // batch axis (axis 0), which the batcher needs; DeviceError for an absent device.
    ServedModel(std::string name, Graph graph, ModelOptions options);
    ~ServedModel();

    const std::string& name() const { return name_; }
    const Graph& graph() const { return graph_; }
    const std::vector<std::string>& devices() const { return devices_; }

    // Runs the request's rows through the batcher and returns every output of the model for
    // them, stacked. Throws what the batcher throws: Overloaded (queue full), Cancelled (its
    // deadline passed), or the error of the batch a row ran in.
    Batch infer(const InferRequest& request);
    // A request body in, the response body out: parse (throws RequestError), infer, encode.
    EncodedResponse answer(std::string_view body, std::optional<size_t> json_length);

    // The batcher's counters, batch-size histogram and latency percentiles.
    nlohmann::json stats() const;

    // Stops accepting rows and finishes every accepted one.
    void shutdown();

private:
    void warm_up(const BatcherOptions& batcher);

    std::string name_;
    Graph graph_;
    std::vector<std::string> devices_;
    std::vector<std::unique_ptr<Session>> sessions_;
    std::unique_ptr<Batcher> batcher_;
};

}  // namespace infer::serve
