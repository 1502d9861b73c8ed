// infer-serve: serves models over HTTP/REST with the KServe v2 / Open Inference Protocol, every
// request going through a dynamic batcher. An example of embedding infer in a service, and a
// way for clients that already speak the protocol (tritonclient, KServe) to use it as it is.
//   infer-serve all-MiniLM-L6-v2 --port 8000 --device cpu,cuda --max-batch 32
#include "http_server.hpp"
#include "served_model.hpp"
#include "serving_options.hpp"

#include <infer/infer.hpp>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace infer;

namespace {

// A signal may land on any thread, OpenBLAS's own among them (started before main, so a signal
// mask set here would not cover them): the handler only writes the signal's number to a pipe,
// which is safe in a handler, and a thread of ours stops the server.
int signal_pipe[2] = {-1, -1};

void on_signal(int signal_number) {
    const char byte = static_cast<char>(signal_number);
    [[maybe_unused]] const ssize_t written = write(signal_pipe[1], &byte, 1);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"infer-serve: KServe v2 / Open Inference Protocol over HTTP, with dynamic batching"};
    std::vector<std::string> model_arguments, named;
    serve::ServingArguments serving;
    serve::HttpOptions http;
    app.add_option("models", model_arguments, ".onnx files, model folders or prepared model names");
    app.add_option("--name", named, "NAME=PATH: serve PATH under NAME (repeatable)");
    app.add_option("--host", http.host, "address to listen on")->capture_default_str();
    app.add_option("--port", http.port, "port (0: any free one, printed at start)")->capture_default_str();
    serving.add_to(app);
    app.add_option("--max-body-bytes", http.max_body_bytes, "larger request bodies get 413")->capture_default_str();
    app.add_option("--http-threads", http.threads, "connections served at once")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    try {
        const serve::ModelOptions options = serving.model_options();

        std::vector<std::pair<std::string, fs::path>> sources;
        for (const std::string& argument : model_arguments) sources.push_back(serve::resolve_model(argument));
        for (const std::string& entry : named) {
            const size_t equals = entry.find('=');
            if (equals == std::string::npos || equals == 0)
                throw InvalidArgument("--name '" + entry + "' is not NAME=PATH");
            sources.emplace_back(entry.substr(0, equals), serve::resolve_model(entry.substr(equals + 1)).second);
        }
        if (sources.empty()) throw InvalidArgument("no model to serve: give MODEL or --name NAME=PATH");

        std::vector<std::unique_ptr<serve::ServedModel>> models;
        std::vector<serve::ServedModel*> served;
        for (const auto& [name, path] : sources) {
            for (const serve::ServedModel* other : served)
                if (other->name() == name) throw InvalidArgument("two models named '" + name + "'; rename one with --name");
            models.push_back(std::make_unique<serve::ServedModel>(name, Graph::load(path.string()), options));
            served.push_back(models.back().get());
            std::cout << "infer-serve: model '" << name << "' from " << path.string() << " on " << serving.devices << "\n";
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
