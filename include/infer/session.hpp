#pragma once
// A Session is a Graph compiled for a device: every node placed on a backend (or on the CPU
// when that backend lacks a kernel), copies inserted where tensors cross devices, weights
// uploaded once, and a memory plan so that a steady-state run allocates nothing but its outputs.
// Plans are made per set of input shapes and cached. `run` is thread-safe.
#include <infer/batch.hpp>
#include <infer/device.hpp>
#include <infer/graph.hpp>
#include <infer/memory.hpp>
#include <infer/profile.hpp>

#include <future>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace infer {

enum class Precision { f32, f16, bf16, int8 };
class Calibration;
std::string_view precision_name(Precision precision);
Precision parse_precision(std::string_view name);  // throws InvalidArgument

struct SessionOptions {
    Device device = Device::CPU;         // where nodes run when its backend supports them
    // f16/bf16: matrix ops and their weights in that type (converted once), sensitive ops
    // (reductions, softmax, normalization, pow/exp/log/sqrt/erf) in f32, inputs and outputs
    // still f32 at the interface.
    // int8: products by a weight (MatMul, with its bias and activation) in 8-bit integers, the
    // weight quantized once per output column, activations per row at run time (dynamic
    // quantization, or static with `calibration`); every other op in f32. CPU only so far.
    Precision precision = Precision::f32;
    int threads = 0;                     // CPU threads for kernels; 0 = all cores
    bool strict = false;                 // fail (Unsupported) rather than fall back to the CPU
    // f32 matrix products (MatMul, Gemm, Conv) on tensor cores in TF32: inputs rounded to a
    // 10-bit mantissa, f32 accumulation, about 1e-3 relative error. Opt-in because it changes
    // results; devices without TF32 (the CPU) ignore it.
    bool allow_tf32 = false;
    // Plans (one per set of input shapes) kept for reuse; beyond this many, the least recently
    // used is dropped, so memory does not grow with the variety of request shapes. Plans of
    // different shapes share each device's working memory, which grows to the largest.
    size_t max_cached_plans = 16;
    // Backends may capture runs of nodes into device graphs replayed with one launch (CUDA
    // graphs: the launch overhead of a small batch drops from microseconds per node to about
    // one launch per run). The first run of each plan runs node by node; capture happens on
    // the second. Off: every run launches node by node.
    bool graph_capture = true;
    // run_async: runs waiting at most (beyond, run_async throws Overloaded), and the worker
    // threads that run them (started with the first asynchronous run).
    size_t max_queued_async_runs = 64;
    size_t async_workers = 2;
    // precision int8: activation ranges from calibrate() (calibration.hpp) make the quantization
    // of the products' inputs static; null: dynamic, per row at run time.
    std::shared_ptr<const Calibration> calibration;
};

// Where each node of a plan runs, and why when it is not the requested device.
struct PlacementEntry {
    std::string node;
    std::string op;
    Device device;
    std::string reason;  // empty when placed on the requested device
};

struct PlacementReport {
    Device requested;
    std::vector<PlacementEntry> nodes;  // nodes folded into constants are not listed
    size_t copies = 0;                  // tensors copied between devices per run
    // f16 sessions: nodes whose f16 results a run found out of f16's range (overflow to
    // infinity, or values below 2^-14 losing their precision down to zero), computed in f32
    // from then on together with everything downstream of them. The run that found them was
    // repeated, so no caller saw those results.
    std::vector<std::string> kept_f32;
    size_t fallbacks() const;
    std::string to_string() const;
};

class Session {
public:
    // Throws DeviceError for an unknown, unbuilt or absent device; Unsupported for options the
    // device cannot honour. With fully static input shapes the plan is made here, so strict
    // mode fails at construction.
    explicit Session(Graph graph, SessionOptions options = {});
    ~Session();
    Session(Session&&) noexcept;
    Session& operator=(Session&&) noexcept;

    // Runs the graph. Inputs may be on any device; outputs stay on the device that made them.
    // Throws InvalidArgument naming the input for missing, unknown, mistyped or misshaped
    // inputs; the session stays usable.
    Batch run(const Batch& inputs) const;
    // The same, writing into the caller's tensors (I/O binding): each tensor in `outputs` whose
    // name is a graph output must have that output's dtype and shape for these inputs, and is
    // written in place when it lives on the device that computes the output (no allocation, no
    // copy), else filled by one copy. Outputs not in `outputs` are allocated and added to it.
    // Throws InvalidArgument for an unknown name or a mismatched tensor, before running.
    void run(const Batch& inputs, Batch& outputs) const;
    void run(const Batch& inputs, Batch& outputs, RunProfile& profile) const;
    // The same as run(inputs), timing every step on its device's clock (see profile.hpp);
    // slower than run().
    Batch run(const Batch& inputs, RunProfile& profile) const;
    // Queues a run and returns at once; one of the session's worker threads runs it (planning,
    // copies, kernels and the final synchronization), so the calling thread stays free. The
    // inputs are shared, not copied: leave them unchanged until the future is ready. The
    // future gives the outputs, or the run's error (InvalidArgument, ...). Throws Overloaded
    // when max_queued_async_runs runs are already waiting. Destroying the session cancels runs
    // still waiting (their futures throw Cancelled) and waits for those being run.
    std::future<Batch> run_async(Batch inputs) const;

    const SessionOptions& options() const;
    const Graph& graph() const;
    // Op name → node count of the graph as the session plans it: after the fusion passes (for
    // this device) and the f16/bf16 lowering, so fused ops (Attention, FusedMatMul, ...) show.
    std::map<std::string, size_t> op_histogram() const;
    // The placement of the most recently made plan (empty before the first plan).
    PlacementReport placement() const;
    // The memory estimate of the most recently made plan, on the requested device. A plan that
    // would not fit an accelerator fails before uploading anything, with OutOfMemory giving it.
    MemoryEstimate memory() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace infer
