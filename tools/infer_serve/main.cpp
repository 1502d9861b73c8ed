// infer-serve: serves models over HTTP/REST with the KServe v2 / Open Inference Protocol, every
// request going through a dynamic batcher. An example of embedding infer in a service, and a
// way for clients that already speak the protocol (tritonclient, KServe) to use it as it is.
//   infer-serve all-MiniLM-L6-v2 --port 8000 --device cpu,cuda --max-batch 32
#include "http_server.hpp"
#include "served_model.hpp"

#include <infer/infer.hpp>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace infer;

namespace {

// The source tree's model cache (tools are built in build/bin/), or $INFER_MODEL_CACHE.
fs::path model_cache() {
    if (const char* env = std::getenv("INFER_MODEL_CACHE"); env && *env) return env;
    std::error_code ec;
    const fs::path program = fs::canonical("/proc/self/exe", ec);
    return (program.parent_path() / ".." / ".." / ".cache" / "models").lexically_normal();
}

// A model argument: an .onnx file, a folder holding model.onnx or a Hugging Face checkpoint,
// or the name of a model prepared by scripts/models/prepare.sh. Its name is the file's stem,
// or the folder's name when the file is called model.onnx.
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

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream stream(text);
    for (std::string item; std::getline(stream, item, ',');)
        if (!item.empty()) items.push_back(item);
    return items;
}

// A signal may land on any thread, OpenBLAS's own among them (started before main, so a signal
// mask set here would not cover them): the handler only writes the signal's number to a pipe,
// which is safe in a handler, and a thread of ours stops the server.
int signal_pipe[2] = {-1, -1};

void on_signal(int signal_number) {
    const char byte = static_cast<char>(signal_number);
    [[maybe_unused]] const ssize_t written = write(signal_pipe[1], &byte, 1);
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

int main(int argc, char** argv) {
    CLI::App app{"infer-serve: KServe v2 / Open Inference Protocol over HTTP, with dynamic batching"};
    std::vector<std::string> model_arguments, named;
    std::string devices_text = "cpu", precision_text = "f32", buckets_text, batch_sizes_text;
    serve::HttpOptions http;
    int64_t max_batch = 32;
    double max_delay_ms = 2;
    size_t queue = 4096;
    int threads = 0, workers = 0;
    app.add_option("models", model_arguments, ".onnx files, model folders or prepared model names");
    app.add_option("--name", named, "NAME=PATH: serve PATH under NAME (repeatable)");
    app.add_option("--host", http.host, "address to listen on")->capture_default_str();
    app.add_option("--port", http.port, "port (0: any free one, printed at start)")->capture_default_str();
    app.add_option("--device", devices_text, "cpu, cuda, cuda:1, or a list such as cpu,cuda (routed per batch)")
        ->capture_default_str();
    app.add_option("--max-batch", max_batch, "items per batch (1: no batching)")->capture_default_str();
    app.add_option("--max-delay-ms", max_delay_ms, "how long the oldest item waits for others")->capture_default_str();
    app.add_option("--queue", queue, "items waiting at most; beyond, requests get 503")->capture_default_str();
    app.add_option("--precision", precision_text, "f32, f16, bf16 or int8 (CPU)")->capture_default_str();
    app.add_option("--threads", threads, "CPU threads per session (0: all cores)")->capture_default_str();
    app.add_option("--workers", workers, "batches running at once (0: one per device)")->capture_default_str();
    app.add_option("--length-buckets", buckets_text,
                   "sequence lengths to pad to, e.g. 16,32,64,128, or none (default for token models: 16..512)");
    app.add_option("--batch-sizes", batch_sizes_text,
                   "batch sizes to fill batches up to, e.g. 1,4,16,32, or none (default: powers of two to --max-batch)");
    app.add_option("--max-body-bytes", http.max_body_bytes, "larger request bodies get 413")->capture_default_str();
    app.add_option("--http-threads", http.threads, "connections served at once")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    try {
        serve::ModelOptions options;
        options.devices.clear();
        for (const std::string& device : split_list(devices_text)) options.devices.push_back(Device::parse(device));
        if (options.devices.empty()) throw InvalidArgument("--device: no device in '" + devices_text + "'");
        options.precision = parse_precision(precision_text);
        options.threads = threads;
        options.batcher.max_batch = max_batch;
        options.batcher.max_delay = std::chrono::microseconds(static_cast<int64_t>(max_delay_ms * 1000));
        options.batcher.max_queue = queue;
        options.batcher.workers = workers > 0 ? workers : static_cast<int>(options.devices.size());
        if (buckets_text == "none") options.length_buckets_from_model = false;
        else
            for (const std::string& bucket : split_list(buckets_text)) options.batcher.length_buckets.push_back(parse_count("--length-buckets", bucket));
        if (batch_sizes_text == "none") options.batch_sizes_from_model = false;
        else
            for (const std::string& size : split_list(batch_sizes_text)) options.batcher.batch_sizes.push_back(parse_count("--batch-sizes", size));

        std::vector<std::pair<std::string, fs::path>> sources;
        for (const std::string& argument : model_arguments) sources.push_back(resolve_model(argument));
        for (const std::string& entry : named) {
            const size_t equals = entry.find('=');
            if (equals == std::string::npos || equals == 0)
                throw InvalidArgument("--name '" + entry + "' is not NAME=PATH");
            sources.emplace_back(entry.substr(0, equals), resolve_model(entry.substr(equals + 1)).second);
        }
        if (sources.empty()) throw InvalidArgument("no model to serve: give MODEL or --name NAME=PATH");

        std::vector<std::unique_ptr<serve::ServedModel>> models;
        std::vector<serve::ServedModel*> served;
        for (const auto& [name, path] : sources) {
            for (const serve::ServedModel* other : served)
                if (other->name() == name) throw InvalidArgument("two models named '" + name + "'; rename one with --name");
            models.push_back(std::make_unique<serve::ServedModel>(name, Graph::load(path.string()), options));
            served.push_back(models.back().get());
            std::cout << "infer-serve: model '" << name << "' from " << path.string() << " on " << devices_text << "\n";
        }

        serve::HttpServer server(served, http);
        const int port = server.bind();
        if (pipe(signal_pipe) != 0) throw InvalidArgument("infer-serve: cannot make a pipe for signals");
        struct sigaction action {};
        action.sa_handler = on_signal;
        sigaction(SIGINT, &action, nullptr);
        sigaction(SIGTERM, &action, nullptr);
        std::thread([&server] {
            char received = 0;
            while (read(signal_pipe[0], &received, 1) < 0 && errno == EINTR) {
            }
            std::cout << "infer-serve: " << (received == SIGINT ? "SIGINT" : "SIGTERM")
                      << ", finishing the requests in flight" << std::endl;
            server.stop();
        }).detach();
        std::cout << "infer-serve: listening on http://" << http.host << ":" << port << std::endl;
        server.serve();
        // No connection is open any more; answer what the batchers still hold, then leave.
        for (auto& model : models) model->shutdown();
        for (const auto& model : models) std::cout << "infer-serve: '" << model->name() << "' " << model->stats().dump() << "\n";
        std::cout << "infer-serve: stopped" << std::endl;
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "infer-serve: " << e.what() << "\n";
        return 1;
    }
}
