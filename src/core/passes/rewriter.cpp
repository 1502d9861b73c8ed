#include "core/passes/rewriter.hpp"

#include "core/ops/op_schema.hpp"

#include <functional>
#include <queue>
#include <stdexcept>
#include <unordered_set>

namespace infer::detail {

GraphIndex::GraphIndex(const GraphIR& graph)
    : producer_(graph.values.size(), -1), readers_(graph.values.size()), is_output_(graph.values.size(), false) {
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
        const int node = static_cast<int>(n);
        for (int id : graph.nodes[n].outputs) producer_[id] = node;
        for (int id : graph.nodes[n].inputs)
            if (id >= 0 && (readers_[id].empty() || readers_[id].back() != node)) readers_[id].push_back(node);
    }
    for (int id : graph.outputs) is_output_[id] = true;
}

Rewriter::Rewriter(std::shared_ptr<const GraphIR> graph)
    : graph_(std::move(graph)), index_(*graph_), claimed_(graph_->nodes.size(), false) {}

GraphIR& Rewriter::editable() {
    if (!edited_) edited_ = std::make_shared<GraphIR>(*graph_);
    return *edited_;
}

bool Rewriter::replace(const std::vector<int>& nodes, NodeIR replacement) {
    std::vector<NodeIR> replacements;
    replacements.push_back(std::move(replacement));
    return replace(nodes, std::move(replacements));
}

bool Rewriter::replace(const std::vector<int>& nodes, std::vector<NodeIR> replacements) {
    int last = -1;
    for (int n : nodes) {
        if (claimed_[n]) return false;
        last = std::max(last, n);
    }
    for (int n : nodes) claimed_[n] = true;
    editable();
    for (NodeIR& replacement : replacements) {
        replacement.id = op_id(replacement.op);
        added_.push_back(std::move(replacement));
        added_at_.push_back(last);
    }
    return true;
}

int Rewriter::add_value(const std::string& name) {
    GraphIR& g = editable();
    g.values.push_back({unique_name(name), {}});
    return static_cast<int>(g.values.size()) - 1;
}

void Rewriter::redirect(int n, size_t input, int value) {
    if (claimed_[n]) throw std::logic_error("redirect of a node a rewrite claims");
    editable();
    redirects_.emplace_back(n, input, value);
}

int Rewriter::add_constant(const std::string& name, Tensor value) {
    GraphIR& g = editable();
    g.values.push_back({unique_name(name), {}});
    const int id = static_cast<int>(g.values.size()) - 1;
    g.constants[id] = std::move(value);
    return id;
}

std::string Rewriter::unique_name(const std::string& base) {
    const GraphIR& g = edited_ ? *edited_ : *graph_;
    std::unordered_set<std::string> taken;
    for (const ValueIR& v : g.values) taken.insert(v.name);
    for (const NodeIR& n : g.nodes) taken.insert(n.name);
    for (const NodeIR& n : added_) taken.insert(n.name);
    if (!taken.count(base)) return base;
    while (true) {
        std::string name = base + "/" + std::to_string(next_name_++);
        if (!taken.count(name)) return name;
    }
}

namespace {

// The nodes in an order where every value is made before it is read, keeping the given order
// wherever it already is one (a fused node takes the place of the last node it replaces, which
// can come after a reader of one of its earlier outputs).
std::vector<NodeIR> topological(std::vector<NodeIR> nodes, size_t value_count) {
    std::vector<int> producer(value_count, -1);
    for (size_t n = 0; n < nodes.size(); ++n)
        for (int id : nodes[n].outputs) producer[id] = static_cast<int>(n);
    std::vector<int> waiting(nodes.size(), 0);
    std::vector<std::vector<int>> dependents(nodes.size());
    for (size_t n = 0; n < nodes.size(); ++n)
        for (int id : nodes[n].inputs)
            if (id >= 0 && producer[id] >= 0) {
                ++waiting[n];
                dependents[producer[id]].push_back(static_cast<int>(n));
            }
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (size_t n = 0; n < nodes.size(); ++n)
        if (waiting[n] == 0) ready.push(static_cast<int>(n));
    std::vector<NodeIR> sorted;
    while (!ready.empty()) {
        const int n = ready.top();
        ready.pop();
        sorted.push_back(std::move(nodes[n]));
        for (int d : dependents[n])
            if (--waiting[d] == 0) ready.push(d);
    }
    if (sorted.size() != nodes.size()) throw std::logic_error("graph rewrite made a cycle");
    return sorted;
}

// Drops nodes none of whose outputs is read or a graph output (the shape arithmetic that fed a
// fused Reshape), and constants nothing reads any more.
void drop_unread(GraphIR& g) {
    std::vector<int> reads(g.values.size(), 0);
    for (int id : g.outputs) ++reads[id];
    for (const NodeIR& node : g.nodes)
        for (int id : node.inputs)
            if (id >= 0) ++reads[id];
    std::vector<bool> live(g.nodes.size(), true);
    for (size_t n = g.nodes.size(); n-- > 0;) {
        bool read = false;
        for (int id : g.nodes[n].outputs) read = read || reads[id] > 0;
        if (read) continue;
        live[n] = false;
        for (int id : g.nodes[n].inputs)
            if (id >= 0) --reads[id];
    }
    std::vector<NodeIR> kept;
    for (size_t n = 0; n < g.nodes.size(); ++n)
        if (live[n]) kept.push_back(std::move(g.nodes[n]));
    g.nodes = std::move(kept);
    std::erase_if(g.constants, [&](const auto& entry) { return reads[entry.first] == 0; });
}

}  // namespace

void Rewriter::replace_graph(std::shared_ptr<const GraphIR> graph) {
    if (edited_) throw std::logic_error("replace_graph with rewrites pending");
    graph_ = std::move(graph);
    index_ = GraphIndex(*graph_);
    claimed_.assign(graph_->nodes.size(), false);
}

void Rewriter::commit() {
    if (!edited_) return;
    GraphIR& g = *edited_;
    for (const auto& [n, input, value] : redirects_) g.nodes[n].inputs[input] = value;
    redirects_.clear();
    std::vector<NodeIR> nodes;
    for (size_t n = 0; n < g.nodes.size(); ++n) {
        if (!claimed_[n]) nodes.push_back(std::move(g.nodes[n]));
        for (size_t a = 0; a < added_.size(); ++a)
            if (added_at_[a] == static_cast<int>(n)) nodes.push_back(std::move(added_[a]));
    }
    g.nodes = topological(std::move(nodes), g.values.size());
    drop_unread(g);
    validate(g);
    graph_ = std::move(edited_);
    edited_.reset();
    index_ = GraphIndex(*graph_);
    claimed_.assign(graph_->nodes.size(), false);
    added_.clear();
    added_at_.clear();
}

}  // namespace infer::detail
