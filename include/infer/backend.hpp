#pragma once
// The extension API: how a backend plugs into infer. The CPU and CUDA backends use exactly this
// interface; a user's backend does too (see examples/custom_backend).
//
// A backend owns memory on its devices (allocate, copies to and from the host), declares which
// nodes it can run (a kernel registry keyed by op name and dtype), compiles each node of a plan
// into a kernel once, and runs kernels on streams.
// The planner sends it every node it supports; the rest run on the CPU with copies inserted.
#include <infer/attributes.hpp>
#include <infer/device.hpp>
#include <infer/error.hpp>
#include <infer/dtype.hpp>
#include <infer/tensor.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace infer {

// A block of memory on one device, freed by the deleter of whoever allocated it.
class Buffer {
public:
    using Deleter = std::function<void(void*)>;
    struct Flags {
        bool host_accessible = false;  // the CPU may dereference data()
        bool pinned = false;           // page-locked host memory
    };
    Buffer(void* data, size_t bytes, Device device, Deleter deleter, Flags flags);
    ~Buffer();
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    void* data() const { return data_; }
    size_t bytes() const { return bytes_; }
    const Device& device() const { return device_; }
    bool host_accessible() const { return flags_.host_accessible; }
    bool pinned() const { return flags_.pinned; }

private:
    void* data_;
    size_t bytes_;
    Device device_;
    Deleter deleter_;
    Flags flags_;
};

// A point in a stream's work, for timing: it is reached when everything enqueued on the stream
// before it has finished. Only the stream that made it can measure it.
class TimingMark {
public:
    virtual ~TimingMark() = default;
};

// An ordered queue of work on one device. Work enqueued on a stream runs in order; the host
// waits only in synchronize(). Backends without asynchrony use the defaults, which do nothing
// and time with the host clock.
class Stream {
public:
    virtual ~Stream() = default;
    virtual void synchronize() {}
    // The backend's native handle (cudaStream_t for CUDA), or nullptr.
    virtual void* native_handle() const { return nullptr; }

    // Timing on the device's own clock (CUDA: events), never the host's, so that asynchronous
    // work is measured when it runs rather than when it was enqueued. The defaults read the host
    // clock at the call, which is right only for backends whose kernels finish before they return.
    virtual std::unique_ptr<TimingMark> mark();
    // Milliseconds from `from` to `to`, both made by this stream; waits for `to` to be reached.
    virtual double elapsed_ms(const TimingMark& from, const TimingMark& to);
};

// What a backend sees of a node when asked whether it can run it.
struct NodeSignature {
    std::string op;           // ONNX-style op name: "MatMul", "Relu", ...
    std::string name;         // the node's name in the graph, for messages
    DType kernel_dtype;       // the dtype kernels are registered under (the op's main input)
    std::vector<DType> input_dtypes;
    std::vector<Shape> input_shapes;  // concrete shapes for this plan
    std::vector<bool> inputs_present; // false for an optional input the node leaves out
    std::vector<DType> output_dtypes;
    const Attributes* attributes = nullptr;
    bool allow_tf32 = false;  // SessionOptions::allow_tf32: f32 products may use TF32
    int threads = 0;          // SessionOptions::threads: host threads for the kernel; 0 = all cores
};

// Everything a kernel needs for one call. Outputs arrive allocated with their inferred shapes;
// a kernel only fills them. Missing optional inputs are undefined tensors.
class KernelContext {
public:
    KernelContext(const NodeSignature& node, const std::vector<Tensor>& inputs,
                  std::vector<Tensor>& outputs, Stream* stream, Device device,
                  std::function<void*(size_t)> workspace);

    const std::string& op() const { return node_.op; }
    const std::string& node_name() const { return node_.name; }
    const Attributes& attrs() const { return *node_.attributes; }
    size_t num_inputs() const { return inputs_.size(); }
    bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i].defined(); }
    const Tensor& input(size_t i) const;
    size_t num_outputs() const { return outputs_.size(); }
    Tensor& output(size_t i);
    Stream* stream() const { return stream_; }
    const Device& device() const { return device_; }
    // Whether the session allows f32 matrix products in TF32 (SessionOptions::allow_tf32). A
    // kernel without a faster reduced-precision path ignores it.
    bool allow_tf32() const { return node_.allow_tf32; }
    // Scratch memory on the kernel's device, valid until the kernel returns. Reused across runs,
    // so a steady-state run does not allocate.
    void* workspace(size_t bytes) const { return workspace_(bytes); }

private:
    const NodeSignature& node_;
    const std::vector<Tensor>& inputs_;
    std::vector<Tensor>& outputs_;
    Stream* stream_;
    Device device_;
    std::function<void*(size_t)> workspace_;
};

