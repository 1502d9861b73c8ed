#pragma once
// The process-wide thread pool of the CPU backend. Kernels split their large loops with
// parallel_for; a parallel_for inside a pool thread runs inline, so nesting cannot deadlock.
#include <cstdint>
#include <type_traits>

namespace infer::cpu {

// Threads our loops use, the caller included; 0 means std::thread::hardware_concurrency().
void set_pool_thread_count(int threads);
int pool_thread_count();

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
