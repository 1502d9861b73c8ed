#pragma once
#include <algorithm>
// Runs Plans. An ExecutionContext holds what one run in flight needs: per device a stream, an
// arena and a workspace, and the tensors bound to every slot of the plan it ran last. A session
// pools its contexts, so concurrent runs each get their own; plans of different input shapes
// share a context's arenas, which grow to the largest plan run on them. A steady-state run
// allocates only the outputs the caller did not bind.
#include "core/planner/plan.hpp"

#include <infer/batch.hpp>
#include <infer/profile.hpp>

#include <chrono>
#include <list>
#include <memory>
#include <string>
#include <vector>

namespace infer::detail {

class ExecutionContext {
public:
    // Keeps the segment states (captured graphs, and whether a plan ran here before) of at most
    // `plans_with_state` plans, the most recently run; the session passes its plan cache's
    // capacity, so that a service cycling through all its cached shapes never loses them.
    explicit ExecutionContext(size_t plans_with_state = 4) : plans_with_state_(std::max<size_t>(plans_with_state, 1)) {}
    ~ExecutionContext();
    ExecutionContext(const ExecutionContext&) = delete;
    ExecutionContext& operator=(const ExecutionContext&) = delete;

    // `inputs` are in graph-input order, already validated against the plan's signature.
    // `bound_outputs` has one entry per graph output: a caller's tensor of the output's dtype and
    // shape to write into (on any device), or an undefined tensor for "allocate one". With a
    // profile, every step is bracketed by timing marks on its stream and the profile filled in.
    std::vector<Tensor> run(const std::shared_ptr<const Plan>& plan, const std::vector<Tensor>& inputs,
                            const std::vector<Tensor>& bound_outputs, RunProfile* profile = nullptr);

    // The nodes of the latest run whose f16 results left f16's range: an infinity or NaN
    // (overflow), or a tensor whose largest value is below 2^-14, f16's smallest normal
    // (underflow: fewer significant bits than f16 has, down to zeros). Empty when all was well.
    // Results on the CPU are checked on every run. Results on other devices are checked on the
    // first run of each plan in a context, which copies each f16 result to the host as it is
    // made (that run goes node by node in any case, and later runs replay the same graph); the
    // causes seen in practice (weights and activations that sit below f16's range) show there.
    const std::vector<std::string>& out_of_range() const { return out_of_range_; }

private:
    struct DeviceState {
        Device device;
        std::shared_ptr<Backend> backend;
        std::shared_ptr<Buffer> arena;
        std::unique_ptr<Stream> stream;
        std::shared_ptr<Buffer> workspace;
    };
    struct BoundStep {
        std::vector<Tensor> inputs, outputs;
    };

    struct MarkedStep;
    class BoundSegment;
    // Segment states of one plan in this context (captured graphs), per Plan::segments entry.
    struct SegmentStates {
        std::weak_ptr<const Plan> plan;
        std::vector<std::unique_ptr<SegmentState>> states;
        bool ran = false;  // the plan has run in this context before
    };
    // The states of the plans run here most recently, at most plans_with_state_ of them, and
    // none of a plan the session has dropped. Losing a plan's states costs its next run a
    // node-by-node warm-up, f16 range checks that wait for every node (about 20 ms for a
    // MiniLM batch on an H200, against 1.5 ms), and a new graph capture.
    size_t plans_with_state_;
    void bind_segment_states();
    void run_segment(size_t segment);
    // Makes `plan` the bound one: streams and arenas for its devices (grown when too small),
    // and every slot's tensor.
    void bind(const std::shared_ptr<const Plan>& plan);
    DeviceState& state_of(const Device& device);
    void bind_output(size_t output, const Tensor& caller_tensor);
    // With a stream, the kernel's work goes there instead of the device's stream of this run.
    void run_kernel(size_t index, const KernelStep& step, Stream* stream = nullptr);
    void run_copy(const CopyStep& step);
    void check_range(size_t index, const KernelStep& step);
    // Which stream a step's work goes to, and what kind of step it is, for profiling.
    std::pair<size_t, StepTiming> describe_step(const Step& step) const;
    void fill_profile(RunProfile& profile, std::vector<MarkedStep>& marked,
                      std::chrono::steady_clock::time_point started);
    void* workspace(size_t device, size_t bytes);
    void rebind(int slot, const Tensor& tensor);
    void release_run_tensors();
    void synchronize_all();

    std::shared_ptr<const Plan> plan_;
    std::vector<DeviceState> states_;   // every device this context has run on
    std::vector<DeviceState*> devices_;  // per entry of plan_->devices
    std::vector<Tensor> slots_;
    std::vector<BoundStep> bound_;
    std::vector<int> segment_at_;  // per step: the index of the segment it starts, else -1
    std::list<SegmentStates> segment_states_;  // front: the bound plan's
    // Where each slot appears in bound_ (step, is_output, position), and the aliases whose
    // memory it holds.
    std::vector<std::vector<std::tuple<size_t, bool, size_t>>> uses_;
    std::vector<std::vector<int>> aliases_;
    size_t allocations_ = 0, copies_ = 0;  // in the run under way, for its profile
    std::vector<std::string> out_of_range_;
};

}  // namespace infer::detail
