// Nested plans for the control-flow kernels. A subgraph is typed from the tensors it gets
// (shapes_control.hpp), planned for the CPU like any graph, and run by an execution context of
// its own per call, so concurrent runs of the enclosing plan do not share arenas.
#include "backends/cpu/kernels/control_subgraph.hpp"

#include "backends/cpu/kernels/kernel_util.hpp"
#include "core/executor/executor.hpp"
#include "core/ops/shapes_control.hpp"

#include <cstring>

namespace infer::cpu {

namespace {
constexpr size_t kMaxPlans = 64;
}  // namespace

SubgraphRunner::SubgraphRunner(const detail::GraphIR& graph, std::string node, int threads)
    : graph_(graph), node_(std::move(node)) {
    options_.device = Device::CPU;
    options_.threads = threads;
}

std::shared_ptr<const detail::Plan> SubgraphRunner::plan_for(const std::vector<Tensor>& inputs) const {
    detail::InputSignature signature;
    std::vector<detail::TensorType> types;
    for (const Tensor& t : inputs) {
        signature.dtypes.push_back(t.dtype());
        signature.shapes.push_back(t.shape());
        signature.devices.push_back(Device::CPU);
        types.push_back({t.dtype(), t.shape()});
    }
    std::lock_guard lock(mutex_);
    const std::string types_key = signature.key();
    // Inputs whose values decide shapes (a trip count, a target shape) are part of the key.
    auto typed = plans_.find(types_key);
    std::shared_ptr<const detail::GraphIR> graph =
        typed != plans_.end() ? typed->second->graph : detail::typed_subgraph(graph_, types, {}, node_);
    const std::vector<bool> deciding = detail::shape_deciding_inputs(*graph);
    signature.values.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i)
        if (deciding[i]) signature.values[i] = inputs[i];
    const std::string key = signature.key();
    auto found = plans_.find(key);
    if (found != plans_.end()) return found->second;
    // A body whose shapes follow its iteration counter gets a plan per iteration; the cache
    // stays bounded.
    if (plans_.size() > kMaxPlans) plans_.clear();
    auto plan = detail::make_plan(graph, signature, options_, weights_);
    plans_.emplace(key, plan);
    if (key != types_key) plans_.emplace(types_key, plan);  // remembers the typed graph
    return plan;
}

std::vector<Tensor> SubgraphRunner::run(const std::vector<Tensor>& inputs) const {
    const auto plan = plan_for(inputs);
    detail::ExecutionContext context;
    return context.run(plan, inputs, std::vector<Tensor>(plan->output_slots.size()));
}

void copy_result(const KernelContext& ctx, const Tensor& from, Tensor& to, const std::string& what) {
    if (from.shape() != to.shape() || from.dtype() != to.dtype())
        invalid_argument(ctx, what + " is " + std::string(dtype_name(from.dtype())) + " " + from.shape().to_string() +
                                  " at run time, but the plan expected " + std::string(dtype_name(to.dtype())) + " " +
                                  to.shape().to_string());
    const Tensor host = from.device() == Device::CPU ? from : from.to(Device::CPU);
    std::memcpy(to.raw_data(), host.raw_data(), to.nbytes());
}

}  // namespace infer::cpu
