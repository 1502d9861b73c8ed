#pragma once
// Runs one case on one device in one dtype and compares with the reference; collects the
// pass/fail/unsupported tally that the program prints at the end.
#include "op_case.hpp"

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace ops {

struct Outcome {
    enum Kind { passed, failed, unsupported } kind = passed;
    std::string detail;  // why it failed or is unsupported
};

// Builds the case's graph with `dtype`, compiles a strict Session for `device`, runs it twice
// with different random inputs (the second run catches elements a kernel leaves unwritten,
// since buffers are reused) and compares every output with the reference; then once more
// with the first dimension of the first input declared dynamic.
Outcome run_case(const Case& c, const infer::Device& device, DType dtype);

class Summary {
public:
    void record(const std::string& backend, DType dtype, const Case& c, const Outcome& outcome);
    // Per op: passed/failed/unsupported for each backend/dtype column, a total row, then the
    // first reason for each unsupported op and every failure.
    void print(std::ostream& out) const;

private:
    struct Counts {
        int passed = 0, failed = 0, unsupported = 0;
        std::string first_unsupported;
    };
    std::vector<std::string> columns_, ops_;
    std::map<std::pair<std::string, std::string>, Counts> counts_;  // (op, column)
    std::vector<std::string> failures_;
};

}  // namespace ops
