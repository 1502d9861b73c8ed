// Offsets for intermediate tensors from their lifetimes: largest first, each at the lowest
// offset that does not overlap a slot whose lifetime meets its own ("greedy by size").
#include "core/planner/plan.hpp"

#include <algorithm>

namespace infer::detail {

namespace {
constexpr size_t kAlignment = 256;  // enough for AVX-512 loads and CUDA's vectorized access
size_t align_up(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

struct Lifetime {
    int first = -1, last = -1;
};

std::vector<Lifetime> lifetimes(const Plan& plan) {
    std::vector<Lifetime> life(plan.slots.size());
    const auto touch = [&](int slot, int step) {
        if (slot < 0) return;
        Lifetime& l = life[slot];
        if (l.first < 0) l.first = step;
        l.last = std::max(l.last, step);
    };
    for (int s = 0; s < static_cast<int>(plan.steps.size()); ++s) {
        std::visit(
            [&](const auto& step) {
                using T = std::decay_t<decltype(step)>;
                if constexpr (std::is_same_v<T, KernelStep>) {
                    for (int slot : step.inputs) touch(slot, s);
                    for (int slot : step.outputs) touch(slot, s);
                } else {
                    touch(step.source, s);
                    touch(step.target, s);
                }
            },
            plan.steps[s]);
    }
    return life;
}
}  // namespace

void plan_memory(Plan& plan) {
    const std::vector<Lifetime> life = lifetimes(plan);
    plan.arena_bytes.assign(plan.devices.size(), 0);
    for (size_t d = 0; d < plan.devices.size(); ++d) {
        std::vector<int> slots;
        for (int i = 0; i < static_cast<int>(plan.slots.size()); ++i)
            if (plan.slots[i].kind == SlotKind::arena && plan.slots[i].device == plan.devices[d])
                slots.push_back(i);
        std::stable_sort(slots.begin(), slots.end(), [&](int a, int b) {
            return plan.slots[a].bytes() > plan.slots[b].bytes();
        });
        std::vector<int> placed;
        size_t arena = 0;
        for (int slot : slots) {
            const size_t size = align_up(std::max<size_t>(plan.slots[slot].bytes(), 1));
            // Busy ranges of placed slots whose lifetimes overlap this one, by offset.
            std::vector<std::pair<size_t, size_t>> busy;
            for (int other : placed) {
                const bool overlap = life[other].first <= life[slot].last &&
                                     life[slot].first <= life[other].last;
                if (overlap)
                    busy.emplace_back(plan.slots[other].arena_offset,
                                      plan.slots[other].arena_offset +
                                          align_up(std::max<size_t>(plan.slots[other].bytes(), 1)));
            }
            std::sort(busy.begin(), busy.end());
            size_t offset = 0;
            for (const auto& [begin, end] : busy) {
                if (offset + size <= begin) break;
                offset = std::max(offset, end);
            }
            plan.slots[slot].arena_offset = offset;
            arena = std::max(arena, offset + size);
            placed.push_back(slot);
        }
        plan.arena_bytes[d] = arena;
    }
}

}  // namespace infer::detail
