// Memory for intermediate tensors. First, outputs of ops that may run in place take over an
// input that dies at that step (same device, dtype and size). Then offsets from lifetimes, an
// alias keeping its storage alive: largest first, each at the lowest offset that does not overlap
// a slot whose lifetime meets its own ("greedy by size").
#include "core/planner/plan.hpp"

#include <algorithm>

namespace infer::detail {

namespace {
constexpr size_t kAlignment = 256;  // enough for AVX-512 loads and CUDA's vectorized access
size_t align_up(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

struct Lifetime {
    int first = -1, last = -1;
};

// Per storage slot (Plan::storage_of), the steps from its first to its last use by any alias.
std::vector<Lifetime> lifetimes(const Plan& plan) {
    std::vector<Lifetime> life(plan.slots.size());
    const auto touch = [&](int slot, int step) {
        if (slot < 0) return;
        Lifetime& l = life[plan.storage_of(slot)];
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
bool is_graph_output(const Plan& plan, int storage) {
    for (int slot : plan.output_slots)
        if (plan.storage_of(slot) == storage) return true;
    return false;
}

// Output 0 of a step that may run in place becomes an alias of an input whose storage is an
// arena slot used for the last time at this step.
void run_in_place(Plan& plan, std::vector<Lifetime>& life) {
    for (int s = 0; s < static_cast<int>(plan.steps.size()); ++s) {
        const auto* step = std::get_if<KernelStep>(&plan.steps[s]);
        if (!step || step->in_place_inputs == 0 || step->outputs.empty()) continue;
        const int out = step->outputs[0];
        Slot& target = plan.slots[out];
        if (target.kind != SlotKind::arena) continue;
        for (size_t i = 0; i < step->inputs.size() && i < 8; ++i) {
            if (!((step->in_place_inputs >> i) & 1u) || step->inputs[i] < 0) continue;
            const int storage = plan.storage_of(step->inputs[i]);
            const Slot& source = plan.slots[storage];
            if (source.kind != SlotKind::arena || source.device != target.device ||
                source.dtype != target.dtype || source.bytes() != target.bytes() || life[storage].last != s ||
                is_graph_output(plan, storage))
                continue;
            target.kind = SlotKind::alias;
            target.alias_of = storage;
            life[storage].last = std::max(life[storage].last, life[out].last);
            life[out] = {};
            break;
        }
    }
}
}  // namespace

void plan_memory(Plan& plan) {
    std::vector<Lifetime> life = lifetimes(plan);
    run_in_place(plan, life);
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
