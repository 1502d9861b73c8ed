#include "core/passes/fuse_gelu.hpp"

#include <infer/dtype.hpp>

#include <cmath>
#include <optional>
#include <set>
#include <vector>

namespace infer::detail {

namespace {

class GeluMatcher {
public:
    explicit GeluMatcher(const GraphIR& graph)
        : g_(graph), producer_(graph.values.size(), -1), readers_(graph.values.size(), 0),
          last_reader_(graph.values.size(), -1) {
        for (size_t n = 0; n < g_.nodes.size(); ++n) {
            for (int id : g_.nodes[n].outputs) producer_[id] = static_cast<int>(n);
            for (int id : g_.nodes[n].inputs)
                if (id >= 0) {
                    ++readers_[id];
                    last_reader_[id] = static_cast<int>(n);
                }
        }
        for (int id : g_.outputs) ++readers_[id];
    }

    // A matched chain: the nodes it replaces (the last one last), the GELU's input and output.
    struct Chain {
        std::vector<int> nodes;
        int input = -1;
        int output = -1;
    };

    // The chain whose Erf is node `erf`, if the pattern holds around it.
    std::optional<Chain> match(int erf) const {
        const NodeIR& e = g_.nodes[erf];
        if (e.op != "Erf") return std::nullopt;
        // x / sqrt(2) or x * (1 / sqrt(2)), read by the Erf alone.
        const int scaled = e.inputs[0];
        const int scale_node = sole_reader_producer(scaled);
        if (scale_node < 0) return std::nullopt;
        const NodeIR& s = g_.nodes[scale_node];
        std::optional<int> x;
        if (s.op == "Div" && is_constant(s.inputs[1], std::sqrt(2.0))) x = s.inputs[0];
        if (s.op == "Mul") x = other_than_constant(s, 1.0 / std::sqrt(2.0));
        if (!x || !is_float(*x)) return std::nullopt;
        // 1 + erf(...)
        const int add_node = sole_reader(e.outputs[0]);
        if (add_node < 0 || g_.nodes[add_node].op != "Add" || !other_than_constant(g_.nodes[add_node], 1.0))
            return std::nullopt;
        const int one_plus = g_.nodes[add_node].outputs[0];
        // Then the Muls that bring in x and 0.5.
        const int first = sole_reader(one_plus);
        if (first < 0 || g_.nodes[first].op != "Mul") return std::nullopt;
        const NodeIR& m1 = g_.nodes[first];
        const int with_first = other_input(m1, one_plus);
        // (x * 0.5) * (1 + erf): the halving is a Mul of its own on x, read only here.
        const int half_node = sole_reader_producer(with_first);
        if (half_node >= 0 && g_.nodes[half_node].op == "Mul" && other_than_constant(g_.nodes[half_node], 0.5) == *x)
            return Chain{{scale_node, erf, add_node, half_node, first}, *x, m1.outputs[0]};
        // ((1 + erf) * x) * 0.5 or ((1 + erf) * 0.5) * x
        const int second = sole_reader(m1.outputs[0]);
        if (second < 0 || g_.nodes[second].op != "Mul") return std::nullopt;
        const int with_second = other_input(g_.nodes[second], m1.outputs[0]);
        if ((with_first == *x && is_constant(with_second, 0.5)) || (is_constant(with_first, 0.5) && with_second == *x))
            return Chain{{scale_node, erf, add_node, first, second}, *x, g_.nodes[second].outputs[0]};
        return std::nullopt;
    }

private:
    bool is_float(int id) const {
        const DType t = g_.values[id].type.dtype;
        return t == DType::f32 || t == DType::f16 || t == DType::bf16;
    }
    // The node that reads `id`, when exactly one node does and it is not a graph output.
    int sole_reader(int id) const { return readers_[id] == 1 ? last_reader_[id] : -1; }
    // The node that makes `id`, when `id` is read once (by the chain).
    int sole_reader_producer(int id) const { return id >= 0 && readers_[id] == 1 ? producer_[id] : -1; }
    bool is_constant(int id, double value) const {
        const auto it = g_.constants.find(id);
        if (it == g_.constants.end() || it->second.numel() != 1 || !is_floating(it->second.dtype())) return false;
        const double got = it->second.to_vector<double>()[0];
        return std::abs(got - value) <= 1e-4 * std::abs(value);
    }
    static int other_input(const NodeIR& node, int id) { return node.inputs[0] == id ? node.inputs[1] : node.inputs[0]; }
    // For a binary node with one input the constant `value`, the other input.
    std::optional<int> other_than_constant(const NodeIR& node, double value) const {
        if (node.inputs.size() != 2) return std::nullopt;
        if (is_constant(node.inputs[1], value)) return node.inputs[0];
        if (is_constant(node.inputs[0], value)) return node.inputs[1];
        return std::nullopt;
    }

    const GraphIR& g_;
    std::vector<int> producer_;
    std::vector<int> readers_;      // nodes reading each value, plus 1 if it is a graph output
    std::vector<int> last_reader_;  // the last node reading each value (-1: none)
};

}  // namespace

std::shared_ptr<const GraphIR> fuse_gelu(const GraphIR& graph) {
    const GeluMatcher matcher(graph);
    std::set<int> removed;
    std::vector<std::pair<int, GeluMatcher::Chain>> chains;  // by the position of their last node
    for (size_t n = 0; n < graph.nodes.size(); ++n)
        if (auto chain = matcher.match(static_cast<int>(n))) {
            removed.insert(chain->nodes.begin(), chain->nodes.end());
            chains.emplace_back(chain->nodes.back(), *chain);
        }
    if (chains.empty()) return std::shared_ptr<const GraphIR>(std::shared_ptr<void>(), &graph);
    auto fused = std::make_shared<GraphIR>(graph);
    fused->nodes.clear();
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
        if (!removed.count(static_cast<int>(n))) {
            fused->nodes.push_back(graph.nodes[n]);
            continue;
        }
        for (const auto& [last, chain] : chains)
            if (last == static_cast<int>(n))  // the GELU takes the place of its last node
                fused->nodes.push_back({"Gelu", graph.nodes[n].name, {chain.input}, {chain.output}, {}});
    }
    validate(*fused);
    return fused;
}

}  // namespace infer::detail
