// A small work-sharing pool: each parallel_for posts one job; the caller and idle workers take
// chunks of it from an atomic counter until none are left. A model runs hundreds of small
// kernels in a row, and waking a sleeping thread (a futex call) costs about as much as a small
// kernel, so idle workers and a waiting caller spin for a moment before they sleep. For the
// same reason the job queue is guarded by a spin lock, not a mutex: every spinning worker sees
// a new job at once and reaches for the queue together, and a contended mutex would put all
// but one to sleep and hand it on one futex wake-up at a time, so that with 16 threads the last
// worker joined tens of microseconds late, after the caller had done most of a small kernel.
#include "backends/cpu/kernels/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace infer::cpu {

namespace {

thread_local bool t_inside_pool = false;

// How long a thread polls before it blocks: longer than the gap between two kernels of a run,
// short enough that an idle process gives its cores back almost at once.
constexpr auto kSpin = std::chrono::microseconds(100);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Polls `ready` until it returns true or kSpin has passed; returns its last answer.
template <class Ready>
bool spin_until(Ready ready) {
    const auto deadline = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0;; ++i) {
        if (ready()) return true;
        cpu_relax();
        if (i % 64 == 63 && std::chrono::steady_clock::now() > deadline) return ready();
    }
}

// Held for a deque push or pop only, so a thread waiting for it spins.
class SpinLock {
public:
    void lock() {
        while (held_.exchange(true, std::memory_order_acquire))
            while (held_.load(std::memory_order_relaxed)) cpu_relax();
    }
    void unlock() { held_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> held_{false};
};

struct Job {
    RangeBody run;
    void* body;
    int64_t count, chunk, chunks;
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> finished{0};
    std::mutex mutex;
    std::condition_variable all_done;
    std::exception_ptr error;

    // Takes chunks until none are left. A worker arriving late finds none and never touches
    // `body`, which lives on the caller's stack only until the last chunk finishes.
    void work() {
        for (int64_t c = next.fetch_add(1); c < chunks; c = next.fetch_add(1)) {
            const int64_t begin = c * chunk, end = std::min(count, begin + chunk);
            try {
                run(body, begin, end);
            } catch (...) {
                std::lock_guard lock(mutex);
                if (!error) error = std::current_exception();
            }
            if (finished.fetch_add(1) + 1 == chunks) {
                std::lock_guard lock(mutex);
                all_done.notify_all();
            }
        }
    }
};

std::atomic<int64_t> g_pools_made{0};  // thread_pools_made()

}  // namespace

class ThreadPool {
public:
    explicit ThreadPool(int threads) : threads_(threads) {
        g_pools_made.fetch_add(1);
        for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { serve(); });
    }
    ~ThreadPool() {
        stopping_.store(true);
        {
            std::lock_guard lock(sleep_mutex_);  // so that no worker between its check and its wait misses it
        }
        wake_.notify_all();
        for (auto& w : workers_) w.join();
    }
    int threads() const { return threads_; }

    void run(int64_t count, int64_t chunks, RangeBody body_runner, void* body) {
        auto job = std::make_shared<Job>();
        job->run = body_runner;
        job->body = body;
        job->count = count;
        job->chunk = (count + chunks - 1) / chunks;
        job->chunks = (count + job->chunk - 1) / job->chunk;
        const int64_t helpers = std::min<int64_t>(job->chunks - 1, threads_ - 1);
        {
            std::lock_guard lock(queue_lock_);
            for (int64_t i = 0; i < helpers; ++i) queue_.push_back(job);
            queued_.fetch_add(helpers);  // sequentially consistent with the sleepers_ load below
        }
        wake_sleepers(helpers);
        job->work();
        spin_until([&] { return job->finished.load(std::memory_order_acquire) == job->chunks; });
        std::unique_lock lock(job->mutex);
        job->all_done.wait(lock, [&] { return job->finished.load() == job->chunks; });
        if (job->error) std::rethrow_exception(job->error);
    }

