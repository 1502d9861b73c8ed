#pragma once
// A one-line progress display for long sweeps: redrawn in place on a terminal, silent when
// stderr is a file or a pipe (CI logs stay clean).
#include <chrono>
#include <string>

namespace infer::bench {

class Progress {
public:
    explicit Progress(size_t total);
    ~Progress();
    void step(const std::string& what);  // starting item `what`
    void finish();

private:
    size_t total_, done_ = 0;
    bool active_;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
};

}  // namespace infer::bench
