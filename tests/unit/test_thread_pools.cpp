// The CPU backend's thread pools: a pool per thread count, shared while held, and each thread
// of the caller's using the pool it was given, so two sessions with 2 and 8 threads coexist.
#include "backends/cpu/kernels/parallel.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

using namespace infer::cpu;

namespace {
// The distinct threads that ran chunks of a parallel loop whose chunks take long enough (a
// millisecond each) for every woken worker to take some.
size_t threads_used() {
    std::mutex mutex;
    std::set<std::thread::id> seen;
    parallel_for(64, 1, [&](int64_t, int64_t) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        std::lock_guard lock(mutex);
        seen.insert(std::this_thread::get_id());
    });
    return seen.size();
}
}  // namespace

TEST_CASE("pools are shared per thread count and used by the thread they are given to", "[threads]") {
    const auto two = pool_with_threads(2);
    CHECK(pool_with_threads(2) == two);
    const auto eight = pool_with_threads(8);
    CHECK(eight != two);
    size_t with_two = 0, with_eight = 0;
    int count_two = 0, count_eight = 0;
    std::thread a([&] {
        UsePool use(two.get());
        count_two = pool_thread_count();
        for (int i = 0; i < 3; ++i) with_two = std::max(with_two, threads_used());
    });
    std::thread b([&] {
        UsePool use(eight.get());
        count_eight = pool_thread_count();
        for (int i = 0; i < 3; ++i) with_eight = std::max(with_eight, threads_used());
    });
    a.join();
    b.join();
    CHECK(count_two == 2);
    CHECK(count_eight == 8);
    CHECK(with_two <= 2);
    CHECK(with_eight <= 8);
    CHECK(with_eight > 2);  // the eight-thread pool's workers took part
}
