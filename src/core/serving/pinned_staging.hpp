#pragma once
// Page-locked host buffers that a batcher copies its outputs into from a GPU.
//
// A copy from the device into ordinary (pageable) memory goes through the driver's own staging
// and, for a freshly allocated output, through page faults as well; into page-locked memory it
// runs at the bus's speed. Allocating page-locked memory is slow, though, so buffers are kept
// and handed out again once every tensor viewing them (the callers' answers) is gone. Bounded:
// at most `capacity` buffers are kept; when all are in use, take() says so and the caller
// copies into ordinary memory instead.
#include <infer/backend.hpp>
#include <infer/tensor.hpp>

#include <memory>
#include <mutex>
#include <vector>

namespace infer::detail {

class PinnedStaging {
public:
    explicit PinnedStaging(size_t capacity) : capacity_(capacity) {}

    // An uninitialized host tensor of `type` and `shape` in page-locked memory that
    // `for_device`'s backend copies to quickly, or an undefined tensor when every kept buffer is
    // in use (or the backend has no page-locked memory). Thread-safe.
    Tensor take(DType type, const Shape& shape, const Device& for_device);

private:
    std::mutex mutex_;
    std::vector<std::shared_ptr<Buffer>> buffers_;  // a use count of 1: only we hold it, free
    size_t capacity_;
};

}  // namespace infer::detail
