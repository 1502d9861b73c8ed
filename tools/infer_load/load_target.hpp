#pragma once
// What infer-load sends its requests to: a KServe v2 server over HTTP, or the same served
// model (sessions and batcher) inside this process, without sockets or an HTTP library in the
// way. Run both on one machine and the difference is what HTTP costs.
#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <string>

namespace infer::load {

class LoadTarget {
public:
    virtual ~LoadTarget() = default;
    // The model's metadata document (GET /v2/models/{name}): its inputs and outputs.
    virtual nlohmann::json metadata() = 0;
    // The model's statistics (GET /v2/models/{name}/stats): batches formed, worker time.
    virtual nlohmann::json stats() = 0;
    // A connection for one client thread: sends a JSON request body, returns the HTTP status
    // (-1: no answer).
    using Connection = std::function<int(const std::string& body)>;
    virtual Connection connect() = 0;
};

// http://HOST:PORT, model `name`. Throws std::runtime_error for a malformed URL.
std::unique_ptr<LoadTarget> http_target(const std::string& url, const std::string& name);

}  // namespace infer::load
