#include "backends/cuda/cuda_check.hpp"

#include <infer/error.hpp>

namespace infer::cuda {

std::string device_name(int index) { return "cuda:" + std::to_string(index); }

void throw_cuda_error(cudaError_t error, const char* call, const std::string& context) {
    // Non-sticky errors (an allocation that failed, a bad argument) stay in the last-error slot
    // until read; reading it here keeps the backend usable after, e.g., an out-of-memory.
    cudaGetLastError();
    const std::string message = std::string("CUDA call ") + call + " failed (" + context +
                                "): " + cudaGetErrorName(error) + ": " + cudaGetErrorString(error);
    if (error == cudaErrorMemoryAllocation) throw OutOfMemory(message);
    throw DeviceError(message);
}

void throw_cublas_error(cublasStatus_t status, const char* call, const std::string& context) {
    cudaGetLastError();
    const std::string message = std::string("cuBLAS call ") + call + " failed (" + context +
                                "): " + cublasGetStatusName(status) + ": " +
                                cublasGetStatusString(status);
    if (status == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(message);
    throw DeviceError(message);
}

}  // namespace infer::cuda