using Kernel = std::function<void(KernelContext&)>;

// What a backend sees when it compiles a node for a plan: the node, the device, and the values
// of the inputs known at plan time (weights, folded constants).
class CompileContext {
public:
    using Prepack = std::function<Tensor(const Tensor& host_value)>;
    using PrepackCache =
        std::function<Tensor(size_t input, const std::string& layout, const Prepack& make)>;
    CompileContext(const NodeSignature& node, Device device, std::vector<const Tensor*> constants,
                   PrepackCache prepack);

    const NodeSignature& node() const { return node_; }
    const Device& device() const { return device_; }
    // Input i's value (a host tensor) when it is known at plan time, else nullptr.
    const Tensor* constant(size_t i) const { return i < constants_.size() ? constants_[i] : nullptr; }
    // Constant input i in a backend's own form (another dtype, a blocked layout): `make` turns
    // the host value into it the first time a plan of the session asks for that layout, and
    // every later plan shares the result, so weights are prepacked once per session. The
    // memory counts as weights in the session's estimate. Input i must be constant.
    Tensor prepacked(size_t i, const std::string& layout, const Prepack& make) const;

private:
    const NodeSignature& node_;
    Device device_;
    std::vector<const Tensor*> constants_;
    PrepackCache prepack_;
};

// A kernel made for one node of one plan: attributes read and constants prepacked once, then
// run as often as the plan is.
class CompiledKernel {
public:
    virtual ~CompiledKernel() = default;
    // Runs the node. Concurrent runs of one plan call it from several threads, each with its own
    // context, so it must not change the kernel's state.
    virtual void run(KernelContext& ctx) const = 0;
    // The most scratch memory run() asks for through KernelContext::workspace, for estimates.
    virtual size_t workspace_bytes() const { return 0; }
};

using KernelFactory = std::function<std::unique_ptr<CompiledKernel>(const CompileContext&)>;

// A plain kernel function as a compiled kernel: what KernelRegistry::add(op, dtype, Kernel)
// registers, so simple backends stay simple.
class FunctionKernel final : public CompiledKernel {
public:
    explicit FunctionKernel(Kernel kernel, size_t workspace_bytes = 0)
        : kernel_(std::move(kernel)), workspace_bytes_(workspace_bytes) {}
    void run(KernelContext& ctx) const override { kernel_(ctx); }
    size_t workspace_bytes() const override { return workspace_bytes_; }

private:
    Kernel kernel_;
    size_t workspace_bytes_;
};

// Kernels a backend has, by op name and kernel dtype. Registering under an op that infer's op
// table does not know throws InvalidArgument: such a kernel would never be asked for.
class KernelRegistry {
public:
    // A stateless kernel function.
    void add(const std::string& op, DType dtype, Kernel kernel);
    void add(const std::string& op, std::initializer_list<DType> dtypes, const Kernel& kernel);
    // A kernel compiled per node (attributes parsed once, constants prepacked, workspace known).
    void add_compiled(const std::string& op, DType dtype, KernelFactory factory);
    const KernelFactory* find(const std::string& op, DType dtype) const;
    std::vector<std::pair<std::string, DType>> entries() const;

private:
    std::map<std::pair<std::string, DType>, KernelFactory> kernels_;
};

// ---- segments: a run of consecutive nodes that a backend executes as one unit
//
// After a plan's nodes are compiled, each backend is offered the maximal runs of consecutive
// kernel steps placed on one of its devices (no copy in between) and may claim parts of them.
// A claimed run becomes a segment that the executor runs with one call instead of node by
// node; this is where CUDA graph capture (or a whole-subgraph kernel) lives. Unclaimed nodes
// run one at a time, as always. A profiled run times each node, so it runs every segment's
// steps one by one.

// What a segment keeps between runs in one execution context (a captured CUDA graph and the
// pointers it was captured with). Each concurrent run has its own context, so its own state.
class SegmentState {
public:
    virtual ~SegmentState() = default;
};

// A segment's view of one run: its steps with their bound tensors, and its state.
class SegmentRun {
public:
    virtual ~SegmentRun() = default;
    virtual size_t size() const = 0;  // steps in the segment
    // Runs step i's compiled kernel on its bound tensors, its work enqueued on `stream` (the
    // device's stream of this run when null).
    virtual void run_step(size_t i, Stream* stream = nullptr) = 0;
    virtual const std::vector<Tensor>& inputs(size_t i) const = 0;
    virtual const std::vector<Tensor>& outputs(size_t i) const = 0;
    // The stream the run's work on this device goes to; the segment's work must be ordered on it.
    virtual Stream& stream() = 0;
    // Grows the kernels' workspace to at least `bytes` now, so that kernels asking for no more
    // do not allocate while they run (an allocation cannot be captured); returns its address.
    virtual void* reserve_workspace(size_t bytes) = 0;
    // This segment's state in this execution context; null before its first run here.
    virtual std::unique_ptr<SegmentState>& state() = 0;
};

