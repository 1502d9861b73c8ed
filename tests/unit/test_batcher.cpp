// The dynamic batcher: under load from many threads every request gets its own answer, exactly
// once, equal to what the model gives that item alone; ragged items are padded and their
// token outputs cut back; a full queue says Overloaded; deadlines, cancellation, priorities and
// shutdown (draining or not) answer every accepted request exactly once.
#include "host_test_backend.hpp"

#include <infer/backend.hpp>
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

using namespace infer;
using namespace std::chrono_literals;

namespace {

constexpr int64_t kFeatures = 4, kHidden = 8;

std::vector<float> weights() {
    std::vector<float> w(kFeatures * kHidden);
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.7f * static_cast<float>(i)) * 0.5f;
    return w;
}

// tokens = relu(x · W) per token; pooled = Σ over tokens of tokens · mask. Padding with zero
// rows and zero mask changes neither the real tokens nor the pooled sum.
Graph token_model() {
    GraphBuilder b("tokens");
    auto x = b.input("x", DType::f32, {kDynamic, kDynamic, kFeatures});
    auto mask = b.input("mask", DType::f32, {kDynamic, kDynamic});
    auto tokens = b.relu(b.matmul(x, b.constant(Tensor::from_vector(weights(), {kFeatures, kHidden}))));
    auto masked = b.mul(tokens, b.op1("Unsqueeze", {mask, b.constant(Tensor::from_vector(std::vector<int64_t>{-1}, {1}))}));
    b.output("tokens", tokens);
    b.output("pooled", b.op1("ReduceSum", {masked, b.constant(Tensor::from_vector(std::vector<int64_t>{1}, {1}))},
                             {{"keepdims", int64_t{0}}}));
    return b.build();
}

struct Item {
    Batch inputs;
    std::vector<float> tokens, pooled;  // expected, computed here in double
};

Item make_item(uint32_t seed) {
    const int64_t length = 1 + seed % 12;
    std::vector<float> x(static_cast<size_t>(length * kFeatures));
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.37f * static_cast<float>(seed * 31 + i));
    const std::vector<float> w = weights();
    Item item;
    item.inputs = {{"x", Tensor::from_vector(x, {length, kFeatures})},
                   {"mask", Tensor::from_vector(std::vector<float>(static_cast<size_t>(length), 1.0f), {length})}};
    item.pooled.assign(kHidden, 0.0f);
    for (int64_t t = 0; t < length; ++t)
        for (int64_t h = 0; h < kHidden; ++h) {
            double sum = 0;
            for (int64_t f = 0; f < kFeatures; ++f) sum += double(x[size_t(t * kFeatures + f)]) * w[size_t(f * kHidden + h)];
            const float v = static_cast<float>(std::max(sum, 0.0));
            item.tokens.push_back(v);
            item.pooled[size_t(h)] += v;
        }
    return item;
}

bool close(const std::vector<float>& got, const std::vector<float>& want) {
    if (got.size() != want.size()) return false;
    for (size_t i = 0; i < got.size(); ++i)
        if (std::abs(got[i] - want[i]) > 1e-4f * (1.0f + std::abs(want[i]))) return false;
    return true;
}

}  // namespace

TEST_CASE("64 threads x 500 requests: every answer is its own, once, and right", "[batcher]") {
    const Session session(token_model());
    Batcher batcher(session, {.max_batch = 32, .max_delay = 500us, .max_queue = 100000, .workers = 2,
                              .length_buckets = {4, 8, 12}, .trim_outputs = {"tokens"}});
    constexpr int kThreads = 64, kPerThread = 500;
    std::atomic<int> wrong{0}, errors{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < kThreads; ++c)
        clients.emplace_back([&, c] {
            std::vector<std::pair<Item, Batcher::Ticket>> pending;
            for (int i = 0; i < kPerThread; ++i) {
                Item item = make_item(static_cast<uint32_t>(c * kPerThread + i));
                Batcher::Ticket ticket = batcher.submit(item.inputs);
                pending.emplace_back(std::move(item), std::move(ticket));
                if (pending.size() == 16 || i == kPerThread - 1) {  // a few in flight per client
                    for (auto& [expected, t] : pending) {
                        try {
                            const Batch out = t.result.get();
                            if (!close(out["tokens"].to_vector<float>(), expected.tokens) ||
                                !close(out["pooled"].to_vector<float>(), expected.pooled))
                                ++wrong;
                        } catch (...) {
                            ++errors;
                        }
                    }
                    pending.clear();
                }
            }
        });
    for (std::thread& t : clients) t.join();
    const BatcherStats stats = batcher.stats();
    CHECK(wrong == 0);
    CHECK(errors == 0);
    CHECK(stats.accepted == uint64_t{kThreads * kPerThread});
    CHECK(stats.completed == stats.accepted);
    uint64_t batched = 0;
    for (size_t n = 1; n < stats.batch_sizes.size(); ++n) batched += n * stats.batch_sizes[n];
    CHECK(batched == stats.completed);
    CHECK(stats.batches < stats.completed);  // batches did form
    INFO(stats.to_string());
    CHECK(stats.latency_p99_ms > 0);
    // Every batch ran a session, and the worker timed its phases.
    CHECK(stats.run_ms > 0);
    CHECK(stats.stack_ms >= 0);
    CHECK(stats.split_ms >= 0);
}

