#include "http_server.hpp"

#include "infer_response.hpp"
#include "metadata.hpp"
#include "request_error.hpp"

#include <infer/batcher.hpp>
#include <infer/error.hpp>

#include <httplib.h>

#include <atomic>
#include <functional>
#include <map>

namespace infer::serve {

namespace {

// Paths with an optional /versions/{v} after the model name; only version 1 exists.
constexpr const char* kModel = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";

void send_json(httplib::Response& res, int status, const std::string& body) {
    res.status = status;
    res.set_content(body, "application/json");
}

// Runs a handler, answering every exception with its status and a JSON message.
void answer(httplib::Response& res, const std::function<void()>& handle) {
    try {
        handle();
    } catch (...) {
        const ErrorStatus error = status_of_current_exception();
        send_json(res, error.status, error_body(error.message));
    }
}

}  // namespace

struct HttpServer::Impl {
    httplib::Server server;
    std::map<std::string, ServedModel*> models;
    HttpOptions options;
    std::atomic<bool> stopping{false};

    ServedModel& model(const httplib::Request& req) const {
        const std::string name = req.matches[1];
        const auto it = models.find(name);
        if (it == models.end()) {
            std::string known;
            for (const auto& entry : models) known += (known.empty() ? "" : ", ") + entry.first;
            throw RequestError(404, "unknown model '" + name + "' (this server has " + known + ")");
        }
        if (req.matches[2].matched && req.matches[2] != "1")
            throw RequestError(404, "model '" + name + "' has no version '" + std::string(req.matches[2]) + "' (only 1)");
        return *it->second;
    }

    void infer(const httplib::Request& req, httplib::Response& res) const {
        ServedModel& served = model(req);
        std::optional<size_t> json_length;
        if (req.has_header("Inference-Header-Content-Length"))
            json_length = parse_json_length(req.get_header_value("Inference-Header-Content-Length"));
        const EncodedResponse response = served.answer(req.body, json_length);
        if (response.json_length) res.set_header("Inference-Header-Content-Length", std::to_string(*response.json_length));
        res.status = 200;
        res.set_content(response.body, response.content_type);
    }

    void routes() {
        server.Get("/v2/health/live", [](const httplib::Request&, httplib::Response& res) { send_json(res, 200, "{}"); });
        server.Get("/v2/health/ready", [this](const httplib::Request&, httplib::Response& res) {
            if (stopping) send_json(res, 503, error_body("shutting down"));
            else send_json(res, 200, "{}");
        });
        server.Get("/v2", [](const httplib::Request&, httplib::Response& res) {
            send_json(res, 200, server_metadata().dump());
        });
        server.Get(kModel, [this](const httplib::Request& req, httplib::Response& res) {
            answer(res, [&] {
                const ServedModel& served = model(req);
                send_json(res, 200, model_metadata(served.name(), served.graph(), served.devices()).dump());
            });
        });
        server.Get(std::string(kModel) + "/ready", [this](const httplib::Request& req, httplib::Response& res) {
            answer(res, [&] {
                model(req);
                if (stopping) throw RequestError(503, "shutting down");
                send_json(res, 200, "{}");
            });
        });
        server.Get(std::string(kModel) + "/stats", [this](const httplib::Request& req, httplib::Response& res) {
            answer(res, [&] { send_json(res, 200, model(req).stats().dump()); });
        });
        server.Post(std::string(kModel) + "/infer", [this](const httplib::Request& req, httplib::Response& res) {
            answer(res, [&] { infer(req, res); });
        });
        // What no route answered (404), and what httplib refused itself (413 beyond
        // max_body_bytes, 400 for a malformed request line), in the same JSON form.
        server.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
            if (!res.body.empty()) return;
            std::string message;
            if (res.status == 404) message = "no such endpoint: " + req.method + " " + req.path;
            else if (res.status == 413)
                message = "request body larger than the server's limit of " + std::to_string(options.max_body_bytes) +
                          " bytes (--max-body-bytes)";
            else message = "bad request (HTTP status " + std::to_string(res.status) + ")";
            res.set_content(error_body(message), "application/json");
        });
        server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
            std::string message = "internal error";
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                message = e.what();
            } catch (...) {
            }
            send_json(res, 500, error_body(message));
        });
    }
};

HttpServer::HttpServer(std::vector<ServedModel*> models, HttpOptions options) : impl_(std::make_unique<Impl>()) {
    for (ServedModel* model : models) impl_->models[model->name()] = model;
    impl_->options = options;
    const size_t threads = static_cast<size_t>(std::max(1, options.threads));
    impl_->server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    impl_->server.set_payload_max_length(options.max_body_bytes);
    // Clients keep their connection for many requests (tritonclient, load generators);
    // httplib's default of 5 requests per connection would make them reconnect all the time.
    impl_->server.set_keep_alive_max_count(1u << 20);
    // Answers leave at once: with Nagle's algorithm a response written in two parts (headers,
    // body) waits for the client's delayed ACK of the first, about 40 ms on Linux, which the
    // H200 load test showed as a 45 ms median at low load for a 2 ms inference.
    impl_->server.set_tcp_nodelay(true);
    impl_->routes();
}

HttpServer::~HttpServer() = default;

int HttpServer::bind() {
    const HttpOptions& o = impl_->options;
    const int port = o.port == 0 ? impl_->server.bind_to_any_port(o.host)
                                 : (impl_->server.bind_to_port(o.host, o.port) ? o.port : -1);
    if (port < 0)
        throw InvalidArgument("infer-serve: cannot listen on " + o.host + ":" + std::to_string(o.port) +
                              " (in use, or not an address of this machine)");
    return port;
}

void HttpServer::serve() { impl_->server.listen_after_bind(); }

void HttpServer::stop() {
    impl_->stopping = true;
    impl_->server.stop();
}

}  // namespace infer::serve