// A claimed run of nodes, compiled once per plan. run() may be called from several threads at
// once (each with its own SegmentRun and state), so it must not change the segment itself.
class CompiledSegment {
public:
    virtual ~CompiledSegment() = default;
    virtual void run(SegmentRun& run) const = 0;
};

// A run of consecutive kernel steps on one device, offered to the device's backend.
struct SegmentOffer {
    Device device;
    std::vector<const NodeSignature*> nodes;
    std::vector<const CompiledKernel*> kernels;
    // SessionOptions::graph_capture: whether the session allows capturing work into device
    // graphs that replay it (the backend then sees a kernel's host-side calls only when it
    // captures, not on every run).
    bool allow_capture = true;
};

// Steps [first, last) of an offer, claimed as one segment.
struct SegmentClaim {
    size_t first = 0, last = 0;
    std::unique_ptr<CompiledSegment> segment;
};

class Backend {
public:
    virtual ~Backend() = default;

    // ---- identity
    virtual std::string name() const = 0;  // the Device type it serves: "cpu", "cuda", ...
    virtual int device_count() const { return 1; }
    virtual DeviceProperties properties(int index) const = 0;

    // ---- memory
    virtual std::shared_ptr<Buffer> allocate(size_t bytes, int index) = 0;
    // Page-locked host memory for fast asynchronous copies; by default, ordinary host memory.
    virtual std::shared_ptr<Buffer> allocate_pinned_host(size_t bytes, int index);
    // Copies; with a stream they may be asynchronous, without one they complete before return.
    // The defaults use memcpy and so suit backends whose memory the host can address.
    virtual void copy_from_host(void* dst, const void* src, size_t bytes, int index, Stream* stream);
    virtual void copy_to_host(void* dst, const void* src, size_t bytes, int index, Stream* stream);
    virtual void copy_on_device(void* dst, const void* src, size_t bytes, int index, Stream* stream);

    // ---- execution
    virtual std::unique_ptr<Stream> create_stream(int index);
    // Whether this backend can run the node; by default, whether a kernel is registered.
    virtual bool supports(const NodeSignature& node) const;
    // The kernel for a supported node, made once per plan step; by default the registered
    // factory's. Throws Unsupported for a node it cannot run.
    virtual std::unique_ptr<CompiledKernel> compile(const CompileContext& ctx) const;
    // Claims non-overlapping runs of an offer as segments, in order; by default none, so every
    // node runs on its own.
    virtual std::vector<SegmentClaim> compile_segments(const SegmentOffer& offer) const;

    // ---- numeric checks
    // The largest magnitude among `count` f16 values at `data` (memory of device `index`), as
    // f16 bits with the sign cleared (they order as magnitudes do: 0x7c00 and above is infinity
    // or NaN), once the work queued on `stream` has written them: an f16 plan's first run asks
    // this of every step's f16 output to find overflow. The default copies the values to the
    // host in bounded chunks and scans them there; a backend whose memory the host cannot
    // address should reduce on the device and copy back only the answer.
    virtual uint16_t largest_f16_magnitude(const void* data, size_t count, int index, Stream* stream);

    // ---- memory estimates (before anything is allocated)
    // Scratch memory every stream holds while it lives (CUDA: the cuBLAS workspace).
    virtual size_t stream_workspace_bytes(int index) const;

    KernelRegistry& kernels() { return kernels_; }
    const KernelRegistry& kernels() const { return kernels_; }

protected:
    KernelRegistry kernels_;
};

// The process-wide backend registry. "cpu" is always there; "cuda" when infer was built with
// CUDA. Registering a name twice throws InvalidArgument.
void register_backend(std::shared_ptr<Backend> backend);
// Removes a user backend (not "cpu"); sessions already compiled keep their reference.
void unregister_backend(const std::string& name);
// The backend serving a device; throws DeviceError naming the device and what is registered.
std::shared_ptr<Backend> backend_for(const Device& device);
// The backend registered under `name` whether or not it has devices, or nullptr.
std::shared_ptr<Backend> find_backend(const std::string& name);
std::vector<std::string> registered_backends();
// Every op infer's op table knows, by ONNX name: what a backend may register kernels for.
std::vector<std::string> known_ops();

}  // namespace infer
