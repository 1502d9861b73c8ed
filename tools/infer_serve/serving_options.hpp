#pragma once
// The command-line options that say how a model is served (devices, precision, batching), and
// how a model argument is found: shared by infer-serve and by infer-load's in-process mode,
// which serves the model the same way without HTTP.
#include "served_model.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>
#include <utility>

namespace infer::serve {

struct ServingArguments {
    std::string devices = "cpu", precision = "f32", length_buckets, batch_sizes;
    int64_t max_batch = 32;
    double max_delay_ms = 2;
    size_t queue = 4096;
    int threads = 0, workers = 0;
    bool no_graph_capture = false, no_warm_up = false;
    bool always_wait = false;  // BatcherOptions::start_when_idle off

    // --device, --max-batch, --max-delay-ms, --always-wait, --queue, --precision, --threads, --workers,
    // --length-buckets, --batch-sizes, --no-graph-capture, --no-warm-up.
    void add_to(CLI::App& app);
    // Throws InvalidArgument naming the option that is wrong.
    ModelOptions model_options() const;
};

// A model argument: an .onnx file, a folder holding model.onnx or a Hugging Face checkpoint,
// or the name of a model prepared by scripts/models/prepare.sh (in the source tree's model
// cache, or $INFER_MODEL_CACHE). Its name is the file's stem, or the folder's name when the
// file is called model.onnx. Throws InvalidArgument when there is no such model.
std::pair<std::string, std::filesystem::path> resolve_model(const std::string& argument);

}  // namespace infer::serve
