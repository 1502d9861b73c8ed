// The CUDA backend: devices, memory from the stream-ordered pool, copies, streams, and the
// registry of kernels that the op families (one file each) fill.
#include "backends/cuda/cuda_backend.hpp"

#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_stream.hpp"
#include "backends/cuda/f16_range.hpp"
#include "backends/cuda/graph_segment.hpp"
#include "backends/cuda/kernel_support.hpp"
#include "core/log.hpp"

#include <infer/error.hpp>


#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

namespace infer::cuda {

namespace {

std::string bytes_text(size_t bytes) { return std::to_string(bytes) + " bytes"; }

cudaStream_t native(Stream* stream) {
    return stream ? static_cast<cudaStream_t>(stream->native_handle()) : nullptr;
}

// Freeing never throws: it runs in destructors, possibly after the runtime has shut down.
void log_free_failure(cudaError_t error, const char* call, int device) {
    cudaGetLastError();
    if (error == cudaErrorCudartUnloading) return;
    detail::logger().error("{} failed on {}: {}", call, device_name(device),
                           cudaGetErrorString(error));
}

class CudaBackend final : public Backend, private KernelRegistrar {
public:
    CudaBackend() {
        register_elementwise_kernels(*this);
        register_cast_kernels(*this);
        register_reduce_kernels(*this);
        register_arg_reduce_kernels(*this);
        register_softmax_kernels(*this);
        register_normalization_kernels(*this);
        register_data_movement_kernels(*this);
        register_gemm_kernels(*this);
        register_conv_kernels(*this);
        register_pool_kernels(*this);
        register_generator_kernels(*this);
        register_fused_kernels(*this);
        register_quantized_matmul_kernel(*this);
        register_add_layer_norm_kernel(*this);
        register_channels_last_kernels(*this);
    }

    ~CudaBackend() override {
        // At process exit the runtime may be gone already; there is nothing to report then.
        for (const auto& state : devices_)
            if (state->alloc_stream) cudaStreamDestroy(state->alloc_stream);
        cudaGetLastError();
    }

    std::string name() const override { return "cuda"; }

    int device_count() const override {
        std::call_once(discovered_, [this] {
            int count = 0;
            // No driver or no GPU is a normal situation for a CPU machine, not an error.
            const cudaError_t status = cudaGetDeviceCount(&count);
            if (status != cudaSuccess) {
                cudaGetLastError();
                detail::logger().info("no CUDA device usable: {}", cudaGetErrorString(status));
                count = 0;
            }
            count_ = count;
            for (int i = 0; i < count; ++i) devices_.push_back(std::make_unique<DeviceState>());
        });
        return count_;
    }

    DeviceProperties properties(int index) const override {
        check_index(index);
        DeviceGuard guard(index);
        const std::string where = device_name(index);
        cudaDeviceProp prop{};
        INFER_CUDA_CHECK(cudaGetDeviceProperties(&prop, index), where);
        size_t free_bytes = 0, total_bytes = 0;
        INFER_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes), where);
        DeviceProperties p;
        p.name = prop.name;
        p.total_memory_bytes = total_bytes;
        p.free_memory_bytes = free_bytes;
        p.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
        p.cores = prop.multiProcessorCount;
        p.host_accessible = false;
        int driver = 0, runtime = 0;
        if (cudaDriverGetVersion(&driver) == cudaSuccess && cudaRuntimeGetVersion(&runtime) == cudaSuccess)
            p.driver = "CUDA driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
                       ", runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
        cudaGetLastError();
        return p;
    }

    size_t stream_workspace_bytes(int index) const override {
        check_index(index);
        return cublas_workspace_bytes(index);
    }

