// CPU kernels of the op table's neural-network layers family (src/core/ops/table_neural.cpp).
#include "backends/cpu/kernels/neural_kernels.hpp"
#include "backends/cpu/kernels/register.hpp"

namespace infer::cpu {

void register_neural_family_kernels(KernelRegistry& r) {
    register_normalization_kernels(r);
    register_conv_kernels(r);
    register_channels_last_conv_kernels(r);
    register_pool_kernels(r);
    register_loss_kernels(r);
    register_conv_transpose_kernels(r);
    register_channel_norm_kernels(r);
    register_quantize_kernels(r);
    register_integer_matmul_kernels(r);
    register_integer_conv_kernels(r);
    register_window_kernels(r);
    register_roi_align_kernels(r);
    register_spectral_kernels(r);
    register_recurrent_kernels(r);
    register_optimizer_kernels(r);
}

}  // namespace infer::cpu
