#pragma once
// The IR as passes see it: a graph with its producer/consumer index, and the rewrites a pass
// asks for. A pass matches against the graph as it was when the pass began (the index stays
// valid throughout), replaces chains of nodes with new ones, and the pipeline commits the
// pass's rewrites at once: new nodes are placed in topological order, nodes left without
// readers are dropped, the graph is validated again and the index rebuilt.
#include "core/ir/graph_ir.hpp"

#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace infer::detail {

// Who makes and who reads each value of a graph.
class GraphIndex {
public:
    explicit GraphIndex(const GraphIR& graph);

    // The node that produces `value`, or -1 (graph inputs, constants).
    int producer(int value) const { return value >= 0 ? producer_[value] : -1; }
    // The nodes that read `value`, each once, in graph order.
    const std::vector<int>& readers(int value) const { return readers_[value]; }
    bool is_output(int value) const { return is_output_[value]; }

private:
    std::vector<int> producer_;
    std::vector<std::vector<int>> readers_;
    std::vector<bool> is_output_;
};

class Rewriter {
public:
    // `graph` must be validated; it is copied only when a pass changes something.
    explicit Rewriter(std::shared_ptr<const GraphIR> graph);

    const GraphIR& graph() const { return *graph_; }
    const GraphIndex& index() const { return index_; }

    // Whether node `n` is already part of a rewrite of this pass (matches must not overlap).
    bool claimed(int n) const { return claimed_[n]; }
    // Replaces `nodes` by `replacement` (whose op must be in the op table). Every value the
    // removed nodes made that is read outside them, or is a graph output, must be an output of
    // `replacement`. Returns false, changing nothing, when a node is claimed already.
    bool replace(const std::vector<int>& nodes, NodeIR replacement);
    // The same with several new nodes (in an order where each value is made before it is
    // read), for a fusion that needs a helper node beside the fused one.
    bool replace(const std::vector<int>& nodes, std::vector<NodeIR> replacements);
    // A new computed value (a helper node's output); its id.
    int add_value(const std::string& name);
    // Makes input `input` of node `n`, which no rewrite of this pass claims, read `value`
    // instead when the pass commits: a reader of a value a rewrite removes that can read an
    // equivalent value made before it (a Shape node taking only dimensions both share).
    void redirect(int n, size_t input, int value);
    // A new value for a pass's constant (a folded scale, a reshaped bias); its id.
    int add_constant(const std::string& name, Tensor value);
    // A name no value or node of the graph uses yet, made from `base`.
    std::string unique_name(const std::string& base);

    // A whole new graph from a pass that rewrites everything (the precision lowering); there
    // must be no pending rewrites.
    void replace_graph(std::shared_ptr<const GraphIR> graph);

    // Applies this pass's rewrites (see above); a no-op when there were none.
    void commit();
    std::shared_ptr<const GraphIR> result() const { return graph_; }

private:
    GraphIR& editable();

    std::shared_ptr<const GraphIR> graph_;
    std::shared_ptr<GraphIR> edited_;  // the copy rewrites go to, made by the first rewrite
    GraphIndex index_;
    std::vector<bool> claimed_;
    std::vector<NodeIR> added_;
    std::vector<int> added_at_;  // the position of the last node each addition replaces
    std::vector<std::tuple<int, size_t, int>> redirects_;  // (node, input, value)
    int next_name_ = 0;
};

}  // namespace infer::detail