    std::shared_ptr<Buffer> allocate(size_t bytes, int index) override {
        check_index(index);
        if (bytes == 0)  // the pool rejects empty requests; an empty tensor needs no memory
            return std::make_shared<Buffer>(nullptr, 0, Device{"cuda", index}, nullptr,
                                            Buffer::Flags{false, false});
        DeviceGuard guard(index);
        const DeviceState& state = memory_of(index);
        const std::string where = device_name(index) + ", " + bytes_text(bytes);
        void* data = nullptr;
        // Allocated on the device's private allocation stream and waited for, so the memory is
        // usable on any stream at once without waiting for unrelated work on the device.
        cudaError_t status = cudaMallocFromPoolAsync(&data, bytes, state.pool, state.alloc_stream);
        if (status == cudaErrorMemoryAllocation) {
            // The pool keeps freed memory for reuse; give it back to the driver and try again.
            cudaGetLastError();
            INFER_CUDA_CHECK(cudaDeviceSynchronize(), where);
            INFER_CUDA_CHECK(cudaMemPoolTrimTo(state.pool, 0), where);
            status = cudaMallocFromPoolAsync(&data, bytes, state.pool, state.alloc_stream);
        }
        INFER_CUDA_CHECK(status, where);
        INFER_CUDA_CHECK(cudaStreamSynchronize(state.alloc_stream), where);
        // Freed on the legacy default stream, which orders the free after all work already
        // queued on the backend's streams (they are blocking streams); the pool then hands the
        // memory out again only once that free has completed.
        auto deleter = [index](void* p) {
            cudaError_t error = cudaSetDevice(index);
            if (error == cudaSuccess) error = cudaFreeAsync(p, cudaStreamLegacy);
            if (error != cudaSuccess) log_free_failure(error, "cudaFreeAsync", index);
        };
        return std::make_shared<Buffer>(data, bytes, Device{"cuda", index}, deleter,
                                        Buffer::Flags{false, false});
    }

    std::shared_ptr<Buffer> allocate_pinned_host(size_t bytes, int index) override {
        check_index(index);
        DeviceGuard guard(index);
        void* data = nullptr;
        INFER_CUDA_CHECK(cudaMallocHost(&data, bytes),
                         "pinned host memory for " + device_name(index) + ", " + bytes_text(bytes));
        auto deleter = [index](void* p) {
            const cudaError_t error = cudaFreeHost(p);
            if (error != cudaSuccess) log_free_failure(error, "cudaFreeHost", index);
        };
        return std::make_shared<Buffer>(data, bytes, Device::CPU, deleter,
                                        Buffer::Flags{true, true});
    }

    void copy_from_host(void* dst, const void* src, size_t bytes, int index,
                        Stream* stream) override {
        copy(dst, src, bytes, index, stream, cudaMemcpyHostToDevice, "host to device");
    }
    void copy_to_host(void* dst, const void* src, size_t bytes, int index,
                      Stream* stream) override {
        copy(dst, src, bytes, index, stream, cudaMemcpyDeviceToHost, "device to host");
    }
    void copy_on_device(void* dst, const void* src, size_t bytes, int index,
                        Stream* stream) override {
        copy(dst, src, bytes, index, stream, cudaMemcpyDeviceToDevice, "device to device");
    }

    uint16_t largest_f16_magnitude(const void* data, size_t count, int index, Stream* stream) override {
        check_index(index);
        DeviceGuard guard(index);
        // Without a stream of ours: the legacy default stream, which waits for the others.
        return cuda::largest_f16_magnitude(data, count, native(stream), device_name(index));
    }

    std::unique_ptr<Stream> create_stream(int index) override {
        check_index(index);
        return std::make_unique<CudaStream>(index);
    }

    // Training-mode BatchNormalization (batch statistics, running-statistics outputs) has no
    // CUDA kernel; the planner runs it on the CPU. FusedConv's epilogue clamps only: a HardSwish
    // activation stays a node of its own (fuse_conv_epilogue asks). ChannelsLastConv likewise, and
    // only with one group or one channel per group (depthwise): other grouped convolutions stay
    // in planes (passes/channels_last.cpp asks).
    bool supports(const NodeSignature& node) const override {
        if (node.op == "BatchNormalization" && node.attributes && node.attributes->get_int("training_mode", 0) != 0)
            return false;
        const bool conv = node.op == "FusedConv" || node.op == "ChannelsLastConv";
        if (conv && node.attributes && node.attributes->get_string("activation", "") == "HardSwish") return false;
        if (node.op == "ChannelsLastConv" && node.attributes && node.attributes->get_int("group", 1) != 1) {
            const int64_t group = node.attributes->get_int("group", 1);
            // From W alone ([group, 1, KH, KW]: C = group): the channel-last pass asks before
            // it has turned X, whose shape is then still in planes.
            const bool depthwise = node.input_shapes.size() > 1 && node.input_shapes[1].rank() == 4 &&
                                   node.input_shapes[1][0] == group && node.input_shapes[1][1] == 1;
            if (!depthwise) return false;
        }
        return Backend::supports(node);
    }

    std::vector<SegmentClaim> compile_segments(const SegmentOffer& offer) const override {
        return claim_graph_segments(offer);
    }

private:
    void check_index(int index) const {
        const int count = device_count();
        if (index < 0 || index >= count)
            throw DeviceError("no device " + device_name(index) + ": " +
                              (count == 0 ? std::string("no CUDA device is present")
                                          : std::to_string(count) + " CUDA device(s) present"));
    }

