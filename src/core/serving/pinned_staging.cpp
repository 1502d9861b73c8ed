#include "core/serving/pinned_staging.hpp"

namespace infer::detail {

Tensor PinnedStaging::take(DType type, const Shape& shape, const Device& for_device) {
    const size_t bytes = static_cast<size_t>(shape.numel()) * dtype_size(type);
    std::lock_guard lock(mutex_);
    // A free buffer large enough; else a free one to replace by a larger, or room for a new one.
    // A use count read as 1 cannot rise behind our back: only this pool hands the buffer out.
    std::shared_ptr<Buffer>* replace = nullptr;
    for (std::shared_ptr<Buffer>& buffer : buffers_) {
        if (buffer.use_count() != 1) continue;
        if (buffer->bytes() >= bytes) return Tensor(buffer, type, shape);
        replace = &buffer;
    }
    if (!replace && buffers_.size() >= capacity_) return {};
    Tensor fresh = Tensor::empty_pinned(type, shape, for_device);
    if (!fresh.is_pinned()) return {};  // a backend without page-locked memory: nothing gained
    if (replace) *replace = fresh.buffer();
    else buffers_.push_back(fresh.buffer());
    return fresh;
}

}  // namespace infer::detail
