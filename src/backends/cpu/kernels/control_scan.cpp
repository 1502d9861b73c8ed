// Scan: runs the body once per slice along axis 0 of the scan inputs, passing the states from
// one iteration to the next and stacking the scan outputs' slices along axis 0.
#include "backends/cpu/kernels/control_subgraph.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "core/ops/shapes_control.hpp"

#include <infer/graph.hpp>

#include <cstring>

namespace infer::cpu {

namespace {

// Slice `index` of `t` along axis 0, as a tensor of its own.
Tensor slice_of(const Tensor& t, int64_t index) {
    const Shape shape(std::vector<int64_t>(t.shape().dims().begin() + 1, t.shape().dims().end()));
    Tensor slice = Tensor::empty(t.dtype(), shape);
    std::memcpy(slice.raw_data(), static_cast<const unsigned char*>(t.raw_data()) + static_cast<size_t>(index) * slice.nbytes(),
                slice.nbytes());
    return slice;
}

class ScanKernel final : public CompiledKernel {
public:
    explicit ScanKernel(const CompileContext& c)
        : body_(c.node().attributes->get_graph("body").ir(), c.node().name, c.node().threads) {}

    void run(KernelContext& ctx) const override {
        const size_t n = ctx.num_inputs();
        const size_t implicit = detail::implicit_input_count(ctx.attrs(), n);
        const size_t own = n - implicit;
        const size_t scans = detail::scan_input_count(ctx.attrs(), own, ctx.node_name());
        const size_t states = own - scans;
        std::vector<Tensor> state, outer;
        for (size_t i = 0; i < states; ++i) state.push_back(ctx.input(i));
        for (size_t i = own; i < n; ++i) outer.push_back(ctx.input(i));
        const int64_t length = ctx.input(states).shape()[0];
        const size_t outputs = ctx.num_outputs() - states;
        for (int64_t t = 0; t < length; ++t) {
            std::vector<Tensor> inputs = state;
            for (size_t i = states; i < own; ++i) inputs.push_back(slice_of(ctx.input(i), t));
            inputs.insert(inputs.end(), outer.begin(), outer.end());
            const std::vector<Tensor> results = body_.run(inputs);
            if (results.size() != states + outputs) invalid_argument(ctx, "the body returns another number of outputs");
            state.assign(results.begin(), results.begin() + static_cast<std::ptrdiff_t>(states));
            for (size_t k = 0; k < outputs; ++k) {
                Tensor& out = ctx.output(states + k);
                Tensor target = slice_of(out, t);  // a scratch of the slice's shape, for the check
                copy_result(ctx, results[states + k], target, "scan output " + std::to_string(k));
                std::memcpy(static_cast<unsigned char*>(out.raw_data()) + static_cast<size_t>(t) * target.nbytes(),
                            target.raw_data(), target.nbytes());
            }
        }
        for (size_t i = 0; i < states; ++i) copy_result(ctx, state[i], ctx.output(i), "state " + std::to_string(i));
    }

private:
    SubgraphRunner body_;
};

}  // namespace

void register_control_scan_kernels(KernelRegistry& r) {
    for (DType t : kAllDTypes)
        r.add_compiled("Scan", t, [](const CompileContext& c) { return std::make_unique<ScanKernel>(c); });
}

}  // namespace infer::cpu
