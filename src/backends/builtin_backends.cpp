// The backends built into libinfer: the one place that names them, so that the core includes
// none and a backend compiled out leaves nothing behind but backend_for's "not built" error.
#include "backends/cpu/cpu_backend.hpp"
#include "core/backend_registry.hpp"
#ifdef INFER_WITH_CUDA
#include "backends/cuda/cuda_backend.hpp"
#endif

namespace infer::detail {

std::vector<std::shared_ptr<Backend>> builtin_backends() {
    std::vector<std::shared_ptr<Backend>> backends{cpu::make_cpu_backend()};
#ifdef INFER_WITH_CUDA
    backends.push_back(cuda::make_cuda_backend());
#endif
    return backends;
}

}  // namespace infer::detail
