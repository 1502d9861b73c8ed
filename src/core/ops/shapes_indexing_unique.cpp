// Unique's selection, shared by its shape function (how many distinct elements or slices
// there are decides the outputs' shapes, so the host finds them from the input's value) and
// its CPU kernel, which gathers the same selection.
#include "core/ops/shapes_indexing.hpp"

#include <algorithm>
#include <map>

namespace infer::detail {

UniqueSelection unique_selection(const Tensor& x, std::optional<int64_t> axis, bool sorted, const std::string& node) {
    const Shape& shape = x.shape();
    const std::vector<double> values = x.to_vector<double>();
    // Slices along `axis` (or single elements without one): count of them, and each one's
    // elements in order, as keys to compare.
    int64_t outer = 1, count = x.numel(), inner = 1;
    if (axis) {
        const auto rank = static_cast<int64_t>(shape.rank());
        if (*axis < -rank || *axis >= rank)
            throw InvalidArgument("node '" + node + "' (Unique): axis " + std::to_string(*axis) + " is out of range for " +
                                  shape.to_string());
        const auto a = static_cast<size_t>(*axis < 0 ? *axis + rank : *axis);
        outer = 1;
        for (size_t i = 0; i < a; ++i) outer *= shape[i];
        count = shape[a];
        inner = x.numel() / std::max<int64_t>(outer * count, 1);
    }
    const auto slice = [&](int64_t s) {
        std::vector<double> key;
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < inner; ++i) key.push_back(values[static_cast<size_t>((o * count + s) * inner + i)]);
        return key;
    };
    std::map<std::vector<double>, int64_t> first_of;  // key → position in `first`
    UniqueSelection u;
    std::vector<std::vector<double>> keys;
    for (int64_t s = 0; s < count; ++s) {
        auto key = slice(s);
        auto [it, added] = first_of.emplace(key, static_cast<int64_t>(u.first.size()));
        if (added) {
            u.first.push_back(s);
            u.counts.push_back(0);
            keys.push_back(std::move(key));
        }
        u.inverse.push_back(it->second);
        ++u.counts[static_cast<size_t>(it->second)];
    }
    if (sorted) {  // reorder by key, and renumber the inverse indices to match
        std::vector<int64_t> order(u.first.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
        std::sort(order.begin(), order.end(), [&keys](int64_t a, int64_t b) { return keys[a] < keys[b]; });
        std::vector<int64_t> rank(order.size()), first, counts;
        for (size_t i = 0; i < order.size(); ++i) {
            rank[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
            first.push_back(u.first[static_cast<size_t>(order[i])]);
            counts.push_back(u.counts[static_cast<size_t>(order[i])]);
        }
        for (int64_t& v : u.inverse) v = rank[static_cast<size_t>(v)];
        u.first = std::move(first);
        u.counts = std::move(counts);
    }
    u.outer = outer;
    u.inner = inner;
    u.count = count;
    return u;
}

std::vector<Shape> shape_unique(const InferenceContext& ctx) {
    const std::optional<int64_t> axis = ctx.attrs().has("axis") ? std::optional(ctx.attrs().get_int("axis")) : std::nullopt;
    const UniqueSelection u = unique_selection(ctx.value(0), axis, ctx.attrs().get_int("sorted", 1) != 0, ctx.node().name);
    const auto unique = static_cast<int64_t>(u.first.size());
    Shape y({unique});
    if (axis) {
        std::vector<int64_t> dims = ctx.shape(0).dims();
        const auto rank = static_cast<int64_t>(dims.size());
        dims[static_cast<size_t>(*axis < 0 ? *axis + rank : *axis)] = unique;
        y = Shape(dims);
    }
    std::vector<Shape> shapes{y, Shape({unique}), Shape({u.count}), Shape({unique})};
    shapes.resize(ctx.node().outputs.size());
    return shapes;
}

}  // namespace infer::detail
