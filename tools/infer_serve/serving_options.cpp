#include "serving_options.hpp"

#include <infer/error.hpp>

#include <charconv>
#include <cstdlib>
#include <sstream>

namespace fs = std::filesystem;

namespace infer::serve {

namespace {

// The source tree's model cache (tools are built in build/bin/), or $INFER_MODEL_CACHE.
fs::path model_cache() {
    if (const char* env = std::getenv("INFER_MODEL_CACHE"); env && *env) return env;
    std::error_code ec;
    const fs::path program = fs::canonical("/proc/self/exe", ec);
    return (program.parent_path() / ".." / ".." / ".cache" / "models").lexically_normal();
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream stream(text);
    for (std::string item; std::getline(stream, item, ',');)
        if (!item.empty()) items.push_back(item);
    return items;
}

// A positive count from the list of `option` (--length-buckets, --batch-sizes).
int64_t parse_count(const std::string& option, const std::string& text) {
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 1)
        throw InvalidArgument(option + ": '" + text + "' is not a positive whole number");
    return value;
}

}  // namespace

void ServingArguments::add_to(CLI::App& app) {
    app.add_option("--device", devices, "cpu, cuda, cuda:1, or a list such as cpu,cuda (routed per batch)")
        ->capture_default_str();
    app.add_option("--max-batch", max_batch, "items per batch (1: no batching)")->capture_default_str();
    app.add_option("--max-delay-ms", max_delay_ms, "how long the oldest item waits for others")->capture_default_str();
    app.add_flag("--always-wait", always_wait,
                 "wait --max-delay-ms for company even when no batch is running (default: start at once then)");
    app.add_option("--queue", queue, "items waiting at most; beyond, requests get 503")->capture_default_str();
    app.add_option("--precision", precision, "f32, f16, bf16 or int8 (CPU)")->capture_default_str();
    app.add_option("--threads", threads, "CPU threads per session (0: all cores)")->capture_default_str();
    app.add_option("--workers", workers, "batches running at once (0: one per device)")->capture_default_str();
    app.add_flag("--no-graph-capture", no_graph_capture, "run CUDA plans node by node instead of as captured CUDA graphs");
    app.add_flag("--no-warm-up", no_warm_up, "serve at once, without first running every batch shape on the GPU");
    app.add_option("--length-buckets", length_buckets,
                   "sequence lengths to pad to, e.g. 16,32,64,128, or none (default for token models: 16..512)");
    app.add_option("--batch-sizes", batch_sizes,
                   "batch sizes to fill batches up to, e.g. 1,4,16,32, or none (default: powers of two to --max-batch)");
}

ModelOptions ServingArguments::model_options() const {
    ModelOptions options;
    options.devices.clear();
    for (const std::string& device : split_list(devices)) options.devices.push_back(Device::parse(device));
    if (options.devices.empty()) throw InvalidArgument("--device: no device in '" + devices + "'");
    options.precision = parse_precision(precision);
    options.threads = threads;
    options.graph_capture = !no_graph_capture;
    options.warm_up = !no_warm_up;
    options.batcher.max_batch = max_batch;
    options.batcher.max_delay = std::chrono::microseconds(static_cast<int64_t>(max_delay_ms * 1000));
    options.batcher.start_when_idle = !always_wait;
    options.batcher.max_queue = queue;
    options.batcher.workers = workers > 0 ? workers : static_cast<int>(options.devices.size());
    if (length_buckets == "none") options.length_buckets_from_model = false;
    else
        for (const std::string& bucket : split_list(length_buckets))
            options.batcher.length_buckets.push_back(parse_count("--length-buckets", bucket));
    if (batch_sizes == "none") options.batch_sizes_from_model = false;
    else
        for (const std::string& size : split_list(batch_sizes))
            options.batcher.batch_sizes.push_back(parse_count("--batch-sizes", size));
    return options;
}

std::pair<std::string, fs::path> resolve_model(const std::string& argument) {
    fs::path path(argument);
    if (!fs::exists(path) && fs::exists(model_cache() / argument)) path = model_cache() / argument;
    if (fs::is_directory(path) && fs::exists(path / "model.onnx")) path /= "model.onnx";
    if (!fs::exists(path))
        throw InvalidArgument("no model '" + argument + "': not a file, a folder, or a model in " +
                              model_cache().string() + " (prepare one with scripts/models/prepare.sh " + argument + ")");
    fs::path normal = fs::absolute(path).lexically_normal();
    if (!normal.has_filename()) normal = normal.parent_path();  // "folder/" names "folder"
    const bool folder = fs::is_directory(normal);
    std::string name = folder ? normal.filename().string() : normal.stem().string();
    if (!folder && name == "model") name = normal.parent_path().filename().string();
    return {name, normal};
}

}  // namespace infer::serve
