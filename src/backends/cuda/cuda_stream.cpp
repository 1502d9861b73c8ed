#include "backends/cuda/cuda_stream.hpp"

#include "backends/cuda/cuda_check.hpp"

#include <utility>

namespace infer::cuda {

// cuBLAS's guidance for Hopper is 32 MiB of workspace per handle; older chips need 4 MiB.
size_t cublas_workspace_bytes(int device) {
    int major = 0;
    INFER_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                     device_name(device));
    return major >= 9 ? (32u << 20) : (4u << 20);
}

DeviceGuard::DeviceGuard(int device) {
    INFER_CUDA_CHECK(cudaGetDevice(&previous_), device_name(device));
    if (previous_ != device) INFER_CUDA_CHECK(cudaSetDevice(device), device_name(device));
}

DeviceGuard::~DeviceGuard() {
    int current = -1;
    // A destructor cannot throw; a failure here leaves the device as set, which is harmless.
    if (cudaGetDevice(&current) == cudaSuccess && current != previous_) cudaSetDevice(previous_);
    cudaGetLastError();
}

CudaStream::CudaStream(int device, bool blocking) : device_(device), owned_(true) {
    DeviceGuard guard(device);
    INFER_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, blocking ? cudaStreamDefault : cudaStreamNonBlocking),
                     device_name(device));
}

CudaStream::CudaStream(int device, cudaStream_t stream, bool owned)
    : device_(device), stream_(stream), owned_(owned) {}

CudaStream CudaStream::legacy_default(int device) {
    return CudaStream(device, cudaStreamLegacy, false);
}

CudaStream::CudaStream(CudaStream&& other) noexcept
    : device_(other.device_),
      stream_(std::exchange(other.stream_, nullptr)),
      owned_(std::exchange(other.owned_, false)),
      cublas_(std::exchange(other.cublas_, nullptr)),
      cublas_lt_(std::exchange(other.cublas_lt_, nullptr)),
      cublas_workspace_(std::exchange(other.cublas_workspace_, nullptr)),
      cublas_workspace_size_(std::exchange(other.cublas_workspace_size_, 0)) {}

CudaStream::~CudaStream() {
    // Errors are ignored: at process exit the runtime may already be unloaded, and a destructor
    // has no one to report to.
    if (cudaSetDevice(device_) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    if (cublas_) cublasDestroy(cublas_);
    if (cublas_lt_) cublasLtDestroy(cublas_lt_);
    if (cublas_workspace_) cudaFree(cublas_workspace_);
    if (owned_ && stream_) cudaStreamDestroy(stream_);
    cudaGetLastError();
}

void CudaStream::synchronize() {
    DeviceGuard guard(device_);
    INFER_CUDA_CHECK(cudaStreamSynchronize(stream_), "stream on " + device_name(device_));
}

// Called with mutex_ held and the device current.
void CudaStream::allocate_workspace_locked() {
    if (cublas_workspace_) return;
    const size_t bytes = cublas_workspace_bytes(device_);
    INFER_CUDA_CHECK(cudaMalloc(&cublas_workspace_, bytes),
                     device_name(device_) + ", cuBLAS workspace of " + std::to_string(bytes) +
                         " bytes");
    cublas_workspace_size_ = bytes;
}

cublasHandle_t CudaStream::cublas() {
    std::lock_guard lock(mutex_);
    if (cublas_) return cublas_;
    DeviceGuard guard(device_);
    const std::string where = device_name(device_);
    allocate_workspace_locked();
    cublasHandle_t handle = nullptr;
    INFER_CUBLAS_CHECK(cublasCreate(&handle), where);
    try {
        INFER_CUBLAS_CHECK(cublasSetStream(handle, stream_), where);
        // Results must match the f32 reference: TF32 only where a kernel asks for it, through
        // the compute type of its call (SessionOptions::allow_tf32).
        INFER_CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH), where);
        INFER_CUBLAS_CHECK(
            cublasSetWorkspace(handle, cublas_workspace_, cublas_workspace_size_), where);
    } catch (...) {
        cublasDestroy(handle);
        throw;
    }
    cublas_ = handle;
    return cublas_;
}

cublasLtHandle_t CudaStream::cublas_lt() {
    std::lock_guard lock(mutex_);
    if (cublas_lt_) return cublas_lt_;
    DeviceGuard guard(device_);
    allocate_workspace_locked();
    cublasLtHandle_t handle = nullptr;
    INFER_CUBLAS_CHECK(cublasLtCreate(&handle), device_name(device_));
    cublas_lt_ = handle;
    return cublas_lt_;
}

CudaStream::Workspace CudaStream::blas_workspace() {
    std::lock_guard lock(mutex_);
    if (!cublas_workspace_) {
        DeviceGuard guard(device_);
        allocate_workspace_locked();
    }
    return {cublas_workspace_, cublas_workspace_size_};
}

}  // namespace infer::cuda