    struct DeviceState {
        std::once_flag memory_once, fallback_once;
        cudaMemPool_t pool = nullptr;
        cudaStream_t alloc_stream = nullptr;
        std::unique_ptr<CudaStream> fallback;
    };

    // The device's default stream-ordered pool, set to keep freed memory cached rather than
    // return it to the driver at every synchronization (allocate() trims it when memory runs
    // out), and a non-blocking stream that allocations are made on.
    const DeviceState& memory_of(int index) {
        DeviceState& state = *devices_[static_cast<size_t>(index)];
        std::call_once(state.memory_once, [&] {
            const std::string where = device_name(index);
            INFER_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&state.pool, index), where);
            uint64_t threshold = std::numeric_limits<uint64_t>::max();
            INFER_CUDA_CHECK(cudaMemPoolSetAttribute(state.pool, cudaMemPoolAttrReleaseThreshold,
                                                     &threshold),
                             where);
            INFER_CUDA_CHECK(cudaStreamCreateWithFlags(&state.alloc_stream, cudaStreamNonBlocking),
                             where);
        });
        return state;
    }

    void copy(void* dst, const void* src, size_t bytes, int index, Stream* stream,
              cudaMemcpyKind kind, const char* direction) {
        if (bytes == 0) return;
        check_index(index);
        DeviceGuard guard(index);
        const cudaStream_t s = native(stream);
        const auto where = [&] {
            return std::string(direction) + " copy on " + device_name(index) + ", " +
                   bytes_text(bytes);
        };
        // A stream that is not ours has no CUDA handle: copy synchronously, as without one.
        if (s == nullptr) {
            INFER_CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind), where());
        } else {
            INFER_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s), where());
        }
    }

    // Kernels called without a stream run on the legacy default stream and are waited for.
    CudaStream& fallback_stream(int index) {
        DeviceState& state = *devices_[static_cast<size_t>(index)];
        std::call_once(state.fallback_once, [&] {
            state.fallback = std::make_unique<CudaStream>(CudaStream::legacy_default(index));
        });
        return *state.fallback;
    }

    void add(const std::string& op, const std::vector<DType>& dtypes, CudaKernel kernel,
             WorkspaceSize workspace) override {
        for (DType type : dtypes)
            kernels_.add_compiled(op, type, [this, kernel, workspace](const CompileContext& c) {
                return std::make_unique<FunctionKernel>([this, kernel](KernelContext& ctx) { run(ctx, kernel); },
                                                        workspace ? workspace(c.node()) : 0);
            });
    }

    void add_compiled(const std::string& op, DType dtype, CudaKernelFactory factory, WorkspaceSize workspace) override {
        kernels_.add_compiled(op, dtype, [this, factory, workspace](const CompileContext& c) {
            CudaKernelFunction kernel = factory(c);
            return std::make_unique<FunctionKernel>([this, kernel](KernelContext& ctx) { run(ctx, kernel); },
                                                    workspace ? workspace(c.node()) : 0);
        });
    }

    template <class Kernel>
    void run(KernelContext& ctx, const Kernel& kernel) {
        const int index = ctx.device().index;
        check_index(index);
        DeviceGuard guard(index);
        auto* own = dynamic_cast<CudaStream*>(ctx.stream());
        CudaStream& stream = own ? *own : fallback_stream(index);
        if (own && own->device() != index)
            throw DeviceError("node '" + ctx.node_name() + "': stream of " +
                              device_name(own->device()) + " given for " + device_name(index));
        Launch launch{ctx, stream};
        bool any_output = false;
        for (size_t i = 0; i < ctx.num_outputs(); ++i)
            any_output = any_output || (ctx.output(i).defined() && ctx.output(i).numel() > 0);
        if (!any_output) return;  // nothing to write; zero-sized launches are errors in CUDA
        kernel(launch);
        launch.check_launch("kernel");
        if (!own) stream.synchronize();
    }

    // Filled once, on the first question about devices; never resized afterwards.
    mutable std::once_flag discovered_;
    mutable int count_ = 0;
    mutable std::vector<std::unique_ptr<DeviceState>> devices_;
};

}  // namespace

std::shared_ptr<Backend> make_cuda_backend() { return std::make_shared<CudaBackend>(); }

}  // namespace infer::cuda
