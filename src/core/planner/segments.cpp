// Segments: after the steps are compiled, each backend is offered the maximal runs of
// consecutive kernel steps on one of its devices and claims what it can run as one unit.
// A copy step, or a step on another device, ends a run: a segment's work is ordered on one
// stream, and a copy in the middle may need the host.
#include "core/planner/plan.hpp"

#include <infer/error.hpp>

#include <string>

namespace infer::detail {

namespace {

// A single node gains nothing from being a segment.
constexpr size_t kShortestOffer = 2;

void offer_run(Plan& plan, size_t first, size_t last, const SessionOptions& options) {
    if (last - first < kShortestOffer) return;
    const auto& head = std::get<KernelStep>(plan.steps[first]);
    SegmentOffer offer;
    offer.device = head.device;
    offer.allow_capture = options.graph_capture;
    for (size_t s = first; s < last; ++s) {
        const auto& step = std::get<KernelStep>(plan.steps[s]);
        offer.nodes.push_back(&step.signature);
        offer.kernels.push_back(step.kernel.get());
    }
    size_t end_of_last = 0;
    for (SegmentClaim& claim : head.backend->compile_segments(offer)) {
        if (claim.first < end_of_last || claim.last <= claim.first || claim.last > offer.nodes.size() || !claim.segment)
            throw DeviceError("backend '" + head.backend->name() + "' claimed segment [" + std::to_string(claim.first) +
                               ", " + std::to_string(claim.last) + ") of an offer of " +
                               std::to_string(offer.nodes.size()) + " steps: claims must be in order, non-empty and " +
                               "not overlapping");
        end_of_last = claim.last;
        plan.segments.push_back({first + claim.first, first + claim.last, std::move(claim.segment)});
    }
}

}  // namespace

void claim_segments(Plan& plan, const SessionOptions& options) {
    size_t first = 0;
    const auto same_run = [&](size_t s) {
        const auto* step = std::get_if<KernelStep>(&plan.steps[s]);
        const auto* head = std::get_if<KernelStep>(&plan.steps[first]);
        return step && head && step->device == head->device && step->backend == head->backend;
    };
    for (size_t s = 0; s < plan.steps.size(); ++s) {
        if (same_run(s)) continue;
        if (std::holds_alternative<KernelStep>(plan.steps[first])) offer_run(plan, first, s, options);
        first = s;
    }
    if (first < plan.steps.size() && std::holds_alternative<KernelStep>(plan.steps[first]))
        offer_run(plan, first, plan.steps.size(), options);
}

}  // namespace infer::detail