TEST_CASE("batches filled up to a batch size answer only their own items", "[batcher]") {
    const Session session(token_model());
    CHECK_THROWS_AS(Batcher(session, {.batch_sizes = {4, 2}}), InvalidArgument);
    Batcher batcher(session, {.max_batch = 8, .max_delay = 200ms, .start_when_idle = false, .length_buckets = {12},
                              .trim_outputs = {"tokens"}, .batch_sizes = {4, 8}});
    std::vector<Item> items;
    std::vector<Batcher::Ticket> tickets;
    for (uint32_t seed : {3u, 7u, 10u}) {  // three items within the delay: one batch of 3, run as 4
        items.push_back(make_item(seed));
        tickets.push_back(batcher.submit(items.back().inputs));
    }
    for (size_t i = 0; i < items.size(); ++i) {
        const Batch out = tickets[i].result.get();
        CHECK(close(out["tokens"].to_vector<float>(), items[i].tokens));
        CHECK(close(out["pooled"].to_vector<float>(), items[i].pooled));
    }
    const BatcherStats stats = batcher.stats();
    CHECK(stats.completed == 3);
    REQUIRE(stats.batch_sizes.size() > 3);
    CHECK(stats.batch_sizes[3] == 1);  // the batch counts its items, not the copies
}

TEST_CASE("a full queue answers Overloaded at once; shutdown without draining cancels the rest", "[batcher]") {
    const Session session(token_model());
    Batcher batcher(session, {.max_batch = 100, .max_delay = 10s, .start_when_idle = false, .max_queue = 4});
    std::vector<Batcher::Ticket> tickets;
    for (uint32_t i = 0; i < 4; ++i) tickets.push_back(batcher.submit(make_item(i).inputs));
    CHECK_THROWS_AS(batcher.submit(make_item(9).inputs), Overloaded);
    CHECK(batcher.stats().queue_depth == 4);
    batcher.shutdown(false);
    for (auto& t : tickets) CHECK_THROWS_AS(t.result.get(), Cancelled);
    CHECK_THROWS_WITH(batcher.submit(make_item(1).inputs), Catch::Contains("shutting down"));
    const BatcherStats stats = batcher.stats();
    CHECK(stats.cancelled == 4);
    CHECK(stats.rejected == 2);
}

TEST_CASE("cancel and deadlines fail waiting requests with Cancelled", "[batcher]") {
    const Session session(token_model());
    Batcher batcher(session, {.max_batch = 100, .max_delay = 300ms, .start_when_idle = false, .trim_outputs = {"tokens"}});
    Batcher::Ticket kept = batcher.submit(make_item(1).inputs);
    Batcher::Ticket dropped = batcher.submit(make_item(2).inputs);
    Batcher::Ticket late = batcher.submit(make_item(3).inputs, {.deadline = std::chrono::steady_clock::now() + 1ms});
    CHECK(batcher.cancel(dropped.id));
    CHECK_FALSE(batcher.cancel(dropped.id));  // answered already
    CHECK_THROWS_AS(dropped.result.get(), Cancelled);
    CHECK_THROWS_WITH(late.result.get(), Catch::Contains("deadline"));
    CHECK(close(kept.result.get()["pooled"].to_vector<float>(), make_item(1).pooled));
}

TEST_CASE("with nothing running a request starts at once; while a batch runs, others wait to group", "[batcher]") {
    const Session session(token_model());
    // A delay no test would sit out: only start_when_idle can answer the first request soon.
    Batcher batcher(session, {.max_batch = 8, .max_delay = 30s, .workers = 1});
    const auto start = std::chrono::steady_clock::now();
    CHECK(close(batcher.submit(make_item(4).inputs).result.get()["pooled"].to_vector<float>(), make_item(4).pooled));
    CHECK(std::chrono::steady_clock::now() - start < 10s);
    // The first request's callback holds the only worker (a batch is running) while four more
    // arrive: they wait and run together as one batch once it returns.
    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    batcher.submit(make_item(0).inputs, [&](std::exception_ptr, Batch) {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return release; });
    });
    std::this_thread::sleep_for(50ms);  // the worker is now inside that callback
    std::vector<Batcher::Ticket> waiting;
    for (uint32_t seed : {5u, 6u, 7u, 8u}) waiting.push_back(batcher.submit(make_item(seed).inputs));
    {
        std::lock_guard lock(m);
        release = true;
    }
    cv.notify_all();
    for (Batcher::Ticket& ticket : waiting) ticket.result.get();
    const BatcherStats stats = batcher.stats();
    CHECK(stats.batch_sizes[1] == 2);
    CHECK(stats.batch_sizes[4] == 1);
}

