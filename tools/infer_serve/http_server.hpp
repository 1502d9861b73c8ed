#pragma once
// The HTTP/REST binding of the protocol, on cpp-httplib: routes, status codes and headers.
// Everything about tensors and JSON lives in the protocol files; this file only moves bytes
// and turns exceptions into answers (RequestError: its status; Overloaded: 503; Cancelled,
// i.e. past its timeout: 504; InvalidArgument: 400; any other error: 500), each with a JSON
// {"error": ...} body, so that no request can bring the server down.
#include "served_model.hpp"

#include <memory>
#include <string>
#include <vector>

namespace infer::serve {

struct HttpOptions {
    std::string host = "0.0.0.0";
    int port = 8000;                        // 0: any free port (see bind())
    size_t max_body_bytes = 64 << 20;       // larger bodies are refused with 413
    // Connections served at the same time. A kept-alive connection holds a thread while it
    // waits for its answer, so this bounds the clients in flight, not the batch size.
    int threads = 64;
};

class HttpServer {
public:
    // The models must outlive the server.
    HttpServer(std::vector<ServedModel*> models, HttpOptions options);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    // Binds the listening socket; returns the port (the chosen one when options.port is 0).
    // Throws InvalidArgument when it cannot bind.
    int bind();
    // Serves until stop(); requests in flight are answered before it returns.
    void serve();
    // From any thread: stop accepting connections. /v2/health/ready answers 503 from here on.
    void stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace infer::serve
