// Loop: runs the body while the iteration count is below the trip count and the condition
// holds, passing the carried values from one iteration to the next and stacking the scan
// outputs. Only the trip count and the condition are read on the host. For loops whose
// iterations the plan cannot count, or too many to unroll: the planner plans the others inline
// (planner/value_structures.cpp).
#include "backends/cpu/kernels/control_subgraph.hpp"
#include "backends/cpu/kernels/kernel_util.hpp"
#include "core/ops/shapes_control.hpp"

#include <infer/graph.hpp>

#include <cstring>
#include <limits>

namespace infer::cpu {

namespace {

bool read_bool(const KernelContext& ctx, const Tensor& t, const std::string& what) {
    if (t.dtype() != DType::boolean || t.numel() != 1) invalid_argument(ctx, what + " must be one bool");
    return *static_cast<const uint8_t*>(t.raw_data()) != 0;
}

class LoopKernel final : public CompiledKernel {
public:
    explicit LoopKernel(const CompileContext& c)
        : body_(c.node().attributes->get_graph("body").ir(), c.node().name, c.node().threads) {}

    void run(KernelContext& ctx) const override {
        const size_t n = ctx.num_inputs();
        const size_t implicit = detail::implicit_input_count(ctx.attrs(), n);
        const size_t carried = n - 2 - implicit;
        const int64_t trips = ctx.has_input(0) ? read_ints(ctx, 0).at(0) : std::numeric_limits<int64_t>::max();
        bool condition = ctx.has_input(1) ? read_bool(ctx, ctx.input(1), "the condition") : true;
        std::vector<Tensor> state, outer;
        for (size_t i = 2; i < 2 + carried; ++i) state.push_back(ctx.input(i));
        for (size_t i = n - implicit; i < n; ++i) outer.push_back(ctx.input(i));
        const size_t scans = ctx.num_outputs() - carried;
        std::vector<std::vector<Tensor>> slices(scans);
        for (int64_t i = 0; i < trips && condition; ++i) {
            Tensor cond_in = Tensor::empty(DType::boolean, Shape(std::vector<int64_t>{}));
            *static_cast<uint8_t*>(cond_in.raw_data()) = condition;
            std::vector<Tensor> inputs{Tensor::from_vector(std::vector<int64_t>{i}, Shape(std::vector<int64_t>{})),
                                       cond_in};
            inputs.insert(inputs.end(), state.begin(), state.end());
            inputs.insert(inputs.end(), outer.begin(), outer.end());
            std::vector<Tensor> results = body_.run(inputs);
            if (results.size() != 1 + carried + scans) invalid_argument(ctx, "the body returns another number of outputs");
            condition = read_bool(ctx, results[0], "the body's condition");
            state.assign(results.begin() + 1, results.begin() + 1 + static_cast<std::ptrdiff_t>(carried));
            for (size_t k = 0; k < scans; ++k) slices[k].push_back(results[1 + carried + k]);
        }
        for (size_t i = 0; i < carried; ++i) copy_result(ctx, state[i], ctx.output(i), "carried value " + std::to_string(i));
        for (size_t k = 0; k < scans; ++k) stack(ctx, slices[k], ctx.output(carried + k), k);
    }

private:
    // Stacks one scan output's slices along a new first axis.
    static void stack(const KernelContext& ctx, const std::vector<Tensor>& slices, Tensor& out, size_t k) {
        const std::string what = "scan output " + std::to_string(k);
        if (out.shape().rank() == 0 || out.shape()[0] != static_cast<int64_t>(slices.size()))
            invalid_argument(ctx, what + " has " + std::to_string(slices.size()) + " slices at run time, but the plan expected " +
                                      out.shape().to_string());
        const Shape slice_shape(std::vector<int64_t>(out.shape().dims().begin() + 1, out.shape().dims().end()));
        const size_t bytes = static_cast<size_t>(slice_shape.numel()) * dtype_size(out.dtype());
        auto* target = static_cast<unsigned char*>(out.raw_data());
        for (size_t s = 0; s < slices.size(); ++s) {
            if (slices[s].shape() != slice_shape || slices[s].dtype() != out.dtype())
                invalid_argument(ctx, what + ": slice " + std::to_string(s) + " is " + slices[s].shape().to_string() +
                                          ", which does not fit " + out.shape().to_string());
            std::memcpy(target + s * bytes, slices[s].raw_data(), bytes);
        }
    }

    SubgraphRunner body_;
};

}  // namespace

void register_control_loop_kernels(KernelRegistry& r) {
    // Keyed by the condition's dtype (bool), or f32 when the condition is absent.
    for (DType t : {DType::boolean, DType::f32})
        r.add_compiled("Loop", t, [](const CompileContext& c) { return std::make_unique<LoopKernel>(c); });
}

}  // namespace infer::cpu
