#pragma once
// Every CUDA runtime and cuBLAS call goes through these macros, so that a failure becomes an
// infer exception naming the call, the device and the sizes involved instead of a silent error
// code. The context argument is only evaluated when the call fails: building strings on the
// success path would cost more than many of the calls themselves.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

namespace infer::cuda {

// Throws OutOfMemory for allocation failures and DeviceError otherwise, after clearing the
// runtime's last-error slot so that the next, unrelated call does not report this failure again.
[[noreturn]] void throw_cuda_error(cudaError_t error, const char* call, const std::string& context);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call,
                                     const std::string& context);

// "cuda:1", the way devices are named in messages.
std::string device_name(int index);

}  // namespace infer::cuda

#define INFER_CUDA_CHECK(call, context)                                       \
    do {                                                                      \
        const cudaError_t infer_cuda_status_ = (call);                        \
        if (infer_cuda_status_ != cudaSuccess)                                \
            ::infer::cuda::throw_cuda_error(infer_cuda_status_, #call, (context)); \
    } while (0)

#define INFER_CUBLAS_CHECK(call, context)                                       \
    do {                                                                        \
        const cublasStatus_t infer_cublas_status_ = (call);                     \
        if (infer_cublas_status_ != CUBLAS_STATUS_SUCCESS)                      \
            ::infer::cuda::throw_cublas_error(infer_cublas_status_, #call, (context)); \
    } while (0)
