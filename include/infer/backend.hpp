#pragma once
// The extension API: how a backend plugs into infer. The CPU and CUDA backends use exactly this
// interface; a user's backend does too (see examples/custom_backend).
//
// A backend owns memory on its devices (allocate, copies to and from the host), declares which
// nodes it can run (a kernel registry keyed by op name and dtype), and runs kernels on streams.
// The planner sends it every node it supports; the rest run on the CPU with copies inserted.
#include <infer/attributes.hpp>
#include <infer/device.hpp>
#include <infer/error.hpp>
#include <infer/dtype.hpp>
#include <infer/tensor.hpp>

#include <cstddef>
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
    std::vector<DType> output_dtypes;
    const Attributes* attributes = nullptr;
    bool allow_tf32 = false;  // SessionOptions::allow_tf32: f32 products may use TF32
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

// Kernels a backend has, by op name and kernel dtype.
class KernelRegistry {
public:
    void add(const std::string& op, DType dtype, Kernel kernel);
    void add(const std::string& op, std::initializer_list<DType> dtypes, const Kernel& kernel);
    const Kernel* find(const std::string& op, DType dtype) const;
    std::vector<std::pair<std::string, DType>> entries() const;

private:
    std::map<std::pair<std::string, DType>, Kernel> kernels_;
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
    // The kernel for a supported node; throws Unsupported otherwise.
    virtual const Kernel& kernel_for(const NodeSignature& node) const;

    // ---- memory estimates (before anything is allocated)
    // Scratch memory every stream holds while it lives (CUDA: the cuBLAS workspace).
    virtual size_t stream_workspace_bytes(int index) const;
    // The most scratch memory (KernelContext::workspace) the kernel for `node` asks for.
    virtual size_t kernel_workspace_bytes(const NodeSignature& node) const;

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
