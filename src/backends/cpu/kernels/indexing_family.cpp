// CPU kernels of the op table's indexing family (src/core/ops/table_indexing.cpp), one file per
// kind of work (see indexing_kernels.hpp).
#include "backends/cpu/kernels/indexing_kernels.hpp"
#include "backends/cpu/kernels/register.hpp"

namespace infer::cpu {

void register_indexing_family_kernels(KernelRegistry& r) {
    register_indexing_movement(r);
    register_indexing_concat_gather(r);
    register_indexing_generators(r);
    register_indexing_grid_sample(r);
    register_indexing_tfidf(r);
    register_indexing_gather_scatter(r);
    register_indexing_layout(r);
    register_indexing_resize(r);
    register_indexing_select(r);
    register_indexing_fill(r);
}

}  // namespace infer::cpu