private:
    // A worker counts itself in sleepers_ before it looks at queued_ a last time, and run()
    // counts its job in queued_ before it looks at sleepers_; both in the one sequentially
    // consistent order, so either the worker sees the job or run() sees the sleeper and wakes it
    // (taking sleep_mutex_ first, so the worker is inside its wait, not between check and wait).
    void wake_sleepers(int64_t helpers) {
        if (helpers <= 0 || sleepers_.load() == 0) return;
        {
            std::lock_guard lock(sleep_mutex_);
        }
        if (helpers == 1)
            wake_.notify_one();
        else
            wake_.notify_all();
    }

    // Sequentially consistent loads: the sleeper's check must be ordered after its sleepers_ count.
    bool has_work() const { return queued_.load() > 0 || stopping_.load(); }

    void serve() {
        t_inside_pool = true;
        for (;;) {
            if (!spin_until([&] { return has_work(); })) {
                std::unique_lock lock(sleep_mutex_);
                sleepers_.fetch_add(1);
                wake_.wait(lock, [&] { return has_work(); });
                sleepers_.fetch_sub(1);
            }
            if (stopping_.load()) return;
            std::shared_ptr<Job> job;
            {
                std::lock_guard lock(queue_lock_);
                if (!queue_.empty()) {
                    job = std::move(queue_.front());
                    queue_.pop_front();
                    queued_.fetch_sub(1, std::memory_order_relaxed);
                }
            }
            if (job) job->work();
        }
    }

    int threads_;
    SpinLock queue_lock_;
    std::deque<std::shared_ptr<Job>> queue_;
    // queue_.size(), for spinning workers to poll without the lock.
    std::atomic<int64_t> queued_{0};
    std::atomic<bool> stopping_{false};
    // Sleeping workers wait here; run() takes the mutex only when sleepers_ says one sleeps.
    std::mutex sleep_mutex_;
    std::condition_variable wake_;
    std::atomic<int> sleepers_{0};
    std::vector<std::thread> workers_;
};

namespace {

thread_local ThreadPool* t_pool = nullptr;  // given by UsePool

int resolve(int threads) {
    if (threads > 0) return threads;
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Pools by thread count, each alive while a session holds it. Deliberately leaked: kernels may
// run during static destruction of other objects.
struct Pools {
    std::mutex mutex;
    std::map<int, std::weak_ptr<ThreadPool>> by_threads;
};
Pools& pools() {
    static Pools* p = new Pools;
    return *p;
}

ThreadPool* default_pool();
ThreadPool* current_pool() { return t_pool ? t_pool : default_pool(); }

}  // namespace

std::shared_ptr<ThreadPool> pool_with_threads(int threads) {
    threads = resolve(threads);
    Pools& p = pools();
    std::lock_guard lock(p.mutex);
    std::weak_ptr<ThreadPool>& slot = p.by_threads[threads];
    std::shared_ptr<ThreadPool> pool = slot.lock();
    if (!pool) {
        pool = std::make_shared<ThreadPool>(threads);
        slot = pool;
    }
    return pool;
}

namespace {
ThreadPool* default_pool() {
    static auto* pool = new std::shared_ptr<ThreadPool>(pool_with_threads(0));  // leaked, as above
    return pool->get();
}
}  // namespace

UsePool::UsePool(ThreadPool* pool) : previous_(std::exchange(t_pool, pool)) {}
UsePool::~UsePool() { t_pool = previous_; }

int pool_thread_count() { return current_pool()->threads(); }

int64_t thread_pools_made() { return g_pools_made.load(); }

void parallel_for_range(int64_t count, int64_t grain, RangeBody run, void* body) {
    if (count <= 0) return;
    grain = std::max<int64_t>(grain, 1);
    if (count <= grain || t_inside_pool) {
        run(body, 0, count);
        return;
    }
    ThreadPool* pool = current_pool();
    // A few chunks per thread evens out uneven chunks without much scheduling cost.
    const int64_t chunks = std::min<int64_t>((count + grain - 1) / grain, 4 * pool->threads());
    if (pool->threads() == 1 || chunks <= 1) {
        run(body, 0, count);
        return;
    }
    pool->run(count, chunks, run, body);
}

}  // namespace infer::cpu
