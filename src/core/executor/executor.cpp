#include "core/executor/executor.hpp"
#include "core/half_convert.hpp"
#include "core/ops/op_schema.hpp"

#include <infer/error.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace infer::detail {

ExecutionContext::DeviceState& ExecutionContext::state_of(const Device& device) {
    for (DeviceState& state : states_)
        if (state.device == device) return state;
    DeviceState state;
    state.device = device;
    state.backend = backend_for(device);
    state.stream = state.backend->create_stream(device.index);
    states_.push_back(std::move(state));
    return states_.back();
}

void ExecutionContext::bind(const std::shared_ptr<const Plan>& plan) {
    // Pointers into states_ must not move while this plan is bound.
    states_.reserve(states_.size() + plan->devices.size());
    devices_.clear();
    for (size_t d = 0; d < plan->devices.size(); ++d) {
        DeviceState& state = state_of(plan->devices[d]);
        if (plan->arena_bytes[d] > 0 && (!state.arena || state.arena->bytes() < plan->arena_bytes[d])) {
            // Work from an earlier run may still use the old arena.
            state.stream->synchronize();
            state.arena.reset();
            state.arena = state.backend->allocate(plan->arena_bytes[d], plan->devices[d].index);
            ++allocations_;
        }
        devices_.push_back(&state);
    }
    plan_ = plan;
    const size_t slot_count = plan_->slots.size();
    slots_.assign(slot_count, Tensor());
    uses_.assign(slot_count, {});
    aliases_.assign(slot_count, {});
    for (size_t i = 0; i < slot_count; ++i) {
        const Slot& slot = plan_->slots[i];
        if (slot.kind == SlotKind::alias) aliases_[plan_->storage_of(static_cast<int>(i))].push_back(static_cast<int>(i));
    }
    bound_.assign(plan_->steps.size(), {});
    for (size_t s = 0; s < plan_->steps.size(); ++s) {
        const auto* step = std::get_if<KernelStep>(&plan_->steps[s]);
        if (!step) continue;
        for (size_t i = 0; i < step->inputs.size(); ++i) {
            bound_[s].inputs.emplace_back();
            if (step->inputs[i] >= 0) uses_[step->inputs[i]].emplace_back(s, false, i);
        }
        for (size_t i = 0; i < step->outputs.size(); ++i) {
            bound_[s].outputs.emplace_back();
            uses_[step->outputs[i]].emplace_back(s, true, i);
        }
    }
    segment_at_.assign(plan_->steps.size(), -1);
    for (size_t i = 0; i < plan_->segments.size(); ++i) segment_at_[plan_->segments[i].first] = static_cast<int>(i);
    bind_segment_states();
    for (size_t i = 0; i < slot_count; ++i) {
        const Slot& slot = plan_->slots[i];
        if (slot.kind == SlotKind::constant) rebind(static_cast<int>(i), slot.constant);
        if (slot.kind == SlotKind::arena)
            rebind(static_cast<int>(i), Tensor(devices_[plan_->device_slot(slot.device)]->arena, slot.dtype,
                                               slot.shape, slot.arena_offset));
    }
}

ExecutionContext::~ExecutionContext() {
    try {
        synchronize_all();
    } catch (...) {  // a failing device must not turn teardown into a crash
    }
}

void ExecutionContext::rebind(int slot, const Tensor& tensor) {
    slots_[slot] = tensor;
    for (const auto& [step, is_output, position] : uses_[slot])
        (is_output ? bound_[step].outputs : bound_[step].inputs)[position] = tensor;
    for (int alias : aliases_[slot]) {
        const Slot& view = plan_->slots[alias];
        slots_[alias] = tensor.defined() ? Tensor(tensor.buffer(), view.dtype, view.shape, tensor.byte_offset())
                                         : Tensor();
        for (const auto& [step, is_output, position] : uses_[alias])
            (is_output ? bound_[step].outputs : bound_[step].inputs)[position] = slots_[alias];
    }
}

