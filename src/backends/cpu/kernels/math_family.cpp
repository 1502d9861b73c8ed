// CPU kernels of the op table's math family (src/core/ops/table_math.cpp).
#include "backends/cpu/kernels/register.hpp"

namespace infer::cpu {

void register_math_family_kernels(KernelRegistry&) {}

}  // namespace infer::cpu
