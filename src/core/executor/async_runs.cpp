#include "core/executor/async_runs.hpp"

#include <infer/error.hpp>

#include <string>

namespace infer::detail {

AsyncRuns::AsyncRuns(RunFunction run, size_t capacity, size_t workers)
    : run_(std::move(run)), capacity_(capacity), worker_count_(workers) {}

AsyncRuns::~AsyncRuns() {
    std::deque<Pending> cancelled;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        cancelled.swap(queue_);
    }
    ready_.notify_all();
    for (Pending& p : cancelled)
        p.result.set_exception(std::make_exception_ptr(Cancelled("the session was destroyed before this run started")));
    for (std::thread& worker : workers_) worker.join();
}

std::future<Batch> AsyncRuns::submit(Batch inputs) {
    std::future<Batch> future;
    {
        std::lock_guard lock(mutex_);
        if (stopping_) throw Overloaded("the session is shutting down");
        if (queue_.size() >= capacity_)
            throw Overloaded(std::to_string(queue_.size()) + " asynchronous runs are waiting already (max_queued_async_runs); retry later");
        // Threads start with the first run, so sessions that never run asynchronously have none.
        while (workers_.size() < worker_count_) workers_.emplace_back([this] { work(); });
        queue_.push_back({std::move(inputs), {}});
        future = queue_.back().result.get_future();
    }
    ready_.notify_one();
    return future;
}

void AsyncRuns::work() {
    for (;;) {
        Pending p;
        {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) return;  // stopping, nothing left
            p = std::move(queue_.front());
            queue_.pop_front();
        }
        try {
            p.result.set_value(run_(p.inputs));
        } catch (...) {
            p.result.set_exception(std::current_exception());
        }
    }
}

}  // namespace infer::detail
