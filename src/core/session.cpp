// Session: input validation, the plan cache (one plan per input signature) and a pool of
// execution contexts per plan so that concurrent runs never share buffers.
#include "backends/cpu/cpu_backend.hpp"
#include "core/executor/executor.hpp"
#include "core/passes/pipeline.hpp"
#include "core/planner/plan.hpp"

#include <infer/error.hpp>
#include <infer/session.hpp>

#include <algorithm>
#include <chrono>
#include <mutex>

namespace infer {

std::string_view precision_name(Precision precision) {
    switch (precision) {
        case Precision::f32: return "f32";
        case Precision::f16: return "f16";
        case Precision::bf16: return "bf16";
    }
    return "?";
}

Precision parse_precision(std::string_view name) {
    for (Precision p : {Precision::f32, Precision::f16, Precision::bf16})
        if (precision_name(p) == name) return p;
    throw InvalidArgument("unknown precision '" + std::string(name) + "' (expected f32, f16 or bf16)");
}

size_t PlacementReport::fallbacks() const {
    size_t n = 0;
    for (const auto& entry : nodes)
        if (!entry.reason.empty()) ++n;
    return n;
}

std::string PlacementReport::to_string() const {
    std::string text = "placement for " + requested.to_string() + ": " + std::to_string(nodes.size()) +
                       " nodes, " + std::to_string(fallbacks()) + " on a fallback device, " +
                       std::to_string(copies) + " copies between devices\n";
    for (const auto& entry : nodes) {
        text += "  " + entry.node + " (" + entry.op + ") -> " + entry.device.to_string();
        if (!entry.reason.empty()) text += "  [" + entry.reason + "]";
        text += "\n";
    }
    return text;
}

namespace {
// Contexts of one plan; a run borrows one and gives it back.
struct PlanEntry {
    std::shared_ptr<const detail::Plan> plan;
    std::mutex mutex;
    std::vector<std::unique_ptr<detail::ExecutionContext>> idle;

    std::unique_ptr<detail::ExecutionContext> borrow() {
        {
            std::lock_guard lock(mutex);
            if (!idle.empty()) {
                auto context = std::move(idle.back());
                idle.pop_back();
                return context;
            }
        }
        return std::make_unique<detail::ExecutionContext>(plan);
    }
    void give_back(std::unique_ptr<detail::ExecutionContext> context) {
        std::lock_guard lock(mutex);
        idle.push_back(std::move(context));
    }
};
}  // namespace

struct Session::Impl {
    Graph graph;
    SessionOptions options;
    detail::WeightCache weights;
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<PlanEntry>> plans;
    std::shared_ptr<const detail::Plan> latest;
    std::vector<bool> shape_deciding;  // per graph input
    // What plans are made from: the graph itself, or its f16/bf16 lowering.
    std::shared_ptr<const detail::GraphIR> planned;

    Impl(Graph g, SessionOptions o)
        : graph(std::move(g)), options(std::move(o)),
          shape_deciding(detail::shape_deciding_inputs(graph.ir())) {
        planned = detail::run_pipeline(graph.ir(), {*backend_for(options.device), options.precision});
    }

    std::shared_ptr<PlanEntry> plan_for(const detail::InputSignature& signature) {
        const std::string key = signature.key();
        std::lock_guard lock(mutex);
        auto& entry = plans[key];
        if (!entry) {
            auto fresh = std::make_shared<PlanEntry>();
            fresh->plan = detail::make_plan(*planned, signature, options, weights);
            entry = fresh;
        }
        latest = entry->plan;
        return entry;
    }

    Batch run(const Batch& inputs, RunProfile* profile);

