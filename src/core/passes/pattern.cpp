#include "core/passes/pattern.hpp"

#include "core/ops/op_schema.hpp"

#include <algorithm>
#include <cmath>

namespace infer::detail {

OpId Pattern::op_id_of(const char* name) { return op_id(name); }

int Pattern::through_identity(int value) const {
    while (value >= 0) {
        const int n = index_.producer(value);
        if (n < 0 || g_.nodes[n].id != identity_) break;
        value = g_.nodes[n].inputs[0];
    }
    return value;
}

std::optional<std::vector<std::optional<int64_t>>> Pattern::shape_entries(int value) const {
    if (const auto known = ints(value)) return std::vector<std::optional<int64_t>>(known->begin(), known->end());
    const int n = index_.producer(value);
    if (n < 0 || g_.nodes[n].id != concat_) return std::nullopt;
    std::vector<std::optional<int64_t>> entries;
    for (int part : g_.nodes[n].inputs) {
        if (const auto known = ints(part)) {
            entries.insert(entries.end(), known->begin(), known->end());
            continue;
        }
        const auto part_dims = dims(part);
        if (part_dims && (part_dims->size() != 1 || (*part_dims)[0] != 1)) return std::nullopt;
        entries.push_back(std::nullopt);  // one computed entry (an Unsqueeze of a Gather of a Shape)
    }
    return entries;
}

std::optional<std::vector<int64_t>> Pattern::perm(int n) const {
    if (n < 0 || g_.nodes[n].id != transpose_ || !g_.nodes[n].attributes.has("perm")) return std::nullopt;
    return g_.nodes[n].attributes.get_ints("perm");
}

bool Pattern::read_only_by(int value, const std::vector<int>& nodes) const {
    if (index_.is_output(value)) return false;
    return std::all_of(index_.readers(value).begin(), index_.readers(value).end(),
                       [&](int r) { return std::find(nodes.begin(), nodes.end(), r) != nodes.end(); });
}

std::optional<double> Pattern::scalar(int value) const {
    const Tensor* t = constant(value);
    if (!t || t->numel() != 1 || !is_floating(t->dtype())) return std::nullopt;
    return t->to_vector<double>()[0];
}

bool Pattern::is_scalar(int value, double expected) const {
    const auto got = scalar(value);
    return got && std::abs(*got - expected) <= 1e-4 * std::abs(expected);
}

std::optional<std::vector<int64_t>> Pattern::ints(int value) const {
    const Tensor* t = constant(value);
    if (!t || (t->dtype() != DType::i64 && t->dtype() != DType::i32)) return std::nullopt;
    return t->to_vector<int64_t>();
}

std::optional<std::vector<int64_t>> Pattern::dims(int value) const {
    const auto& shape = type(value).shape;
    if (!shape) return std::nullopt;
    return shape->dims();
}

std::optional<size_t> Pattern::rank(int value) const {
    if (const auto& shape = type(value).shape) return shape->rank();
    const int n = index_.producer(value);
    if (n < 0) return std::nullopt;
    const NodeIR& node = g_.nodes[n];
    if (node.id == gemm_) return 2;
    if (node.id == split_) return rank(node.inputs[0]);
    if (node.id == reshape_) {
        const auto entries = shape_entries(node.inputs[1]);
        if (entries) return entries->size();
    }
    return std::nullopt;
}

std::optional<int64_t> Pattern::last_dim(int value) const {
    if (const auto known = dims(value); known && !known->empty() && known->back() != kDynamic) return known->back();
    const int n = index_.producer(value);
    if (n < 0 || g_.nodes[n].id != split_) return std::nullopt;
    const NodeIR& split = g_.nodes[n];
    const auto input_rank = rank(split.inputs[0]);
    const int64_t axis = split.attributes.get_int("axis", 0);
    if (!input_rank || (axis != -1 && axis != static_cast<int64_t>(*input_rank) - 1)) return std::nullopt;
    const auto sizes = split.inputs.size() > 1 ? ints(split.inputs[1])
                       : split.attributes.has("split") ? std::optional(split.attributes.get_ints("split"))
                                                       : std::nullopt;
    const auto output = std::find(split.outputs.begin(), split.outputs.end(), value) - split.outputs.begin();
    if (!sizes || static_cast<size_t>(output) >= sizes->size()) return std::nullopt;
    return (*sizes)[static_cast<size_t>(output)];
}

std::optional<int> Pattern::other_than_scalar(const NodeIR& node, double expected) const {
    if (node.inputs.size() != 2) return std::nullopt;
    if (is_scalar(node.inputs[1], expected)) return node.inputs[0];
    if (is_scalar(node.inputs[0], expected)) return node.inputs[1];
    return std::nullopt;
}

}  // namespace infer::detail
