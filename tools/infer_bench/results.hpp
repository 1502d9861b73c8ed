#pragma once
// The results of a sweep as infer-bench's JSON document (schema "infer-bench/1", described in
// docs/benchmarking.md) and as a table on the terminal.
#include "sweep.hpp"

#include <infer/advice.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace infer::bench {

struct ModelInfo {
    std::string name;
    std::string path;
    int64_t sequence = 0;
    int64_t vocabulary = 0;  // token ids were drawn below it (0: unknown; see inputs.hpp)
};

// The machine: CPU model and cores, and every GPU present (name, driver, memory, capability).
nlohmann::json machine_json();

DeviceAdvisor advisor_for(const std::vector<Record>& records);

nlohmann::json results_json(const Graph& graph, const ModelInfo& model, const SweepOptions& options,
                            const std::vector<Record>& records, const std::vector<std::string>& notes);

// The table of measurements, then the crossover and the recommendation.
std::string results_table(const nlohmann::json& document);

}  // namespace infer::bench
