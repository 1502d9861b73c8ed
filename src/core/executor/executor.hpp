#pragma once
// Runs a Plan. An ExecutionContext holds what one run in flight needs: arenas, streams,
// workspaces and the tensors bound to every slot. Contexts are pooled per plan, so concurrent
// runs each get their own and a steady-state run allocates only its outputs.
#include "core/planner/plan.hpp"

#include <infer/batch.hpp>
#include <infer/profile.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace infer::detail {

class ExecutionContext {
public:
    explicit ExecutionContext(std::shared_ptr<const Plan> plan);
    ~ExecutionContext();

    // `inputs` are in graph-input order, already validated against the plan's signature. With a
    // profile, every step is bracketed by timing marks on its stream and the profile filled in.
    std::vector<Tensor> run(const std::vector<Tensor>& inputs, RunProfile* profile = nullptr);

    // The nodes of the latest run whose f16 results on the CPU left f16's range: an infinity or
    // NaN (overflow), or a tensor whose largest value is below 2^-14, f16's smallest normal
    // (underflow: fewer significant bits than f16 has, down to zeros). Empty when all was well.
    const std::vector<std::string>& out_of_range() const { return out_of_range_; }

private:
    struct DeviceState {
        std::shared_ptr<Backend> backend;
        std::shared_ptr<Buffer> arena;
        std::unique_ptr<Stream> stream;
        std::shared_ptr<Buffer> workspace;
    };
    struct BoundStep {
        std::vector<Tensor> inputs, outputs;
    };

    struct MarkedStep;
    void run_kernel(size_t index, const KernelStep& step);
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
    std::vector<DeviceState> devices_;
    std::vector<Tensor> slots_;
    std::vector<BoundStep> bound_;
    // Where each input/output slot appears in bound_: (step, is_output, position).
    std::vector<std::vector<std::tuple<size_t, bool, size_t>>> uses_;
    std::vector<std::string> out_of_range_;
};

}  // namespace infer::detail
