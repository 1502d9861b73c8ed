// Graph: an immutable IR plus a cache of sessions, one per device, for Graph::run.
#include "core/ir/graph_ir.hpp"

#include <infer/graph.hpp>
#include <infer/session.hpp>

#include <mutex>

namespace infer {

namespace detail {
struct GraphState {
    std::shared_ptr<const GraphIR> ir;
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<Session>> sessions;  // by device name
};
}  // namespace detail

Graph::Graph(std::shared_ptr<const detail::GraphIR> ir) : state_(std::make_shared<detail::GraphState>()) {
    state_->ir = std::move(ir);
}

const detail::GraphIR& Graph::ir() const { return *state_->ir; }
const std::string& Graph::name() const { return state_->ir->name; }
const std::vector<TensorInfo>& Graph::inputs() const { return state_->ir->input_infos; }
const std::vector<TensorInfo>& Graph::outputs() const { return state_->ir->output_infos; }
size_t Graph::node_count() const { return state_->ir->nodes.size(); }

std::map<std::string, size_t> Graph::op_histogram() const {
    std::map<std::string, size_t> histogram;
    for (const auto& node : state_->ir->nodes) ++histogram[node.op];
    return histogram;
}

Batch Graph::run(const Batch& inputs, const Device& device) const {
    std::shared_ptr<Session> session;
    {
        std::lock_guard lock(state_->mutex);
        auto& cached = state_->sessions[device.to_string()];
        if (!cached) {
            SessionOptions options;
            options.device = device;
            // The session gets its own Graph handle over the same IR, so the cache that holds
            // the session is not reachable from it (no reference cycle).
            try {
                cached = std::make_shared<Session>(Graph(state_->ir), options);
            } catch (...) {
                state_->sessions.erase(device.to_string());
                throw;
            }
        }
        session = cached;
    }
    return session->run(inputs);
}

}  // namespace infer
