// The CPU backend's thread pools: a pool per thread count, shared while held, and each thread
// of the caller's using the pool it was given, so two sessions with 2 and 8 threads coexist.
#include "backends/cpu/kernels/parallel.hpp"
#include "host_test_backend.hpp"

#include <infer/backend.hpp>
#include <infer/graph.hpp>
#include <infer/session.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

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

TEST_CASE("planning folds on one CPU pool, even where no kernel of the plan runs on the CPU", "[threads]") {
    // A device with a Relu only: the shape arithmetic before it is folded on the CPU at planning,
    // and nothing of the plan holds the CPU's pool. A pool made and joined per fold cost 2-5 ms a
    // fold on 16 cores (130 ms of DistilBERT's CUDA session start).
    class ReluDevice final : public test_support::HostTestBackend {
    public:
        ReluDevice() : HostTestBackend("reludevice") {
            kernels_.add("Relu", infer::DType::f32, [](infer::KernelContext& ctx) {
                const float* x = ctx.input(0).data<float>();
                float* y = ctx.output(0).data<float>();
                for (int64_t i = 0, n = ctx.output(0).numel(); i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
            });
        }
    };
    infer::register_backend(std::make_shared<ReluDevice>());
    struct Unregister {
        ~Unregister() { infer::unregister_backend("reludevice"); }
    } unregister;
    infer::GraphBuilder b;
    auto x = b.input("x", infer::DType::f32, infer::Shape({2, 8}));
    auto shape = b.op1("Shape", {x});
    for (int i = 0; i < 6; ++i) shape = b.mul(shape, b.constant_i64({1, 1}));  // six folds
    b.output("y", b.relu(b.op1("Reshape", {x, shape})));
    const infer::Graph graph = b.build();
    // Three threads: a count no other test's pool has, so the folds cannot borrow a live one.
    const int64_t before = thread_pools_made();
    infer::Session session(graph, {.device = infer::Device("reludevice", 0), .threads = 3});
    std::vector<float> values(16);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) - 8.0f;
    const infer::Tensor y =
        session.run({{"x", infer::Tensor::from_vector(values, infer::Shape({2, 8}))}})["y"].to(infer::Device::CPU);
    CHECK(thread_pools_made() - before <= 1);
    REQUIRE(y.shape() == infer::Shape({2, 8}));
    for (size_t i = 0; i < values.size(); ++i) CHECK(y.data<float>()[i] == std::max(values[i], 0.0f));
}