void ExecutionContext::release_run_tensors() {
    for (size_t i = 0; i < plan_->slots.size(); ++i) {
        const SlotKind kind = plan_->slots[i].kind;
        if (kind == SlotKind::input || kind == SlotKind::output) rebind(static_cast<int>(i), Tensor());
    }
}

void ExecutionContext::bind_output(size_t output, const Tensor& caller_tensor) {
    const int slot = plan_->output_slots[output];
    const Slot& info = plan_->slots[slot];
    if (info.kind != SlotKind::output) return;  // not computed into a slot of its own: copied after the run
    // A caller's tensor on another device, or strided, is filled by a copy after the run.
    const bool in_place = caller_tensor.defined() && caller_tensor.device() == info.device && caller_tensor.is_contiguous();
    if (!in_place) ++allocations_;
    rebind(slot, in_place ? caller_tensor : Tensor::empty(info.dtype, info.shape, info.device));
}

void ExecutionContext::synchronize_all() {
    for (DeviceState& d : states_) d.stream->synchronize();
}

void* ExecutionContext::workspace(size_t device, size_t bytes) {
    DeviceState& d = *devices_[device];
    if (!d.workspace || d.workspace->bytes() < bytes) {
        // Earlier kernels on this stream may still read the old workspace.
        d.stream->synchronize();
        d.workspace.reset();
        d.workspace = d.backend->allocate(bytes, plan_->devices[device].index);
        ++allocations_;
    }
    return d.workspace->data();
}

void ExecutionContext::run_kernel(size_t index, const KernelStep& step, Stream* stream) {
    const size_t device = plan_->device_slot(step.device);
    BoundStep& b = bound_[index];
    KernelContext ctx(step.signature, b.inputs, b.outputs, stream ? stream : devices_[device]->stream.get(), step.device,
                      [this, device](size_t bytes) { return workspace(device, bytes); });
    step.kernel->run(ctx);
}

void ExecutionContext::bind_segment_states() {
    // Plans the session's cache let go cannot run again: their states only hold memory.
    bool dropped = false;
    for (auto stale = segment_states_.begin(); stale != segment_states_.end();) {
        if (stale->plan.expired()) {
            if (!dropped) synchronize_all();  // their graphs may still be queued
            dropped = true;
            stale = segment_states_.erase(stale);
        } else {
            ++stale;
        }
    }
    auto it = segment_states_.begin();
    while (it != segment_states_.end() && it->plan.lock() != plan_) ++it;
    if (it != segment_states_.end()) {
        segment_states_.splice(segment_states_.begin(), segment_states_, it);
        return;
    }
    segment_states_.push_front({plan_, {}});
    segment_states_.front().states.resize(plan_->segments.size());
    // Dropped states release what they hold (graphs); work using them may still be queued.
    if (segment_states_.size() > plans_with_state_) {
        synchronize_all();
        segment_states_.pop_back();
    }
}

// What a segment sees of the run: its steps as bound in this context.
class ExecutionContext::BoundSegment final : public SegmentRun {
public:
    BoundSegment(ExecutionContext& context, const PlanSegment& segment, std::unique_ptr<SegmentState>& state)
        : context_(context), segment_(segment), state_(state),
          device_(context.plan_->device_slot(step(0).device)) {}

    size_t size() const override { return segment_.last - segment_.first; }
    void run_step(size_t i, Stream* stream) override {
        context_.run_kernel(segment_.first + i, step(i), stream);
        // Here, not after the segment: later steps may reuse this output's memory.
        context_.check_range(segment_.first + i, step(i));
    }
    const std::vector<Tensor>& inputs(size_t i) const override { return context_.bound_[segment_.first + i].inputs; }
    const std::vector<Tensor>& outputs(size_t i) const override { return context_.bound_[segment_.first + i].outputs; }
    Stream& stream() override { return *context_.devices_[device_]->stream; }
    void* reserve_workspace(size_t bytes) override { return context_.workspace(device_, bytes); }
    std::unique_ptr<SegmentState>& state() override { return state_; }

private:
    const KernelStep& step(size_t i) const { return std::get<KernelStep>(context_.plan_->steps[segment_.first + i]); }

