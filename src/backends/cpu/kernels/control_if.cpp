// If: runs the branch the condition (read on the host) picks, with the node's implicit inputs.
// Only for conditions computed at run time: the planner plans an If whose condition it knows
// inline (planner/value_structures.cpp).
#include "backends/cpu/kernels/control_subgraph.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "core/ops/shapes_control.hpp"

#include <infer/graph.hpp>

namespace infer::cpu {

namespace {

class IfKernel final : public CompiledKernel {
public:
    explicit IfKernel(const CompileContext& c)
        : then_(c.node().attributes->get_graph("then_branch").ir(), c.node().name, c.node().threads),
          else_(c.node().attributes->get_graph("else_branch").ir(), c.node().name, c.node().threads) {}

    void run(KernelContext& ctx) const override {
        const Tensor& condition = ctx.input(0);
        if (condition.dtype() != DType::boolean || condition.numel() != 1)
            invalid_argument(ctx, "the condition must be one bool");
        const bool taken = *static_cast<const uint8_t*>(condition.raw_data()) != 0;
        std::vector<Tensor> implicit;
        for (size_t i = 1; i < ctx.num_inputs(); ++i) implicit.push_back(ctx.input(i));
        const std::vector<Tensor> results = (taken ? then_ : else_).run(implicit);
        if (results.size() != ctx.num_outputs()) invalid_argument(ctx, "the branch returns another number of outputs");
        for (size_t i = 0; i < results.size(); ++i)
            copy_result(ctx, results[i], ctx.output(i), "output " + std::to_string(i));
    }

private:
    SubgraphRunner then_, else_;
};

}  // namespace

void register_control_if_kernels(KernelRegistry& r) {
    r.add_compiled("If", DType::boolean, [](const CompileContext& c) { return std::make_unique<IfKernel>(c); });
}

}  // namespace infer::cpu
