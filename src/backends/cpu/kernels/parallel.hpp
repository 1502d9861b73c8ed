#pragma once
// The CPU backend's thread pools. Kernels split their large loops with parallel_for, which uses
// the pool the calling thread was given (UsePool: a session's SessionOptions::threads), else the
// default pool of std::thread::hardware_concurrency() threads. A parallel_for inside a pool
// thread runs inline, so nesting cannot deadlock.
#include <cstdint>
#include <memory>
#include <type_traits>

namespace infer::cpu {

class ThreadPool;

// The pool of `threads` threads (the caller included; 0: hardware_concurrency), shared by every
// session asking for that many while any of them holds it.
std::shared_ptr<ThreadPool> pool_with_threads(int threads);

// While it lives, parallel_for on this thread uses `pool`.
class UsePool {
public:
    explicit UsePool(ThreadPool* pool);
    ~UsePool();
    UsePool(const UsePool&) = delete;
    UsePool& operator=(const UsePool&) = delete;

private:
    ThreadPool* previous_;
};

// Threads the calling thread's loops use, the caller included.
int pool_thread_count();

// Pools made so far in this process (tests: making one starts its threads, so none should be
// made per kernel of a plan).
int64_t thread_pools_made();

using RangeBody = void (*)(void* body, int64_t begin, int64_t end);
void parallel_for_range(int64_t count, int64_t grain, RangeBody run, void* body);

// Calls body(begin, end) on disjoint ranges covering [0, count), each (but the last) at least
// `grain` long, and returns when all are done. The first exception thrown is rethrown here.
template <class Body>
void parallel_for(int64_t count, int64_t grain, Body&& body) {
    using B = std::remove_reference_t<Body>;
    parallel_for_range(
        count, grain,
        [](void* b, int64_t begin, int64_t end) { (*static_cast<B*>(b))(begin, end); },
        const_cast<void*>(static_cast<const void*>(&body)));
}

// A grain (in iterations) giving each task about `work_per_task` units when one iteration
// costs `work_per_iteration` units; the unit is an element touched, roughly.
inline int64_t grain_for(int64_t work_per_iteration, int64_t work_per_task = 32768) {
    if (work_per_iteration <= 0) return work_per_task;
    const int64_t g = work_per_task / work_per_iteration;
    return g < 1 ? 1 : g;
}

}  // namespace infer::cpu
