// How a captured segment runs, per execution context:
//  - its first run goes node by node: it warms up what kernels create lazily (cuBLAS handles,
//    lazily loaded modules), none of which may happen inside a capture;
//  - the second captures the nodes on a private non-blocking stream into a graph and launches
//    it on the run's stream;
//  - later runs launch the graph again while every tensor and the workspace sit at the
//    addresses it was captured with; when they move (other bound outputs, a grown arena) the
//    nodes are captured again and the executable graph updated in place, which is cheaper
//    than instantiating a new one;
//  - a node that cannot be captured (it waits for the device, or allocates) fails the capture:
//    the segment then runs node by node in this context for good.
// Within one plan every shape and every host-side value a kernel reads is fixed (the plan is
// made for them), so a graph replays exactly what the nodes would have launched.
#include "backends/cuda/graph_segment.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_stream.hpp"
#include "core/log.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>

namespace infer::cuda {

namespace {

struct CapturedGraph final : SegmentState {
    std::unique_ptr<CudaStream> capture_stream;  // with its own cuBLAS handles and workspace
    cudaGraphExec_t exec = nullptr;
    std::vector<const void*> addresses;  // of every tensor and the workspace, when captured
    size_t runs = 0;
    bool node_by_node = false;  // capture failed here once

    ~CapturedGraph() override {
        if (exec) cudaGraphExecDestroy(exec);
        cudaGetLastError();
    }
};

class GraphSegment final : public CompiledSegment {
public:
    explicit GraphSegment(const SegmentOffer& offer) : device_(offer.device.index) {
        for (const CompiledKernel* kernel : offer.kernels)
            workspace_bytes_ = std::max(workspace_bytes_, kernel->workspace_bytes());
        first_node_ = offer.nodes.front()->name;
    }

    void run(SegmentRun& run) const override {
        if (!run.state()) run.state() = std::make_unique<CapturedGraph>();
        auto& graph = static_cast<CapturedGraph&>(*run.state());
        if (graph.node_by_node || graph.runs++ == 0) return run_node_by_node(run);
        auto* stream = dynamic_cast<CudaStream*>(&run.stream());
        if (!stream) return run_node_by_node(run);
        const void* workspace = workspace_bytes_ > 0 ? run.reserve_workspace(workspace_bytes_) : nullptr;
        std::vector<const void*> addresses = addresses_of(run, workspace);
        DeviceGuard guard(device_);
        if (!graph.exec || addresses != graph.addresses) {
            if (!capture(run, graph)) {
                graph.node_by_node = true;
                return run_node_by_node(run);
            }
            graph.addresses = std::move(addresses);
        }
        INFER_CUDA_CHECK(cudaGraphLaunch(graph.exec, stream->handle()),
                         "CUDA graph of the nodes from '" + first_node_ + "' on " + device_name(device_));
    }

private:
    static void run_node_by_node(SegmentRun& run) {
        for (size_t i = 0; i < run.size(); ++i) run.run_step(i);
    }

    static std::vector<const void*> addresses_of(SegmentRun& run, const void* workspace) {
        std::vector<const void*> addresses{workspace};
        for (size_t i = 0; i < run.size(); ++i) {
            for (const Tensor& t : run.inputs(i)) addresses.push_back(t.defined() ? t.raw_data() : nullptr);
            for (const Tensor& t : run.outputs(i)) addresses.push_back(t.defined() ? t.raw_data() : nullptr);
        }
        return addresses;
    }

    // Captures the nodes into graph.exec; false when they cannot be captured.
    bool capture(SegmentRun& run, CapturedGraph& graph) const {
        if (!graph.capture_stream) {
            graph.capture_stream = std::make_unique<CudaStream>(device_, /*blocking=*/false);
            // Created now: creating handles or their workspace inside a capture is not allowed.
            graph.capture_stream->cublas();
            graph.capture_stream->cublas_lt();
            graph.capture_stream->blas_workspace();
        }
        const cudaStream_t handle = graph.capture_stream->handle();
        if (cudaStreamBeginCapture(handle, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        std::string failure;
        try {
            for (size_t i = 0; i < run.size(); ++i) run.run_step(i, graph.capture_stream.get());
        } catch (const std::exception& e) {
            failure = e.what();
        }
        cudaGraph_t captured = nullptr;
        const cudaError_t ended = cudaStreamEndCapture(handle, &captured);
        if (failure.empty() && ended != cudaSuccess) failure = cudaGetErrorString(ended);
        cudaGetLastError();
        if (failure.empty()) failure = instantiate(graph, captured);
        if (captured) cudaGraphDestroy(captured);
        if (!failure.empty())
            detail::logger().info("the nodes from '{}' on {} run one by one: capturing them as a CUDA graph failed: {}",
                                  first_node_, device_name(device_), failure);
        return failure.empty();
    }

    // Updates the executable graph in place when it has the same topology, else makes a new one.
    static std::string instantiate(CapturedGraph& graph, cudaGraph_t captured) {
        if (graph.exec) {
            cudaGraphExecUpdateResultInfo info{};
            if (cudaGraphExecUpdate(graph.exec, captured, &info) == cudaSuccess) return {};
            cudaGetLastError();
            cudaGraphExecDestroy(graph.exec);
            graph.exec = nullptr;
        }
        const cudaError_t made = cudaGraphInstantiate(&graph.exec, captured, 0);
        if (made == cudaSuccess) return {};
        graph.exec = nullptr;
        cudaGetLastError();
        return cudaGetErrorString(made);
    }

    int device_;
    size_t workspace_bytes_ = 0;
    std::string first_node_;
};

}  // namespace

std::vector<SegmentClaim> claim_graph_segments(const SegmentOffer& offer) {
    std::vector<SegmentClaim> claims;
    if (!offer.allow_capture || offer.nodes.empty()) return claims;
    claims.push_back({0, offer.nodes.size(), std::make_unique<GraphSegment>(offer)});
    return claims;
}

}  // namespace infer::cuda
