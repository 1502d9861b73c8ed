#pragma once
// The exceptions infer throws. Every message names what was wrong: the model, node, tensor,
// shape, dtype or device involved, so a caller can log it and carry on with the same session.
#include <stdexcept>
#include <string>

namespace infer {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A caller passed something wrong: an unknown input name, a missing input, a bad shape or dtype.
class InvalidArgument : public Error {
public:
    using Error::Error;
};

// A model (built or imported) is malformed: dangling names, cycles, bad attributes, bad files.
class ModelError : public Error {
public:
    using Error::Error;
};

// Well-formed, but not something infer (or the chosen backend) can do yet.
class Unsupported : public Error {
public:
    using Error::Error;
};

// A device could not provide the memory a request needs.
class OutOfMemory : public Error {
public:
    using Error::Error;
};

// A device is unknown, absent, not built in, or one of its calls failed.
class DeviceError : public Error {
public:
    using Error::Error;
};

// A queue is full (the batcher's, or a session's asynchronous runs), or it is shutting down:
// the request was not accepted. Retry later.
class Overloaded : public Error {
public:
    using Error::Error;
};

// The request was cancelled, or its deadline passed, before it ran.
class Cancelled : public Error {
public:
    using Error::Error;
};

}  // namespace infer
