// CPU kernels of the op table's indexing family (src/core/ops/table_indexing.cpp).
#include "backends/cpu/kernels/register.hpp"

namespace infer::cpu {

void register_indexing_family_kernels(KernelRegistry&) {}

}  // namespace infer::cpu
