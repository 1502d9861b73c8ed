// SequenceMap, one element: the planner places one step per element of the node's sequences
// (planner/value_structures.cpp) with that element of each sequence input and the tensor
// inputs whole; this kernel runs the body once on them.
#include "backends/cpu/kernels/control_subgraph.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"

#include <infer/graph.hpp>

#include <map>
#include <memory>
#include <mutex>

namespace infer::cpu {

namespace {

// The body's runner, one per body and thread count while any plan's steps hold it: the steps of
// a node's elements share its nested plans and prepacked weights instead of making them once
// per element. Entries of bodies no step holds any more are dropped, so the map stays bounded
// by the live plans.
std::shared_ptr<const SubgraphRunner> shared_runner(const detail::GraphIR& body, const std::string& node, int threads) {
    static std::mutex mutex;
    static std::map<std::pair<const detail::GraphIR*, int>, std::weak_ptr<const SubgraphRunner>> runners;
    std::lock_guard lock(mutex);
    for (auto it = runners.begin(); it != runners.end();) it = it->second.expired() ? runners.erase(it) : std::next(it);
    std::weak_ptr<const SubgraphRunner>& slot = runners[{&body, threads}];
    std::shared_ptr<const SubgraphRunner> runner = slot.lock();
    if (!runner) {
        runner = std::make_shared<const SubgraphRunner>(body, node, threads);
        slot = runner;
    }
    return runner;
}

class SequenceMapElementKernel final : public CompiledKernel {
public:
    explicit SequenceMapElementKernel(const CompileContext& c)
        : body_(shared_runner(c.node().attributes->get_graph("body").ir(), c.node().name, c.node().threads)) {}

    void run(KernelContext& ctx) const override {
        std::vector<Tensor> inputs;
        for (size_t i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.input(i));
        const std::vector<Tensor> results = body_->run(inputs);
        if (results.size() != ctx.num_outputs()) invalid_argument(ctx, "the body returns another number of outputs");
        for (size_t i = 0; i < results.size(); ++i) copy_result(ctx, results[i], ctx.output(i), "output " + std::to_string(i));
    }

private:
    std::shared_ptr<const SubgraphRunner> body_;
};

}  // namespace

void register_control_sequence_map_kernels(KernelRegistry& r) {
    for (DType t : kAllDTypes)
        r.add_compiled("SequenceMap", t, [](const CompileContext& c) { return std::make_unique<SequenceMapElementKernel>(c); });
}

}  // namespace infer::cpu
