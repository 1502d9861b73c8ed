// CPU kernels of the op table's neural-network layers family (src/core/ops/table_neural.cpp).
#include "backends/cpu/kernels/register.hpp"

namespace infer::cpu {

void register_neural_family_kernels(KernelRegistry&) {}

}  // namespace infer::cpu
