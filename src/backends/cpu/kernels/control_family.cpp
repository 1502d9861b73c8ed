// CPU kernels of the op table's control-flow family (src/core/ops/table_control.cpp).
#include "backends/cpu/kernels/control_subgraph.hpp"
#include "backends/cpu/kernels/register.hpp"

namespace infer::cpu {

void register_control_family_kernels(KernelRegistry& r) {
    register_control_if_kernels(r);
    register_control_loop_kernels(r);
    register_control_scan_kernels(r);
    register_control_sequence_map_kernels(r);
}

}  // namespace infer::cpu
