#pragma once
// Shared by the control-flow kernels (If, Loop, Scan, SequenceMap): a subgraph run on the CPU as a nested
// plan, made once per distinct signature of its inputs and kept for the kernel's lifetime.
#include "core/planner/plan.hpp"

#include <infer/backend.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace infer::cpu {

class SubgraphRunner {
public:
    // `graph` lives in the node's attributes, which outlive the kernel (the plan keeps its
    // graph alive).
    SubgraphRunner(const detail::GraphIR& graph, std::string node, int threads);

    // Runs the subgraph with `inputs` (its own, then the implicit ones) and returns its
    // outputs, fresh tensors. Safe to call from concurrent runs.
    std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;

private:
    std::shared_ptr<const detail::Plan> plan_for(const std::vector<Tensor>& inputs) const;

    const detail::GraphIR& graph_;
    std::string node_;
    SessionOptions options_;
    mutable std::mutex mutex_;
    mutable std::map<std::string, std::shared_ptr<const detail::Plan>> plans_;
    mutable detail::WeightCache weights_;
};

// Copies `from` into `to` (both on the CPU), which must have its shape: a subgraph output
// whose shape differs from the one the plan inferred for the node is the model's error.
void copy_result(const KernelContext& ctx, const Tensor& from, Tensor& to, const std::string& what);

// Registration functions of the family's files; control_family.cpp calls them.
void register_control_if_kernels(KernelRegistry& registry);
void register_control_loop_kernels(KernelRegistry& registry);
void register_control_scan_kernels(KernelRegistry& registry);
void register_control_sequence_map_kernels(KernelRegistry& registry);

}  // namespace infer::cpu
