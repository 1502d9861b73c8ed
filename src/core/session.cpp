// Session: input validation, the plan cache (one plan per input signature) and a pool of
// execution contexts per plan so that concurrent runs never share buffers.
#include "core/executor/async_runs.hpp"
#include "core/executor/executor.hpp"
#include "core/log.hpp"
#include "core/passes/lower_precision.hpp"
#include "core/passes/pipeline.hpp"
#include "core/planner/plan.hpp"

#include <infer/error.hpp>
#include <infer/session.hpp>

#include <algorithm>
#include <chrono>
#include <list>
#include <map>
#include <mutex>
#include <set>

namespace infer {

std::string_view precision_name(Precision precision) {
    switch (precision) {
        case Precision::f32: return "f32";
        case Precision::f16: return "f16";
        case Precision::bf16: return "bf16";
        case Precision::int8: return "int8";
    }
    return "?";
}

Precision parse_precision(std::string_view name) {
    for (Precision p : {Precision::f32, Precision::f16, Precision::bf16, Precision::int8})
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
    if (!kept_f32.empty()) {
        text += "  kept in f32, their f16 results out of range:";
        for (const auto& name : kept_f32) text += " " + name;
        text += "\n";
    }
    return text;
}

namespace {
// Execution contexts of a session; a run borrows one and gives it back. There are never more
// than the most runs that were ever in flight at once.
class ContextPool {
public:
    explicit ContextPool(size_t plans_per_context) : plans_per_context_(plans_per_context) {}
    std::unique_ptr<detail::ExecutionContext> borrow() {
        {
            std::lock_guard lock(mutex_);
            if (!idle_.empty()) {
                auto context = std::move(idle_.back());
                idle_.pop_back();
                return context;
            }
        }
        return std::make_unique<detail::ExecutionContext>(plans_per_context_);
    }
    void give_back(std::unique_ptr<detail::ExecutionContext> context) {
        std::lock_guard lock(mutex_);
        idle_.push_back(std::move(context));
    }

private:
    size_t plans_per_context_;  // as many as the plan cache holds
    std::mutex mutex_;
    std::vector<std::unique_ptr<detail::ExecutionContext>> idle_;
};

// Plans by input signature, the least recently used dropped beyond the capacity, so the cache
// does not grow with the variety of request shapes.
class PlanCache {
public:
    explicit PlanCache(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

    template <class Make>
    std::shared_ptr<const detail::Plan> get(const std::string& key, Make make) {
        auto it = index_.find(key);
        if (it != index_.end()) {
            order_.splice(order_.begin(), order_, it->second);
            return it->second->second;
        }
        order_.emplace_front(key, make());
        index_[key] = order_.begin();
        if (order_.size() > capacity_) {
            index_.erase(order_.back().first);
            order_.pop_back();
        }
        return order_.front().second;
    }
    void clear() {
        order_.clear();
        index_.clear();
    }
    size_t size() const { return order_.size(); }

private:
    using Entry = std::pair<std::string, std::shared_ptr<const detail::Plan>>;
    size_t capacity_;
    std::list<Entry> order_;  // most recently used first
    std::map<std::string, std::list<Entry>::iterator> index_;
};
}  // namespace

struct Session::Impl {
    Graph graph;
    SessionOptions options;
    detail::WeightCache weights;
    std::mutex mutex;
    PlanCache plans;
    ContextPool contexts;
    std::shared_ptr<const detail::Plan> latest;
    std::vector<bool> shape_deciding;  // per graph input
    // What plans are made from: the graph itself, or its f16/bf16 lowering.
    std::shared_ptr<const detail::GraphIR> planned;
    // f16: nodes computed in f32 because a run found their f16 results out of range.
    std::set<std::string> keep_f32;
    std::set<std::string> source_nodes;  // names of the nodes lowering starts from
    // Made with the first run_async. Last, so that it is destroyed first: its workers run on
    // everything above.
    std::unique_ptr<detail::AsyncRuns> async;

    Impl(Graph g, SessionOptions o)
        : graph(std::move(g)), options(std::move(o)), plans(options.max_cached_plans), contexts(options.max_cached_plans),
          shape_deciding(detail::shape_deciding_inputs(graph.ir())) {
        planned = detail::run_pipeline(graph.ir(), pass_context(options.precision));
    }