    ExecutionContext& context_;
    const PlanSegment& segment_;
    std::unique_ptr<SegmentState>& state_;
    size_t device_;
};

void ExecutionContext::run_segment(size_t index) {
    const PlanSegment& segment = plan_->segments[index];
    BoundSegment run(*this, segment, segment_states_.front().states[index]);
    segment.segment->run(run);
}

// On the CPU the kernel has finished when it returns, and the scan costs one read of the output
// against a kernel that wrote it. Elsewhere the device's backend finds the largest magnitude
// (on the device, for CUDA) once the step's work is done, a wait per step, so only the first
// run of a plan in this context pays for it (see out_of_range()).
void ExecutionContext::check_range(size_t index, const KernelStep& step) {
    if (!step.device.is_cpu() && segment_states_.front().ran) return;
    for (const Tensor& out : bound_[index].outputs) {
        if (!out.defined() || out.dtype() != DType::f16 || out.numel() == 0) continue;
        // Looked up only for steps with an f16 output: every step of every CPU run comes here.
        if (const OpSchema* schema = find_op(step.signature.op); schema && schema->traits.moves_values) return;
        const auto count = static_cast<size_t>(out.numel());
        uint16_t largest = 0;
        if (out.buffer()->host_accessible()) {
            if (!step.device.is_cpu()) devices_[plan_->device_slot(step.device)]->stream->synchronize();
            largest = detail::largest_f16_magnitude_bits(static_cast<const uint16_t*>(out.raw_data()), count);
        } else {
            DeviceState& device = *devices_[plan_->device_slot(step.device)];
            largest = device.backend->largest_f16_magnitude(out.raw_data(), count, out.device().index,
                                                            device.stream.get());
        }
        if (detail::f16_magnitude_out_of_range(largest)) {
            out_of_range_.push_back(step.signature.name);
            return;
        }
    }
}

void ExecutionContext::run_copy(const CopyStep& step) {
    ++copies_;
    const Tensor& src = slots_[step.source];
    Tensor& dst = slots_[step.target];
    const Slot& from = plan_->slots[step.source];
    const Slot& to = plan_->slots[step.target];
    const size_t bytes = to.bytes();
    DeviceState& src_state = *devices_[plan_->device_slot(from.device)];
    DeviceState& dst_state = *devices_[plan_->device_slot(to.device)];
    const bool src_host = src.buffer()->host_accessible();
    const bool dst_host = dst.buffer()->host_accessible();
    if (src_host && dst_host) {
        // Host-side work on either device may still be queued on its stream.
        src_state.stream->synchronize();
        dst_state.backend->copy_from_host(dst.raw_data(), src.raw_data(), bytes, to.device.index,
                                          dst_state.stream.get());
    } else if (src_host) {
        dst_state.backend->copy_from_host(dst.raw_data(), src.raw_data(), bytes, to.device.index,
                                          dst_state.stream.get());
    } else if (dst_host) {
        // The host reads the result next, so this copy must be complete before we go on.
        src_state.backend->copy_to_host(dst.raw_data(), src.raw_data(), bytes, from.device.index,
                                        src_state.stream.get());
        src_state.stream->synchronize();
    } else {
        src_state.stream->synchronize();
        dst.copy_from(src);
    }
}

std::pair<size_t, StepTiming> ExecutionContext::describe_step(const Step& step) const {
    if (const auto* kernel = std::get_if<KernelStep>(&step))
        return {plan_->device_slot(kernel->device),
                StepTiming{kernel->signature.name, kernel->signature.op, kernel->device, StepKind::kernel}};
    const auto& copy = std::get<CopyStep>(step);
    const Device& from = plan_->slots[copy.source].device;
    const Device& to = plan_->slots[copy.target].device;
    // The copy's work goes where run_copy enqueues it: on the accelerator's stream.
    if (from.is_cpu() && !to.is_cpu())
        return {plan_->device_slot(to), StepTiming{"copy", "host to device", to, StepKind::host_to_device}};
    if (!from.is_cpu() && to.is_cpu())
        return {plan_->device_slot(from), StepTiming{"copy", "device to host", from, StepKind::device_to_host}};
    return {plan_->device_slot(from), StepTiming{"copy", "on device", from, StepKind::device_to_device}};
}

