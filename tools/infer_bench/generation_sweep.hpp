#pragma once
// infer-bench --generate: the generation speed of a GPT-2 or T5 folder per device × precision ×
// batch: the prompt pass (prefill, with its first token) and the decode tokens per second
// (summed over the batch), medians of timed calls after a warm-up call, every sequence exactly
// new_tokens long; then one more call with a decode step profiled (device busy time, copies, the
// ops that took the time, the host's share of a step). Schema "infer-bench-generation/1".
#include <infer/device.hpp>
#include <infer/session.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace infer::bench {

struct GenerationSweepOptions {
    std::vector<std::pair<Device, Precision>> series;
    std::vector<int64_t> batches;
    int64_t prompt_tokens = 32;
    size_t new_tokens = 64;
    size_t runs = 5;
    int threads = 0;  // CPU threads, 0: all cores
};

// Measures every point; one that cannot run (too big for the device) is left out with a note.
nlohmann::json run_generation_sweep(const std::string& folder, const GenerationSweepOptions& options,
                                    const std::vector<std::string>& notes);

// The measurements as a table, each row followed by its profiled step.
std::string generation_table(const nlohmann::json& document);

}  // namespace infer::bench
