#pragma once
// A CUDA stream of one device, with the cuBLAS handle bound to it. cuBLAS handles are created
// lazily (most streams of a CPU-heavy plan never multiply matrices) and get their own workspace
// so that concurrent streams never share cuBLAS scratch memory.
#include <infer/backend.hpp>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <mutex>

namespace infer::cuda {

class CudaStream final : public Stream {
public:
    // A new stream on `device`. It is a blocking stream: it orders with the legacy default
    // stream, which the backend's synchronous copies and buffer frees rely on.
    explicit CudaStream(int device);
    // The legacy default stream of `device`, not owned; for kernels run without a stream.
    static CudaStream legacy_default(int device);
    ~CudaStream() override;
    CudaStream(CudaStream&& other) noexcept;
    CudaStream(const CudaStream&) = delete;
    CudaStream& operator=(const CudaStream&) = delete;
    CudaStream& operator=(CudaStream&&) = delete;

    void synchronize() override;
    void* native_handle() const override { return stream_; }

    cudaStream_t handle() const { return stream_; }
    int device() const { return device_; }
    // The cuBLAS handle bound to this stream, created on first use. Thread-safe.
    cublasHandle_t cublas();

private:
    CudaStream(int device, cudaStream_t stream, bool owned);

    int device_;
    cudaStream_t stream_ = nullptr;
    bool owned_ = false;
    std::mutex mutex_;
    cublasHandle_t cublas_ = nullptr;
    void* cublas_workspace_ = nullptr;
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
