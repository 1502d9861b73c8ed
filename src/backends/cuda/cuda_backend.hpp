#pragma once
// The CUDA backend: device memory from the stream-ordered pool, pinned host memory, streams,
// cuBLAS/cuBLASLt GEMM and our own kernels. Registered as "cuda" when infer is built with nvcc;
// with no GPU present it reports zero devices and every use throws DeviceError.
#include <infer/backend.hpp>

#include <memory>

namespace infer::cuda {

std::shared_ptr<Backend> make_cuda_backend();

}  // namespace infer::cuda
