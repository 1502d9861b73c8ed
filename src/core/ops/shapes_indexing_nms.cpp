// NonMaxSuppression's selection, shared by its shape function (the number of boxes kept
// decides the output's shape, so the host computes it from the inputs' values) and its CPU
// kernel, which writes the same selection: one algorithm, so the two cannot disagree.
#include "core/ops/shapes_indexing.hpp"

#include <algorithm>
#include <numeric>

namespace infer::detail {

namespace {

struct Box {
    double y1, x1, y2, x2;  // corners, ordered
    double area() const { return (y2 - y1) * (x2 - x1); }
};

Box box_at(const std::vector<double>& boxes, size_t index, bool center_point) {
    const double* b = boxes.data() + index * 4;
    if (center_point) {  // [x_center, y_center, width, height]
        return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
    }
    // [y1, x1, y2, x2], either diagonal's corners
    return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

double intersection_over_union(const Box& a, const Box& b) {
    const double h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
    const double w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
    if (h <= 0 || w <= 0) return 0;
    const double intersection = h * w, united = a.area() + b.area() - intersection;
    return united > 0 ? intersection / united : 0;
}

double scalar_or(const Tensor* t, double fallback) {
    return t && t->numel() > 0 ? t->to_vector<double>().at(0) : fallback;
}

}  // namespace

std::vector<std::array<int64_t, 3>> non_max_suppression(const Tensor& boxes, const Tensor& scores,
                                                        const Tensor* max_per_class, const Tensor* iou_threshold,
                                                        const Tensor* score_threshold, bool center_point,
                                                        const std::string& node) {
    const Shape& bs = boxes.shape();
    const Shape& ss = scores.shape();
    if (bs.rank() != 3 || bs[2] != 4 || ss.rank() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
        throw InvalidArgument("node '" + node + "' (NonMaxSuppression): boxes must be [B, N, 4] and scores [B, C, N], got " +
                              bs.to_string() + " and " + ss.to_string());
    const int64_t keep = static_cast<int64_t>(scalar_or(max_per_class, 0));
    const double iou_limit = scalar_or(iou_threshold, 0);
    const bool filter = score_threshold && score_threshold->numel() > 0;
    const double score_limit = scalar_or(score_threshold, 0);
    const std::vector<double> box_values = boxes.to_vector<double>(), score_values = scores.to_vector<double>();
    const int64_t batches = bs[0], classes = ss[1], count = bs[1];
    std::vector<std::array<int64_t, 3>> selected;
    for (int64_t b = 0; b < batches; ++b)
        for (int64_t c = 0; c < classes; ++c) {
            const double* score = score_values.data() + (b * classes + c) * count;
            std::vector<int64_t> order;
            for (int64_t i = 0; i < count; ++i)
                if (!filter || score[i] > score_limit) order.push_back(i);
            // Highest score first; equal scores keep the boxes' order.
            std::stable_sort(order.begin(), order.end(), [score](int64_t i, int64_t j) { return score[i] > score[j]; });
            std::vector<Box> kept;
            for (int64_t i : order) {
                if (static_cast<int64_t>(kept.size()) >= keep) break;
                const Box candidate = box_at(box_values, static_cast<size_t>(b * count + i), center_point);
                const bool suppressed = std::any_of(kept.begin(), kept.end(), [&](const Box& k) {
                    return intersection_over_union(k, candidate) > iou_limit;
                });
                if (suppressed) continue;
                kept.push_back(candidate);
                selected.push_back({b, c, i});
            }
        }
    return selected;
}

std::vector<Shape> shape_non_max_suppression(const InferenceContext& ctx) {
    const auto optional = [&ctx](size_t i) { return ctx.has_input(i) ? &ctx.value(i) : nullptr; };
    const auto selected = non_max_suppression(ctx.value(0), ctx.value(1), optional(2), optional(3), optional(4),
                                              ctx.attrs().get_int("center_point_box", 0) != 0, ctx.node().name);
    return {Shape({static_cast<int64_t>(selected.size()), 3})};
}

}  // namespace infer::detail
