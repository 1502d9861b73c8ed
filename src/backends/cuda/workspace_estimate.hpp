#pragma once
#include <infer/backend.hpp>

namespace infer::cuda {

// An upper bound on the scratch memory (KernelContext::workspace) the CUDA kernel for `node`
// asks for, from its input shapes and attributes alone: what memory estimates count before a
// plan allocates anything. Must follow the kernels: conv.cu, gemm.cpp, normalization.cu.
size_t kernel_workspace_estimate(const NodeSignature& node);

}  // namespace infer::cuda
