#pragma once
// A session's asynchronous runs (Session::run_async): a bounded queue of runs and a few worker
// threads that take them in order and run them, each fulfilling its run's promise. The caller's
// thread returns at once; the work (planning, copies, kernels, the final synchronization) happens
// on a worker. Memory is bounded: beyond `capacity` waiting runs, submit throws Overloaded.
// Destruction cancels the runs still waiting (their futures throw Cancelled) and waits for those
// being run.
#include <infer/batch.hpp>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace infer::detail {

class AsyncRuns {
public:
    using RunFunction = std::function<Batch(const Batch&)>;
    AsyncRuns(RunFunction run, size_t capacity, size_t workers);
    ~AsyncRuns();
    AsyncRuns(const AsyncRuns&) = delete;
    AsyncRuns& operator=(const AsyncRuns&) = delete;

    std::future<Batch> submit(Batch inputs);

private:
    struct Pending {
        Batch inputs;
        std::promise<Batch> result;
    };
    void work();

    RunFunction run_;
    size_t capacity_, worker_count_;
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<Pending> queue_;
    bool stopping_ = false;
    std::vector<std::thread> workers_;  // started with the first submit
};

}  // namespace infer::detail