TEST_CASE("higher priorities run first", "[batcher]") {
    const Session session(token_model());
    Batcher batcher(session, {.max_batch = 1, .max_delay = 0us, .workers = 1});
    // The first request's callback holds the only worker until the others are queued.
    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    std::vector<int> order;
    batcher.submit(make_item(0).inputs, [&](std::exception_ptr, Batch) {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return release; });
    });
    std::this_thread::sleep_for(50ms);  // the worker is now inside that callback
    for (int priority : {0, 5, 1, 5}) {
        batcher.submit(make_item(1).inputs, [&, priority](std::exception_ptr, Batch) {
            std::lock_guard lock(m);
            order.push_back(priority);
        }, {.priority = priority});
    }
    {
        std::lock_guard lock(m);
        release = true;
    }
    cv.notify_all();
    batcher.shutdown(true);
    CHECK(order == std::vector<int>{5, 5, 1, 0});
}

TEST_CASE("shutdown under load answers every accepted request exactly once", "[batcher]") {
    const Session session(token_model());
    Batcher batcher(session, {.max_batch = 8, .max_delay = 200us, .max_queue = 64, .workers = 2});
    std::atomic<int> answered{0}, twice{0}, accepted{0}, refused{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < 8; ++c)
        clients.emplace_back([&, c] {
            for (int i = 0; i < 400; ++i) {
                auto seen = std::make_shared<std::atomic<bool>>(false);
                try {
                    batcher.submit(make_item(uint32_t(c * 400 + i)).inputs, [&, seen](std::exception_ptr, Batch) {
                        if (seen->exchange(true)) ++twice;
                        ++answered;
                    });
                    ++accepted;
                } catch (const Overloaded&) {
                    ++refused;
                }
            }
        });
    std::this_thread::sleep_for(20ms);
    batcher.shutdown(true);
    for (std::thread& t : clients) t.join();
    CHECK(twice == 0);
    CHECK(answered == accepted);
    CHECK(accepted + refused == 8 * 400);
    CHECK(batcher.stats().queue_depth == 0);
}

TEST_CASE("items must match the first item's inputs", "[batcher][errors]") {
    const Session session(token_model());
    Batcher batcher(session, {.max_delay = 0us});
    batcher.submit(make_item(1).inputs).result.get();
    CHECK_THROWS_AS(batcher.submit({{"x", Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {1, 4})}}),
                    InvalidArgument);
    CHECK_THROWS_AS(Batcher(session, {.max_batch = 0}), InvalidArgument);
    CHECK_THROWS_AS(Batcher(session, {.length_buckets = {8, 4}}), InvalidArgument);
}

namespace {

// A device whose Relu takes 25 ms longer than the CPU's (a margin no load on a busy CI machine,
// sanitizers included, inverts; 3 ms did, once); a session placed on it runs its other nodes on
// the CPU (fallback), so it computes the same, only slower.
class SlowBackend final : public test_support::HostTestBackend {
public:
    SlowBackend() : HostTestBackend("slow") {
        kernels_.add("Relu", DType::f32, [](KernelContext& ctx) {
            std::this_thread::sleep_for(25ms);
            const float* x = ctx.input(0).data<float>();
            float* y = ctx.output(0).data<float>();
            for (int64_t i = 0; i < ctx.output(0).numel(); ++i) y[i] = x[i] > 0 ? x[i] : 0;
        });
    }
};

}  // namespace

TEST_CASE("routing sends single requests at low load to the faster session", "[batcher][routing]") {
    register_backend(std::make_shared<SlowBackend>());
    struct Unregister {
        ~Unregister() { unregister_backend("slow"); }
    } unregister;
    const Session fast(token_model());
    const Session slow(token_model(), {.device = Device("slow", 0)});
    for (bool slow_first : {false, true}) {
        INFO("slow session given " << (slow_first ? "first" : "second"));
        std::vector<const Session*> sessions{&fast, &slow};
        if (slow_first) std::swap(sessions[0], sessions[1]);
        Batcher batcher(sessions, {.max_batch = 8, .max_delay = 0us, .workers = 2, .trim_outputs = {"tokens"}});
        for (uint32_t i = 0; i < 12; ++i) {  // one at a time: each waits for its answer
            const Item item = make_item(i);
            const Batch out = batcher.submit(item.inputs).result.get();
            CHECK(close(out["tokens"].to_vector<float>(), item.tokens));
        }
        const BatcherStats stats = batcher.stats();
        const size_t fast_index = slow_first ? 1 : 0;
        CHECK(stats.batches_per_session[fast_index] == stats.batches);
        CHECK(stats.batches_per_session[1 - fast_index] == 0);
    }
    CHECK_THROWS_AS(Batcher(std::vector<const Session*>{}), InvalidArgument);
}
