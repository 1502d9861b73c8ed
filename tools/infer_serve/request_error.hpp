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

// The HTTP status and message for the exception being handled (call it in a catch block):
// RequestError's own status, 503 for Overloaded, 504 for Cancelled, 400 for InvalidArgument,
// 500 for anything else. The server and the in-process load generator answer alike with it.
struct ErrorStatus {
    int status;
    std::string message;
};
ErrorStatus status_of_current_exception();

}  // namespace infer::serve
