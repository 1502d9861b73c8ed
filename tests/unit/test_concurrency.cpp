// Concurrency: one Session shared by many threads, and the CPU backend's thread pool under
// callers from many threads. These run in every build; under scripts/sanitize.sh thread they are
// the ThreadSanitizer's main workload (plan cache eviction, pooled execution contexts, shared
// arenas, the pool's job queue).
#include "backends/cpu/kernels/parallel.hpp"

#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <memory>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace infer;

namespace {

constexpr int64_t kHidden = 32, kHeads = 4, kHeadSize = kHidden / kHeads;

std::vector<float> pseudo_random(size_t n, uint32_t seed) {
    std::vector<float> v(n);
    uint32_t s = seed * 2654435761u + 12345u;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = static_cast<float>(s >> 8) / static_cast<float>(1u << 24) - 0.5f;
    }
    return v;
}

// Self-attention in miniature over x: [batch, seq, hidden], both dims dynamic: MatMul, Add,
// Reshape, Transpose, batched MatMul, Softmax, LayerNorm and a Relu, so plans differ per shape
// in every intermediate's size.
Graph attention_graph() {
    GraphBuilder b("mini_attention");
    auto x = b.input("x", DType::f32, {kDynamic, kDynamic, kHidden});
    auto w = b.constant(Tensor::from_vector(pseudo_random(kHidden * kHidden, 1), {kHidden, kHidden}), "w");
    auto bias = b.constant(Tensor::from_vector(pseudo_random(kHidden, 2), {kHidden}), "bias");
    auto scale = b.constant(Tensor::from_vector(std::vector<float>(kHidden, 1.5f), {kHidden}), "ln_scale");
    auto shift = b.constant(Tensor::from_vector(std::vector<float>(kHidden, 0.25f), {kHidden}), "ln_bias");
    auto h = b.add(b.matmul(x, w), bias);                                       // [B,S,H]
    auto heads = b.transpose(b.reshape(h, {0, 0, kHeads, kHeadSize}), {0, 2, 1, 3});  // [B,h,S,d]
    auto scores = b.matmul(heads, b.transpose(heads, {0, 1, 3, 2}));             // [B,h,S,S]
    auto probs = b.softmax(scores, -1);
    auto context = b.transpose(b.matmul(probs, heads), {0, 2, 1, 3});           // [B,S,h,d]
    auto merged = b.reshape(context, {0, 0, kHidden});                           // [B,S,H]
    b.output("y", b.layer_norm(b.add(merged, x), scale, shift));
    b.output("scores", b.relu(scores));
    return b.build();
}

struct Request {
    int64_t batch, seq;
    Tensor x;
};

}  // namespace