    std::shared_ptr<const detail::Plan> plan_for(const detail::InputSignature& signature) {
        const std::string key = signature.key();
        std::lock_guard lock(mutex);
        latest = plans.get(key, [&] {
            // Logged because a plan made in steady state (a cache too small for the shapes a
            // service sees) costs a full planning, and on a GPU a new graph capture.
            const auto started = std::chrono::steady_clock::now();
            auto plan = detail::make_plan(planned, signature, options, weights);
            detail::logger().debug("graph '{}': planned {} on {} in {:.1f} ms ({} plans cached before)", graph.name(), key,
                                   options.device.to_string(),
                                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count(),
                                   plans.size());
            return plan;
        });
        return latest;
    }

    detail::PassContext pass_context(Precision precision) const {
        return {*backend_for(options.device), precision, keep_f32, options.calibration.get()};
    }

    Batch run(const Batch& inputs, const Batch* bound_outputs, RunProfile* profile);
    // The caller's output tensors in graph-output order (undefined where not bound), checked
    // against the plan's output dtypes and shapes.
    std::vector<Tensor> outputs_to_write(const Batch* bound, const detail::Plan& plan) const;
    bool keep_in_f32(const std::vector<std::string>& out_of_range);

    // Checks the batch against the graph's inputs; returns the tensors in graph-input order, a
    // sequence's elements in its place, and fills the signature.
    std::vector<Tensor> bind(const Batch& batch, detail::InputSignature& signature) const {
        const auto& infos = graph.inputs();
        std::string expected;
        for (const auto& info : infos) expected += (expected.empty() ? "" : ", ") + info.name;
        const auto check_known = [&](const std::string& name, bool sequence) {
            for (const auto& info : infos)
                if (info.name == name) {
                    if ((info.kind == ValueKind::sequence) != sequence)
                        throw InvalidArgument("input '" + name + "' is a " + (sequence ? "tensor" : "sequence") +
                                              " of the graph, but the batch gives a " + (sequence ? "sequence" : "tensor"));
                    return;
                }
            throw InvalidArgument("graph '" + graph.name() + "' has no input named '" + name + "' (its inputs are: " +
                                  expected + ")");
        };
        for (const auto& [name, tensor] : batch) check_known(name, false);
        for (const auto& name : batch.sequence_names()) check_known(name, true);
        std::vector<Tensor> tensors;
        bool structured = false;
        const auto add = [&](const TensorInfo& info, const Tensor& t, const std::string& what, bool deciding) {
            if (!t.defined()) throw InvalidArgument(what + " is an undefined tensor");
            if (t.dtype() != info.dtype)
                throw InvalidArgument(what + " has dtype " + std::string(dtype_name(t.dtype())) + ", the graph expects " +
                                      std::string(dtype_name(info.dtype)));
            // A sequence declared without an element shape takes elements of any shape.
            const bool any_shape = info.kind == ValueKind::sequence && info.shape.rank() == 0;
            if (!any_shape && !t.shape().matches(info.shape))
                throw InvalidArgument(what + " has shape " + t.shape().to_string() + ", the graph expects " +
                                      info.shape.to_string());
            tensors.push_back(t.contiguous());
            signature.values.push_back(deciding ? t.to(Device::CPU) : Tensor());
            signature.dtypes.push_back(t.dtype());
            signature.shapes.push_back(t.shape());
            signature.devices.push_back(t.device());
        };
        for (size_t i = 0; i < infos.size(); ++i) {
            const TensorInfo& info = infos[i];
            const bool given = info.kind == ValueKind::sequence ? batch.contains_sequence(info.name) : batch.contains(info.name);
            if (!given && !info.optional)
                throw InvalidArgument("graph '" + graph.name() + "': input '" + info.name + "' is missing (its inputs are: " +
                                      expected + ")");
            structured = structured || info.kind == ValueKind::sequence || info.optional;
            if (!given) {
                signature.structure.push_back(detail::kAbsentEntry);
                continue;
            }
            if (info.kind == ValueKind::tensor) {
                signature.structure.push_back(detail::kTensorEntry);
                add(info, batch[info.name], "input '" + info.name + "'", shape_deciding[i]);
                continue;
            }
            const std::vector<Tensor>& elements = batch.sequence(info.name);
            signature.structure.push_back(static_cast<int>(elements.size()));
            for (size_t e = 0; e < elements.size(); ++e)
                add(info, elements[e], "element " + std::to_string(e) + " of input '" + info.name + "'", shape_deciding[i]);
        }
        if (!structured) signature.structure.clear();  // the key of a graph of tensors stays as it was
        return tensors;
    }
};

Session::Session(Graph graph, SessionOptions options)
    : impl_(std::make_unique<Impl>(std::move(graph), std::move(options))) {
    const SessionOptions& o = impl_->options;
    backend_for(o.device);  // unknown, unbuilt or absent devices fail here
    if (o.threads < 0) throw InvalidArgument("threads must be >= 0, got " + std::to_string(o.threads));
    if (o.max_cached_plans == 0) throw InvalidArgument("max_cached_plans must be at least 1");
    // With fully static inputs the plan can be made now, so strict mode fails early.
    detail::InputSignature signature;
    for (size_t i = 0; i < impl_->graph.inputs().size(); ++i) {
        const TensorInfo& info = impl_->graph.inputs()[i];
        const bool plain = info.kind == ValueKind::tensor && !info.optional;
        if (!plain || !info.shape.is_static() || impl_->shape_deciding[i]) return;
        signature.dtypes.push_back(info.dtype);
        signature.shapes.push_back(info.shape);
        signature.devices.push_back(Device::CPU);
    }
    impl_->plan_for(signature);
}

std::future<Batch> Session::run_async(Batch inputs) const {
    {
        std::lock_guard lock(impl_->mutex);
        if (!impl_->async) {
            if (impl_->options.async_workers == 0 || impl_->options.max_queued_async_runs == 0)
                throw InvalidArgument("run_async needs async_workers and max_queued_async_runs of at least 1");
            Impl* impl = impl_.get();
            impl_->async = std::make_unique<detail::AsyncRuns>(
                [impl](const Batch& batch) { return impl->run(batch, nullptr, nullptr); }, impl_->options.max_queued_async_runs,
                impl_->options.async_workers);
        }
    }
    return impl_->async->submit(std::move(inputs));
}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

Batch Session::run(const Batch& inputs) const { return impl_->run(inputs, nullptr, nullptr); }

void Session::run(const Batch& inputs, Batch& outputs) const {
    outputs = impl_->run(inputs, &outputs, nullptr);
}

namespace {
// The whole call, validation and plan lookup included, is what the caller waited for.
template <class Run>
auto timed(RunProfile& profile, Run run) {
    const auto started = std::chrono::steady_clock::now();
    auto outputs = run();
    profile.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    profile.compute_ms = std::max(0.0, profile.wall_ms - profile.h2d_ms - profile.d2h_ms);
    return outputs;
}
}  // namespace

Batch Session::run(const Batch& inputs, RunProfile& profile) const {
    return timed(profile, [&] { return impl_->run(inputs, nullptr, &profile); });
}

void Session::run(const Batch& inputs, Batch& outputs, RunProfile& profile) const {
    outputs = timed(profile, [&] { return impl_->run(inputs, &outputs, &profile); });
}

MemoryEstimate Session::memory() const {
    std::lock_guard lock(impl_->mutex);
    if (!impl_->latest) return MemoryEstimate{impl_->options.device};
    return impl_->latest->memory;
}

namespace {
// Where each graph output's tensors start in the plan's flat list of output tensors.
std::vector<size_t> flat_output_offsets(const detail::Plan& plan) {
    std::vector<size_t> offsets;
    size_t next = 0;
    for (int entry : plan.output_structure) {
        offsets.push_back(next);
        next += entry == detail::kAbsentEntry ? 0 : entry == detail::kTensorEntry ? 1 : static_cast<size_t>(entry);
    }
    return offsets;
}
}  // namespace

std::vector<Tensor> Session::Impl::outputs_to_write(const Batch* bound, const detail::Plan& plan) const {
    const auto& infos = graph.outputs();
    std::vector<Tensor> tensors(plan.output_slots.size());
    if (!bound) return tensors;
    const std::vector<size_t> offsets = flat_output_offsets(plan);
    for (const auto& [name, tensor] : *bound) {
        const auto it = std::find_if(infos.begin(), infos.end(), [&](const TensorInfo& info) { return info.name == name; });
        if (it == infos.end())
            throw InvalidArgument("graph '" + graph.name() + "' has no output named '" + name + "'");
        const size_t output = static_cast<size_t>(it - infos.begin());
        if (!tensor.defined()) continue;
        if (plan.output_structure[output] != detail::kTensorEntry)
            throw InvalidArgument("output '" + name + "' is a sequence or an absent optional in this run; only tensor "
                                  "outputs can be bound");
        const size_t i = offsets[output];
        const detail::Slot& slot = plan.slots[plan.output_slots[i]];
        if (tensor.dtype() != slot.dtype || tensor.shape() != slot.shape)
            throw InvalidArgument("output '" + name + "' is bound to a tensor " + tensor.describe() + "; this run makes " +
                                  std::string(dtype_name(slot.dtype)) + slot.shape.to_string());
        tensors[i] = tensor;
    }
    return tensors;
}

// A wrong answer is worse than a slow one: when f16 could not hold a node's results, that node
// and everything after it (whose inputs it spoilt) are lowered again in f32, and the run repeated.
// Each round only widens the f32 part, so this ends; the bound is a guard.
bool Session::Impl::keep_in_f32(const std::vector<std::string>& out_of_range) {
    std::lock_guard lock(mutex);
    const std::set<std::string> spoilt = detail::nodes_from(*planned, {out_of_range.begin(), out_of_range.end()});
    // Casts the lowering inserted are named after their value; only the graph's own nodes count.
    // The graph is held in a local: a range-for over a member of a temporary shared_ptr's
    // target reads freed memory (the shared_ptr dies before the loop runs).
    if (source_nodes.empty()) {
        const std::shared_ptr<const detail::GraphIR> f32_graph = detail::run_pipeline(graph.ir(), pass_context(Precision::f32));
        for (const auto& node : f32_graph->nodes) source_nodes.insert(node.name);
    }
    const size_t before = keep_f32.size();
    for (const auto& name : spoilt)
        if (source_nodes.count(name)) keep_f32.insert(name);
    if (keep_f32.size() == before) return false;
    std::string names;
    for (size_t i = 0; i < out_of_range.size() && i < 8; ++i) names += (i ? ", " : "") + out_of_range[i];
    if (out_of_range.size() > 8) names += ", ...";
    detail::logger().warn("graph '{}': f16 results of {} node(s) out of f16's range ({}); computing them and "
                          "the {} node(s) after them in f32 and running again",
                          graph.name(), out_of_range.size(), names, spoilt.size());
    planned = detail::run_pipeline(graph.ir(), pass_context(options.precision));
    plans.clear();
    latest.reset();
    return true;
}

Batch Session::Impl::run(const Batch& inputs, const Batch* bound_outputs, RunProfile* profile) {
    detail::InputSignature signature;
    const std::vector<Tensor> tensors = bind(inputs, signature);
    std::vector<Tensor> outputs;
    std::shared_ptr<const detail::Plan> plan;
    for (int round = 0;; ++round) {
        plan = plan_for(signature);
        const std::vector<Tensor> targets = outputs_to_write(bound_outputs, *plan);
        auto context = contexts.borrow();
        // A context whose run threw is dropped rather than given back: it may hold half-written state.
        outputs = context->run(plan, tensors, targets, profile);
        const std::vector<std::string> out_of_range = context->out_of_range();
        contexts.give_back(std::move(context));
        if (out_of_range.empty() || pass_context(options.precision).activation_dtype() != DType::f16 || round == 8 ||
            !keep_in_f32(out_of_range))
            break;
    }
    Batch result;
    const auto& infos = graph.outputs();
    size_t next = 0;
    for (size_t i = 0; i < infos.size(); ++i) {
        const int entry = plan->output_structure[i];
        if (entry == detail::kAbsentEntry) continue;  // an optional holding nothing
        if (infos[i].kind == ValueKind::tensor) {
            result.set(infos[i].name, std::move(outputs[next++]));
            continue;
        }
        std::vector<Tensor> elements(outputs.begin() + static_cast<std::ptrdiff_t>(next),
                                     outputs.begin() + static_cast<std::ptrdiff_t>(next + static_cast<size_t>(entry)));
        next += static_cast<size_t>(entry);
        result.set_sequence(infos[i].name, std::move(elements));
    }
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
    PlacementReport report = impl_->latest->report;
    report.kept_f32.assign(impl_->keep_f32.begin(), impl_->keep_f32.end());
    return report;
}

}  // namespace infer
