#include "load_target.hpp"

#include <httplib.h>

#include <stdexcept>

namespace infer::load {

namespace {

nlohmann::json get_json(httplib::Client& client, const std::string& path) {
    const auto response = client.Get(path);
    if (!response || response->status != 200)
        throw std::runtime_error("GET " + path + " failed" + (response ? ": HTTP " + std::to_string(response->status) : ""));
    return nlohmann::json::parse(response->body);
}

class HttpTarget final : public LoadTarget {
public:
    HttpTarget(std::string host, int port, const std::string& name)
        : host_(std::move(host)), port_(port), client_(host_, port_), model_path_("/v2/models/" + name) {}

    nlohmann::json metadata() override { return get_json(client_, model_path_); }
    nlohmann::json stats() override { return get_json(client_, model_path_ + "/stats"); }

    Connection connect() override {
        auto client = std::make_shared<httplib::Client>(host_, port_);
        client->set_keep_alive(true);
        client->set_tcp_nodelay(true);  // as a real client should: no 40 ms Nagle wait per request
        client->set_read_timeout(120, 0);
        return [client, path = model_path_ + "/infer"](const std::string& body) {
            const auto response = client->Post(path, body, "application/json");
            return response ? response->status : -1;
        };
    }

private:
    std::string host_;
    int port_;
    httplib::Client client_;  // for metadata and statistics
    std::string model_path_;
};

}  // namespace

std::unique_ptr<LoadTarget> http_target(const std::string& url, const std::string& name) {
    const std::string prefix = "http://";
    if (url.rfind(prefix, 0) != 0 || url.find(':', prefix.size()) == std::string::npos)
        throw std::runtime_error("--url must be http://HOST:PORT, not '" + url + "'");
    const std::string authority = url.substr(prefix.size());
    return std::make_unique<HttpTarget>(authority.substr(0, authority.find(':')),
                                        std::stoi(authority.substr(authority.find(':') + 1)), name);
}

}  // namespace infer::load
