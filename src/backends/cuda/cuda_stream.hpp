#pragma once
// A CUDA stream of one device, with the cuBLAS and cuBLASLt handles it uses. Handles are created
// lazily (most streams of a CPU-heavy plan never multiply matrices) and every stream has its own
// workspace so that concurrent streams never share cuBLAS scratch memory.
#include <infer/backend.hpp>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <mutex>

namespace infer::cuda {

// The cuBLAS workspace each stream's handle gets on `device`.
size_t cublas_workspace_bytes(int device);

class CudaStream final : public Stream {
public:
    // A new stream on `device`. By default a blocking stream: it orders with the legacy default
    // stream, which the backend's synchronous copies and buffer frees rely on. A non-blocking
    // one does not, which suits graph capture: work captured there is never run there, and
    // capturing on a blocking stream would make other threads' legacy-stream calls fail.
    explicit CudaStream(int device, bool blocking = true);
    // The legacy default stream of `device`, not owned; for kernels run without a stream.
    static CudaStream legacy_default(int device);
    ~CudaStream() override;
    CudaStream(CudaStream&& other) noexcept;
    CudaStream(const CudaStream&) = delete;
    CudaStream& operator=(const CudaStream&) = delete;
    CudaStream& operator=(CudaStream&&) = delete;

    void synchronize() override;
    void* native_handle() const override { return stream_; }
    // CUDA events on this stream (cuda_timing.cpp).
    std::unique_ptr<TimingMark> mark() override;
    double elapsed_ms(const TimingMark& from, const TimingMark& to) override;

    cudaStream_t handle() const { return stream_; }
    int device() const { return device_; }
    // The cuBLAS handle bound to this stream, created on first use. Thread-safe.
    cublasHandle_t cublas();
    // The cuBLASLt handle, created on first use. Thread-safe. cuBLASLt takes the stream and the
    // workspace with each call: pass handle() and blas_workspace().
    cublasLtHandle_t cublas_lt();
    // Scratch for the cuBLAS and cuBLASLt calls on this stream, allocated on first use. The two
    // share it: work on one stream runs in order, so they never use it at the same time.
    struct Workspace {
        void* data;
        size_t bytes;
    };
    Workspace blas_workspace();

private:
    CudaStream(int device, cudaStream_t stream, bool owned);
    void allocate_workspace_locked();

    int device_;
    cudaStream_t stream_ = nullptr;
    bool owned_ = false;
    std::mutex mutex_;
    cublasHandle_t cublas_ = nullptr;
    cublasLtHandle_t cublas_lt_ = nullptr;
    void* cublas_workspace_ = nullptr;
    size_t cublas_workspace_size_ = 0;
};

// Makes `device` current for the calling thread and restores the previous one on scope exit;
// the runtime's current device is per thread, and callers' threads must not see it change.
class DeviceGuard {
public:
    explicit DeviceGuard(int device);
    ~DeviceGuard();
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int previous_ = -1;
};

}  // namespace infer::cuda
