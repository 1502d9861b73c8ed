#include "progress.hpp"

#include <cstdio>
#include <unistd.h>

namespace infer::bench {

Progress::Progress(size_t total) : total_(total), active_(isatty(fileno(stderr)) != 0) {}

Progress::~Progress() { finish(); }

void Progress::step(const std::string& what) {
    ++done_;
    if (!active_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    // \r and "erase to end of line" redraw the same line.
    std::fprintf(stderr, "\r\033[K[%zu/%zu %4.0f s] %s", done_, total_, elapsed, what.c_str());
    std::fflush(stderr);
}

void Progress::finish() {
    if (!active_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    active_ = false;
}

}  // namespace infer::bench
