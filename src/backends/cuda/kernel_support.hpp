#pragma once
// What the CUDA kernels of every op family share on the host side: the launch context they
// receive, how they register, and checked access to their inputs and outputs.
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_stream.hpp"

#include <infer/backend.hpp>
#include <infer/error.hpp>

#include <cstdint>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace infer::cuda {

// One kernel call: the core's context plus the stream it runs on, with the device current.
struct Launch {
    KernelContext& ctx;
    CudaStream& stream;

    cudaStream_t handle() const { return stream.handle(); }
    // "node 'ln1' (LayerNormalization) on cuda:0", for messages.
    std::string where() const;
    [[noreturn]] void unsupported(const std::string& what) const;

    // Device pointers of inputs and outputs; throw DeviceError when the core handed over a
    // tensor that is not on this device or not contiguous, which the kernel contract excludes.
    const void* in(size_t i) const;
    void* out(size_t i) const;
    // A small integer input (axes, starts, split sizes). The core keeps these on the CPU; if one
    // arrives on the device, the stream is synchronized and the values are copied back.
    std::vector<int64_t> ints(size_t i) const;
    // Checks the launch just made (a bad configuration shows up only in the last-error slot).
    void check_launch(const char* kernel) const;
};

using CudaKernel = void (*)(const Launch&);
// The most scratch memory a kernel asks for (Launch::ctx.workspace) for this node, reckoned once
// when the node is compiled into a plan.
using WorkspaceSize = size_t (*)(const NodeSignature&);

// A kernel with state made once per node when a plan is compiled (a weight prepacked for it,
// CompileContext::prepacked), for the ops that need more than a plain function.
using CudaKernelFunction = std::function<void(const Launch&)>;
using CudaKernelFactory = std::function<CudaKernelFunction(const CompileContext&)>;

// Each op family's file registers its kernels through this.
class KernelRegistrar {
public:
    virtual ~KernelRegistrar() = default;
    virtual void add(const std::string& op, const std::vector<DType>& dtypes, CudaKernel kernel,
                     WorkspaceSize workspace = nullptr) = 0;
    virtual void add_compiled(const std::string& op, DType dtype, CudaKernelFactory factory,
                              WorkspaceSize workspace = nullptr) = 0;
};

inline const std::vector<DType> kFloatTypes{DType::f32, DType::f16, DType::bf16};
// Floats and the integer types that arithmetic and comparisons are registered for.
inline const std::vector<DType> kNumericTypes{DType::f32, DType::f16, DType::bf16, DType::i32,
                                              DType::i64};
// The dtypes the CUDA kernels are written for: ops that only move elements work for all of them.
// (i16, u16, u32 and u64 are left to the CPU: nothing on the GPU path needs them yet.)
inline const std::vector<DType> kEveryType{DType::f32, DType::f16, DType::bf16, DType::i8,     DType::u8,
                                           DType::i32, DType::i64, DType::boolean, DType::f64};

// One registration function per file; each file belongs to an op family (table_<family>.cpp)
// and carries its name: math_*, indexing_*, neural_*, fused.
void register_elementwise_kernels(KernelRegistrar& registrar);    // math_elementwise.cu
void register_cast_kernels(KernelRegistrar& registrar);           // math_cast.cu
void register_reduce_kernels(KernelRegistrar& registrar);         // math_reduce.cu
void register_arg_reduce_kernels(KernelRegistrar& registrar);     // math_arg_reduce.cu
void register_gemm_kernels(KernelRegistrar& registrar);           // math_gemm.cpp
void register_data_movement_kernels(KernelRegistrar& registrar);  // indexing_movement.cu
void register_generator_kernels(KernelRegistrar& registrar);      // indexing_generators.cu
void register_softmax_kernels(KernelRegistrar& registrar);        // neural_softmax.cu
void register_normalization_kernels(KernelRegistrar& registrar);  // neural_normalization.cu
void register_conv_kernels(KernelRegistrar& registrar);           // neural_conv.cu
void register_pool_kernels(KernelRegistrar& registrar);           // neural_pool.cu
void register_fused_kernels(KernelRegistrar& registrar);          // fused.cu
void register_quantized_matmul_kernel(KernelRegistrar& registrar);  // fused_quantized_matmul.cu
void register_add_layer_norm_kernel(KernelRegistrar& registrar);    // fused_add_layer_norm.cu
void register_channels_last_kernels(KernelRegistrar& registrar);    // fused_channels_last.cu

}  // namespace infer::cuda