struct ExecutionContext::MarkedStep {
    size_t device;
    StepTiming timing;
    std::unique_ptr<TimingMark> start, end;
};

std::vector<Tensor> ExecutionContext::run(const std::shared_ptr<const Plan>& plan, const std::vector<Tensor>& inputs,
                                          const std::vector<Tensor>& bound_outputs, RunProfile* profile) {
    const auto started = std::chrono::steady_clock::now();
    allocations_ = copies_ = 0;
    if (plan != plan_) bind(plan);
    std::vector<MarkedStep> marked;
    if (profile) marked.reserve(plan_->steps.size());
    struct ReleaseOnExit {
        ExecutionContext* self;
        ~ReleaseOnExit() {
            try {
                self->synchronize_all();
            } catch (...) {  // the run's own exception, if any, is the one to report
            }
            self->release_run_tensors();
        }
    } release{this};

    out_of_range_.clear();
    for (size_t i = 0; i < plan_->input_slots.size(); ++i) rebind(plan_->input_slots[i], inputs[i]);
    for (size_t i = 0; i < plan_->output_slots.size(); ++i) bind_output(i, bound_outputs[i]);
    for (size_t s = 0; s < plan_->steps.size(); ++s) {
        // A profiled run times every node, so it runs segments' steps one by one.
        if (!profile && segment_at_[s] >= 0) {
            run_segment(static_cast<size_t>(segment_at_[s]));
            s = plan_->segments[static_cast<size_t>(segment_at_[s])].last - 1;
            continue;
        }
        MarkedStep* mark = nullptr;
        if (profile) {
            auto [device, timing] = describe_step(plan_->steps[s]);
            marked.push_back({device, std::move(timing), devices_[device]->stream->mark(), nullptr});
            mark = &marked.back();
        }
        if (const auto* kernel = std::get_if<KernelStep>(&plan_->steps[s])) {
            run_kernel(s, *kernel);
            check_range(s, *kernel);
        } else {
            run_copy(std::get<CopyStep>(plan_->steps[s]));
        }
        if (mark) mark->end = devices_[mark->device]->stream->mark();
    }
    synchronize_all();
    segment_states_.front().ran = true;
    std::vector<Tensor> outputs;
    for (size_t i = 0; i < plan_->output_slots.size(); ++i) {
        const int slot = plan_->output_slots[i];
        if (bound_outputs[i].defined()) {
            Tensor target = bound_outputs[i];
            if (slots_[slot].buffer() != target.buffer() || slots_[slot].byte_offset() != target.byte_offset()) {
                target.copy_from(slots_[slot]);
                ++copies_;
            }
            outputs.push_back(target);
            continue;
        }
        // Constants stay private to the plan; the caller gets its own copy.
        const bool constant = plan_->slots[slot].kind == SlotKind::constant;
        allocations_ += constant;
        outputs.push_back(constant ? slots_[slot].clone() : slots_[slot]);
    }
    if (profile) fill_profile(*profile, marked, started);
    return outputs;
}

void ExecutionContext::fill_profile(RunProfile& profile, std::vector<MarkedStep>& marked,
                                    std::chrono::steady_clock::time_point started) {
    profile = RunProfile{};
    profile.allocations = allocations_;
    profile.copies = copies_;
    for (MarkedStep& m : marked) {
        m.timing.ms = devices_[m.device]->stream->elapsed_ms(*m.start, *m.end);
        if (m.timing.kind == StepKind::host_to_device) profile.h2d_ms += m.timing.ms;
        if (m.timing.kind == StepKind::device_to_host) profile.d2h_ms += m.timing.ms;
        if (!m.timing.device.is_cpu()) {
            profile.accelerator_busy_ms += m.timing.ms;
            profile.used_accelerator = true;
        }
        profile.steps.push_back(std::move(m.timing));
    }
    profile.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    profile.compute_ms = std::max(0.0, profile.wall_ms - profile.h2d_ms - profile.d2h_ms);
}

}  // namespace infer::detail
