// Timing marks of a CUDA stream: events recorded on the stream, so that an interval measures
// when the GPU ran the work between them, not when the host enqueued it.
#include "backends/cuda/cuda_check.hpp"
#include "backends/cuda/cuda_stream.hpp"

#include <infer/error.hpp>

namespace infer::cuda {

namespace {
struct EventMark final : TimingMark {
    cudaEvent_t event = nullptr;
    int device = 0;
    ~EventMark() override {
        if (event) cudaEventDestroy(event);
        cudaGetLastError();
    }
};
}  // namespace

std::unique_ptr<TimingMark> CudaStream::mark() {
    DeviceGuard guard(device_);
    auto mark = std::make_unique<EventMark>();
    mark->device = device_;
    INFER_CUDA_CHECK(cudaEventCreate(&mark->event), "timing event on " + device_name(device_));
    INFER_CUDA_CHECK(cudaEventRecord(mark->event, stream_), "timing event on " + device_name(device_));
    return mark;
}

double CudaStream::elapsed_ms(const TimingMark& from, const TimingMark& to) {
    const auto* a = dynamic_cast<const EventMark*>(&from);
    const auto* b = dynamic_cast<const EventMark*>(&to);
    if (!a || !b || a->device != device_ || b->device != device_)
        throw InvalidArgument("CudaStream::elapsed_ms: marks made by another stream");
    DeviceGuard guard(device_);
    INFER_CUDA_CHECK(cudaEventSynchronize(b->event), "timing event on " + device_name(device_));
    float ms = 0.0f;
    INFER_CUDA_CHECK(cudaEventElapsedTime(&ms, a->event, b->event),
                     "timing event on " + device_name(device_));
    return ms;
}

}  // namespace infer::cuda