    // Checks the batch against the graph's inputs; returns the tensors in graph-input order.
    std::vector<Tensor> bind(const Batch& batch, detail::InputSignature& signature) const {
        const auto& infos = graph.inputs();
        std::string expected;
        for (const auto& info : infos) expected += (expected.empty() ? "" : ", ") + info.name;
        for (const auto& [name, tensor] : batch) {
            bool known = false;
            for (const auto& info : infos) known = known || info.name == name;
            if (!known)
                throw InvalidArgument("graph '" + graph.name() + "' has no input named '" + name +
                                      "' (its inputs are: " + expected + ")");
        }
        std::vector<Tensor> tensors;
        for (const auto& info : infos) {
            if (!batch.contains(info.name))
                throw InvalidArgument("graph '" + graph.name() + "': input '" + info.name +
                                      "' is missing (its inputs are: " + expected + ")");
            const Tensor& t = batch[info.name];
            if (!t.defined())
                throw InvalidArgument("input '" + info.name + "' is an undefined tensor");
            if (t.dtype() != info.dtype)
                throw InvalidArgument("input '" + info.name + "' has dtype " +
                                      std::string(dtype_name(t.dtype())) + ", the graph expects " +
                                      std::string(dtype_name(info.dtype)));
            if (!t.shape().matches(info.shape))
                throw InvalidArgument("input '" + info.name + "' has shape " + t.shape().to_string() +
                                      ", the graph expects " + info.shape.to_string());
            tensors.push_back(t.contiguous());
            signature.values.push_back(shape_deciding[tensors.size() - 1] ? t.to(Device::CPU) : Tensor());
            signature.dtypes.push_back(t.dtype());
            signature.shapes.push_back(t.shape());
            signature.devices.push_back(t.device());
        }
        return tensors;
    }
};

Session::Session(Graph graph, SessionOptions options)
    : impl_(std::make_unique<Impl>(std::move(graph), std::move(options))) {
    const SessionOptions& o = impl_->options;
    backend_for(o.device);  // unknown, unbuilt or absent devices fail here
    if (o.threads < 0) throw InvalidArgument("threads must be >= 0, got " + std::to_string(o.threads));
    if (o.threads > 0) cpu::set_thread_count(o.threads);
    // With fully static inputs the plan can be made now, so strict mode fails early.
    detail::InputSignature signature;
    for (size_t i = 0; i < impl_->graph.inputs().size(); ++i) {
        const TensorInfo& info = impl_->graph.inputs()[i];
        if (!info.shape.is_static() || impl_->shape_deciding[i]) return;
        signature.dtypes.push_back(info.dtype);
        signature.shapes.push_back(info.shape);
        signature.devices.push_back(Device::CPU);
    }
    impl_->plan_for(signature);
}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

Batch Session::run(const Batch& inputs) const { return impl_->run(inputs, nullptr); }

Batch Session::run(const Batch& inputs, RunProfile& profile) const {
    const auto started = std::chrono::steady_clock::now();
    Batch outputs = impl_->run(inputs, &profile);
    // The whole call, validation and plan lookup included, is what the caller waited for.
    profile.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    profile.compute_ms = std::max(0.0, profile.wall_ms - profile.h2d_ms - profile.d2h_ms);
    return outputs;
}

MemoryEstimate Session::memory() const {
    std::lock_guard lock(impl_->mutex);
    if (!impl_->latest) return MemoryEstimate{impl_->options.device};
    return impl_->latest->memory;
}

Batch Session::Impl::run(const Batch& inputs, RunProfile* profile) {
    detail::InputSignature signature;
    const std::vector<Tensor> tensors = bind(inputs, signature);
    const std::shared_ptr<PlanEntry> entry = plan_for(signature);
    auto context = entry->borrow();
    std::vector<Tensor> outputs = context->run(tensors, profile);
    entry->give_back(std::move(context));
    Batch result;
    const auto& infos = graph.outputs();
    for (size_t i = 0; i < infos.size(); ++i) result.set(infos[i].name, std::move(outputs[i]));
    return result;
}

const SessionOptions& Session::options() const { return impl_->options; }
const Graph& Session::graph() const { return impl_->graph; }

std::map<std::string, size_t> Session::op_histogram() const {
    std::map<std::string, size_t> histogram;
    for (const auto& node : impl_->planned->nodes) ++histogram[node.op];
    return histogram;
}

PlacementReport Session::placement() const {
    std::lock_guard lock(impl_->mutex);
    if (!impl_->latest) return PlacementReport{impl_->options.device, {}, 0};
    return impl_->latest->report;
}

}  // namespace infer
