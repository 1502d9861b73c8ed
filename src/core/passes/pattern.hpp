#pragma once
// The questions a fusion asks while it walks a chain of nodes: which node makes this value and
// is it of this op, is this input a constant with this value, is this value read by the chain
// alone. Every answer comes from the rewriter's index; nodes another rewrite of the same pass
// has claimed never match, so matches cannot overlap.
#include "core/passes/rewriter.hpp"

#include <optional>
#include <vector>

namespace infer::detail {

class Pattern {
public:
    explicit Pattern(const Rewriter& rewriter)
        : g_(rewriter.graph()), index_(rewriter.index()), rewriter_(rewriter) {}

    const GraphIR& graph() const { return g_; }
    const NodeIR& node(int n) const { return g_.nodes[n]; }
    const TensorType& type(int value) const { return g_.values[value].type; }
    bool is(int n, OpId op) const { return n >= 0 && g_.nodes[n].id == op && !rewriter_.claimed(n); }

    // The node making `value` when it is an unclaimed `op`, else -1.
    int producer(int value, OpId op) const {
        const int n = index_.producer(value);
        return is(n, op) ? n : -1;
    }
    // The same, when `value` is also read by one node only and is no graph output: the chain
    // can absorb its producer.
    int sole_producer(int value, OpId op) const { return read_once(value) ? producer(value, op) : -1; }
    // The one node reading `value` when it is an unclaimed `op` and `value` is no graph output.
    int sole_reader(int value, OpId op) const {
        return read_once(value) && is(index_.readers(value)[0], op) ? index_.readers(value)[0] : -1;
    }
    // The nodes reading `value`, each once.
    const std::vector<int>& readers(int value) const { return index_.readers(value); }
    // Whether `value` is read by nodes only, not a graph output.
    bool read_by_nodes_only(int value) const { return value >= 0 && !index_.is_output(value); }
    bool read_once(int value) const {
        return value >= 0 && !index_.is_output(value) && index_.readers(value).size() == 1;
    }
    // Whether every reader of `value` is one of `nodes` and it is no graph output.
    bool read_only_by(int value, const std::vector<int>& nodes) const;

    // `value` with the Identity nodes that pass it on (weights shared between layers) skipped.
    int through_identity(int value) const;
    // The value of a constant, seen through Identity nodes; nullptr for computed values.
    const Tensor* constant(int value) const {
        value = through_identity(value);
        const auto it = value >= 0 ? g_.constants.find(value) : g_.constants.end();
        return it == g_.constants.end() ? nullptr : &it->second;
    }
    // A float constant with one element (of any shape), as a double.
    std::optional<double> scalar(int value) const;
    // A float constant with one element within 1e-4 relative of `expected`.
    bool is_scalar(int value, double expected) const;
    // Integer constant values (i64/i32), or nothing.
    std::optional<std::vector<int64_t>> ints(int value) const;
    // The entries of a shape-carrying value (a Reshape's target): a constant, or a Concat of
    // one-element parts, each known when it is constant (the dimensions PyTorch computes from
    // Shape nodes are not). Nothing when neither.
    std::optional<std::vector<std::optional<int64_t>>> shape_entries(int value) const;
    // The known static dims of `value`, or nothing.
    std::optional<std::vector<int64_t>> dims(int value) const;
    // The rank of `value`: from its type, else from what made it when shape inference could
    // not tell (a Reshape to a target of known length, a Split or Gemm). GPT-2's export splits
    // Q, K and V from a Reshape whose target is computed, which hides their shapes but not
    // their ranks.
    std::optional<size_t> rank(int value) const;
    // The size of the last axis of `value`: from its type, else from a Split along that axis
    // with constant sizes. GPT-2's export writes its head split as view(B, S, -1, D), so the
    // number of heads follows from this width.
    std::optional<int64_t> last_dim(int value) const;

    // For a two-input node one of whose inputs is the constant `expected`, the other input.
    std::optional<int> other_than_scalar(const NodeIR& node, double expected) const;
    // Transpose's perm attribute, or nothing for other nodes.
    std::optional<std::vector<int64_t>> perm(int n) const;
    // For a two-input node reading `value`, its other input.
    static int other_input(const NodeIR& node, int value) {
        return node.inputs[0] == value ? node.inputs[1] : node.inputs[0];
    }

private:
    OpId identity_ = op_id_of("Identity"), concat_ = op_id_of("Concat"), transpose_ = op_id_of("Transpose");
    OpId reshape_ = op_id_of("Reshape"), split_ = op_id_of("Split"), gemm_ = op_id_of("Gemm");
    static OpId op_id_of(const char* name);

    const GraphIR& g_;
    const GraphIndex& index_;
    const Rewriter& rewriter_;
};

}  // namespace infer::detail
