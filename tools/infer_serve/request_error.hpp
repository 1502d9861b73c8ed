#pragma once
// A request the server refuses, with the HTTP status that says why (400 malformed or wrong
// tensors, 404 unknown model, 413 too large, 503 overloaded, 504 past its deadline). The
// protocol layer throws it; the HTTP layer turns it into that status and {"error": message}.
#include <infer/error.hpp>

#include <string>

namespace infer::serve {

class RequestError : public Error {
public:
    RequestError(int status, const std::string& message) : Error(message), status_(status) {}
    int status() const { return status_; }

private:
    int status_;
};

}  // namespace infer::serve
