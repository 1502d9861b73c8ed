// Scan: runs the body once per slice along axis 0 of the scan inputs, passing the states from
// one iteration to the next and stacking the scan outputs' slices along axis 0. Opset 8's form
// (attribute batch_axis, set on import) does this for each entry of a batch axis 0.
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

// Writes `part` into slice `index` of `whole` along axis 0.
void put_slice(Tensor& whole, int64_t index, const Tensor& part) {
    std::memcpy(static_cast<unsigned char*>(whole.raw_data()) + static_cast<size_t>(index) * part.nbytes(), part.raw_data(),
                part.nbytes());
}

class ScanKernel final : public CompiledKernel {
public:
    explicit ScanKernel(const CompileContext& c)
        : body_(c.node().attributes->get_graph("body").ir(), c.node().name, c.node().threads) {}

    void run(KernelContext& ctx) const override {
        const size_t n = ctx.num_inputs();
        const size_t implicit = detail::implicit_input_count(ctx.attrs(), n);
        const size_t own = n - implicit;
        std::vector<Tensor> inputs, outer, outputs;
        for (size_t i = 0; i < own; ++i) inputs.push_back(ctx.input(i));
        for (size_t i = own; i < n; ++i) outer.push_back(ctx.input(i));
        for (size_t i = 0; i < ctx.num_outputs(); ++i) outputs.push_back(ctx.output(i));
        if (ctx.attrs().get_int("batch_axis", 0) == 0) return scan(ctx, inputs, outer, outputs);
        // Opset 8: each entry of the batch axis is a scan of its own.
        for (int64_t b = 0; b < inputs.front().shape()[0]; ++b) {
            std::vector<Tensor> entry_inputs, entry_outputs;
            for (const Tensor& t : inputs) entry_inputs.push_back(slice_of(t, b));
            for (const Tensor& t : outputs) entry_outputs.push_back(slice_of(t, b));  // scratch of the entry's shape
            scan(ctx, entry_inputs, outer, entry_outputs);
            for (size_t i = 0; i < outputs.size(); ++i) put_slice(outputs[i], b, entry_outputs[i]);
        }
    }

private:
    // One scan: the body once per slice along axis 0 of the scan inputs, states carried.
    void scan(const KernelContext& ctx, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outer,
              std::vector<Tensor>& outputs) const {
        const size_t own = inputs.size();
        const size_t states = own - detail::scan_input_count(ctx.attrs(), own, ctx.node_name());
        std::vector<Tensor> state(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(states));
        const int64_t length = inputs[states].shape()[0];
        const size_t scan_outputs = outputs.size() - states;
        for (int64_t t = 0; t < length; ++t) {
            std::vector<Tensor> body_inputs = state;
            for (size_t i = states; i < own; ++i) body_inputs.push_back(slice_of(inputs[i], t));
            body_inputs.insert(body_inputs.end(), outer.begin(), outer.end());
            const std::vector<Tensor> results = body_.run(body_inputs);
            if (results.size() != states + scan_outputs) invalid_argument(ctx, "the body returns another number of outputs");
            state.assign(results.begin(), results.begin() + static_cast<std::ptrdiff_t>(states));
            for (size_t k = 0; k < scan_outputs; ++k) {
                Tensor target = slice_of(outputs[states + k], t);  // a scratch of the slice's shape, for the check
                copy_result(ctx, results[states + k], target, "scan output " + std::to_string(k));
                put_slice(outputs[states + k], t, target);
            }
        }
        for (size_t i = 0; i < states; ++i) copy_result(ctx, state[i], outputs[i], "state " + std::to_string(i));
    }

    SubgraphRunner body_;
};

}  // namespace

void register_control_scan_kernels(KernelRegistry& r) {
    for (DType t : kAllDTypes)
        r.add_compiled("Scan", t, [](const CompileContext& c) { return std::make_unique<ScanKernel>(c); });
}

}  // namespace infer::cpu