TEST_CASE("one session shared by 8 threads over more shapes than its plan cache holds",
          "[threads][session]") {
    // 12 shapes (batch x sequence) against a cache of 4: plans are made, evicted and remade
    // while other threads run theirs.
    const std::vector<int64_t> batches{1, 2, 3, 5}, seqs{7, 24, 61};
    std::vector<Request> requests;
    for (int variant = 0; variant < 2; ++variant)
        for (int64_t batch : batches)
            for (int64_t seq : seqs) {
                const auto seed = static_cast<uint32_t>(requests.size() + 100);
                requests.push_back({batch, seq,
                                    Tensor::from_vector(pseudo_random(batch * seq * kHidden, seed),
                                                        {batch, seq, kHidden})});
            }

    // The single-threaded answers, from a session of its own.
    std::vector<std::vector<float>> want_y, want_scores;
    {
        Session reference(attention_graph());
        for (const auto& r : requests) {
            Batch out = reference.run({{"x", r.x}});
            want_y.push_back(out["y"].to_vector<float>());
            want_scores.push_back(out["scores"].to_vector<float>());
            REQUIRE(out["y"].shape() == Shape{r.batch, r.seq, kHidden});
            for (float v : want_y.back()) REQUIRE(std::isfinite(v));
        }
    }

    Session session(attention_graph(), {.max_cached_plans = 4});
    constexpr int kThreads = 8, kRunsPerThread = 18;
    std::atomic<int> mismatches{0}, errors{0};
    std::mutex message_mutex;
    std::string first_message;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kRunsPerThread; ++i) {
                // Each thread walks the requests in its own order, so shapes mix at any moment.
                const size_t k = (static_cast<size_t>(t) * 7 + static_cast<size_t>(i) * 5) % requests.size();
                const Request& r = requests[k];
                try {
                    Batch out;
                    if (i % 3 == 2) {
                        // I/O binding: the caller's tensor is written in place.
                        out.set("y", Tensor::empty(DType::f32, {r.batch, r.seq, kHidden}));
                        session.run({{"x", r.x}}, out);
                    } else {
                        out = session.run({{"x", r.x}});
                    }
                    if (out["y"].to_vector<float>() != want_y[k] ||
                        out["scores"].to_vector<float>() != want_scores[k]) {
                        mismatches.fetch_add(1);
                        std::lock_guard lock(message_mutex);
                        if (first_message.empty())
                            first_message = "thread " + std::to_string(t) + " request " + std::to_string(k) +
                                            " (batch " + std::to_string(r.batch) + ", seq " +
                                            std::to_string(r.seq) + "): result differs";
                    }
                } catch (const std::exception& e) {
                    errors.fetch_add(1);
                    std::lock_guard lock(message_mutex);
                    if (first_message.empty()) first_message = e.what();
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    INFO(first_message);
    CHECK(errors.load() == 0);
    CHECK(mismatches.load() == 0);
    // And the session still answers correctly on its own afterwards.
    CHECK(session.run({{"x", requests[5].x}})["y"].to_vector<float>() == want_y[5]);
}

TEST_CASE("CPU thread pools serve parallel_for from many threads while pools come and go",
          "[threads][pool]") {
    constexpr int kThreads = 8, kRounds = 200;
    constexpr int64_t kCount = 4096;
    std::atomic<int> wrong{0};
    std::atomic<bool> done{false};
    // Sessions with their own thread counts make and drop pools (pool_with_threads) while others
    // run on theirs.
    std::thread churner([&] {
        for (int i = 0; !done.load(); ++i) {
            auto pool = cpu::pool_with_threads(5 + i % 3);
            std::this_thread::yield();
        }
    });
    std::vector<std::thread> callers;
    for (int t = 0; t < kThreads; ++t) {
        callers.emplace_back([&, t] {
            const auto pool = cpu::pool_with_threads(2 + t % 3);  // callers share pools of 2, 3, 4
            cpu::UsePool use(pool.get());
            std::vector<int64_t> out(kCount);
            for (int round = 0; round < kRounds; ++round) {
                cpu::parallel_for(kCount, 64, [&](int64_t begin, int64_t end) {
                    for (int64_t i = begin; i < end; ++i) out[i] = i * (t + 1) + round;
                });
                for (int64_t i = 0; i < kCount; ++i)
                    if (out[i] != i * (t + 1) + round) {
                        wrong.fetch_add(1);
                        break;
                    }
                // The first exception of a job reaches its caller, and the pool stays usable.
                // (No Catch assertions here: they are not thread-safe.)
                if (round % 50 == 0) {
                    try {
                        cpu::parallel_for(kCount, 64, [&](int64_t begin, int64_t) {
                            if (begin >= kCount / 2) throw std::runtime_error("chunk failed");
                        });
                        wrong.fetch_add(1);
                    } catch (const std::runtime_error&) {
                    }
                }
            }
        });
    }
    for (auto& th : callers) th.join();
    done.store(true);
    churner.join();
    CHECK(wrong.load() == 0);
}

namespace {

// A chain of square products, slow enough (tens of milliseconds) that a queue fills behind it.
Graph slow_graph() {
    constexpr int64_t kWidth = 384;
    GraphBuilder b("slow_chain");
    Value x = b.input("x", DType::f32, {kDynamic, kWidth});
    for (int i = 0; i < 8; ++i)
        x = b.relu(b.matmul(x, b.constant(Tensor::from_vector(pseudo_random(kWidth * kWidth, 10 + i), {kWidth, kWidth}))));
    b.output("y", x);
    return b.build();
}

}  // namespace

TEST_CASE("run_async from several threads gives what run gives, and errors arrive through the future", "[concurrency]") {
    const Session session(attention_graph());
    std::vector<Tensor> inputs;
    for (int i = 0; i < 12; ++i)
        inputs.push_back(Tensor::from_vector(pseudo_random(static_cast<size_t>((1 + i % 3) * (4 + i % 5) * kHidden), 100 + i),
                                             {1 + i % 3, 4 + i % 5, kHidden}));
    std::vector<std::vector<float>> want;
    for (const Tensor& x : inputs) want.push_back(session.run({{"x", x}})["y"].to_vector<float>());

    std::vector<std::future<Batch>> futures(inputs.size());
    std::vector<std::thread> callers;
    for (size_t t = 0; t < 3; ++t)
        callers.emplace_back([&, t] {
            for (size_t i = t; i < inputs.size(); i += 3) futures[i] = session.run_async({{"x", inputs[i]}});
        });
    for (auto& caller : callers) caller.join();
    for (size_t i = 0; i < inputs.size(); ++i) CHECK(futures[i].get()["y"].to_vector<float>() == want[i]);

    auto bad = session.run_async({{"x", Tensor::from_vector(std::vector<float>(6, 1.0f), {2, 3})}});
    CHECK_THROWS_AS(bad.get(), InvalidArgument);
    CHECK(session.run_async({{"x", inputs[0]}}).get()["y"].to_vector<float>() == want[0]);  // still usable
}

TEST_CASE("run_async's queue is bounded (Overloaded), and destroying the session cancels what waits", "[concurrency]") {
    SessionOptions options;
    options.max_queued_async_runs = 2;
    options.async_workers = 1;
    auto session = std::make_unique<Session>(slow_graph(), options);
    const Tensor x = Tensor::from_vector(pseudo_random(64 * 384, 7), {64, 384});
    std::vector<std::future<Batch>> accepted;
    size_t refused = 0;
    for (int i = 0; i < 12; ++i) {
        try {
            accepted.push_back(session->run_async({{"x", x}}));
        } catch (const Overloaded&) {
            ++refused;
        }
    }
    // One run at a time on the worker, at most two waiting: most submissions in a tight loop are refused.
    CHECK(refused >= 6);
    CHECK(accepted.size() + refused == 12);
    // Once the first has run, fill the queue again: the worker is busy with a run of tens of
    // milliseconds, so runs are still waiting when the session goes.
    accepted.front().wait();
    for (;;) {
        try {
            accepted.push_back(session->run_async({{"x", x}}));
        } catch (const Overloaded&) {
            break;
        }
    }
    session.reset();  // waits for the run in progress, cancels the waiting ones
    size_t done = 0, cancelled = 0;
    for (auto& f : accepted) {
        Batch out;
        try {
            out = f.get();
        } catch (const Cancelled&) {
            ++cancelled;
            continue;
        }
        CHECK(out["y"].shape() == Shape{64, 384});
        ++done;
    }
    CHECK(done >= 1);
    CHECK(cancelled >= 1);
    CHECK(done + cancelled == accepted.size());
}
