// SequenceMap, one element: the planner places one step per element of the node's sequences
// (planner/value_structures.cpp) with that element of each sequence input and the tensor
// inputs whole; this kernel runs the body once on them.
#include "backends/cpu/kernels/control_subgraph.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"

#include <infer/graph.hpp>

namespace infer::cpu {

namespace {

class SequenceMapElementKernel final : public CompiledKernel {
public:
    explicit SequenceMapElementKernel(const CompileContext& c)
        : body_(c.node().attributes->get_graph("body").ir(), c.node().name, c.node().threads) {}

    void run(KernelContext& ctx) const override {
        std::vector<Tensor> inputs;
        for (size_t i = 0; i < ctx.num_inputs(); ++i) inputs.push_back(ctx.input(i));
        const std::vector<Tensor> results = body_.run(inputs);
        if (results.size() != ctx.num_outputs()) invalid_argument(ctx, "the body returns another number of outputs");
        for (size_t i = 0; i < results.size(); ++i) copy_result(ctx, results[i], ctx.output(i), "output " + std::to_string(i));
    }

private:
    SubgraphRunner body_;
};

}  // namespace

void register_control_sequence_map_kernels(KernelRegistry& r) {
    for (DType t : kAllDTypes)
        r.add_compiled("SequenceMap", t, [](const CompileContext& c) { return std::make_unique<SequenceMapElementKernel>(c); });
}

}  // namespace infer::cpu
