// Timing rules, the memory estimate and device advice, on the CPU and on a user backend whose
// stream really is asynchronous (its kernels run later, on a worker thread), so that a timer
// that forgets to synchronize, or reads the host clock for device work, measures too little.
#include <infer/backend.hpp>
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

using namespace infer;

namespace {

constexpr double kKernelMs = 20.0;

// A stream that runs work on its own thread, in order, like a GPU stream.
class WorkerStream final : public Stream {
public:
    WorkerStream() : worker_([this] { loop(); }) {}
    ~WorkerStream() override {
        enqueue({});
        worker_.join();
    }
    void enqueue(std::function<void()> work) {
        std::lock_guard lock(mutex_);
        queue_.push_back(std::move(work));
        ++enqueued_;
        wake_.notify_all();
    }
    void synchronize() override {
        std::unique_lock lock(mutex_);
        const size_t target = enqueued_;
        wake_.wait(lock, [&] { return finished_ >= target; });
    }
    // A mark is reached when the worker gets to it: it records the time then.
    struct Mark final : TimingMark {
        std::shared_ptr<std::chrono::steady_clock::time_point> at = std::make_shared<std::chrono::steady_clock::time_point>();
    };
    std::unique_ptr<TimingMark> mark() override {
        auto m = std::make_unique<Mark>();
        enqueue([at = m->at] { *at = std::chrono::steady_clock::now(); });
        return m;
    }
    double elapsed_ms(const TimingMark& from, const TimingMark& to) override {
        synchronize();
        return std::chrono::duration<double, std::milli>(*static_cast<const Mark&>(to).at -
                                                         *static_cast<const Mark&>(from).at).count();
    }

private:
    void loop() {
        for (;;) {
            std::function<void()> work;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] { return !queue_.empty(); });
                work = std::move(queue_.front());
                queue_.pop_front();
            }
            if (!work) return;
            work();
            std::lock_guard lock(mutex_);
            ++finished_;
            wake_.notify_all();
        }
    }
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> queue_;
    size_t enqueued_ = 0, finished_ = 0;
    std::thread worker_;
};

// Host memory, and a Relu that returns at once but takes kKernelMs on the stream.
class AsyncBackend final : public Backend {
public:
    AsyncBackend() {
        kernels_.add("Relu", DType::f32, [](KernelContext& ctx) {
            auto* stream = static_cast<WorkerStream*>(ctx.stream());
            const float* x = ctx.input(0).data<float>();
            float* y = ctx.output(0).data<float>();
            const int64_t n = ctx.output(0).numel();
            stream->enqueue([x, y, n] {
                std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(kKernelMs));
                for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
            });
        });
    }
    std::string name() const override { return "asynctest"; }
    DeviceProperties properties(int) const override {
        DeviceProperties p;
        p.name = "asynchronous test device";
        p.host_accessible = true;
        p.total_memory_bytes = p.free_memory_bytes = 1ull << 30;
        return p;
    }
    std::shared_ptr<Buffer> allocate(size_t bytes, int index) override {
        void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
        return std::make_shared<Buffer>(p, bytes, Device("asynctest", index), [](void* q) { std::free(q); },
                                        Buffer::Flags{true, false});
    }
    std::unique_ptr<Stream> create_stream(int) override { return std::make_unique<WorkerStream>(); }
};

Graph relu_graph() {
    GraphBuilder b("relu");
    b.output("y", b.relu(b.input("x", DType::f32, {kDynamic, 8})));
    return b.build();
}

struct RegisteredAsyncBackend {
    RegisteredAsyncBackend() { register_backend(std::make_shared<AsyncBackend>()); }
    ~RegisteredAsyncBackend() { unregister_backend("asynctest"); }
};

}  // namespace

TEST_CASE("latency statistics use nearest-rank percentiles", "[measure]") {
    std::vector<double> samples;
    for (int i = 100; i >= 1; --i) samples.push_back(i);
    const LatencyStats s = LatencyStats::from_samples(samples);
    CHECK(s.runs == 100);
    CHECK(s.min_ms == 1);
    CHECK(s.median_ms == Approx(50.5));
    CHECK(s.p90_ms == 90);
    CHECK(s.p99_ms == 99);
    CHECK(s.mean_ms == Approx(50.5));
    CHECK_THROWS_AS(LatencyStats::from_samples({}), InvalidArgument);
}

TEST_CASE("timing an asynchronous device waits for its work", "[measure]") {
    RegisteredAsyncBackend registered;
    SessionOptions options;
    options.device = Device("asynctest");
    Session session(relu_graph(), options);
    const Batch inputs{{"x", Tensor::from_vector(std::vector<float>(16, -1.5f), {2, 8})}};

    MeasureOptions quick;
    quick.warmup = 1;
    quick.min_time_s = 0;
    quick.min_runs = 3;
    quick.profiled_runs = 2;
    const Measurement m = measure(session, inputs, 2, quick);
    // A kernel of known length on the device: no timing may come out shorter.
    CHECK(m.latency.min_ms >= kKernelMs);
    CHECK(m.throughput_per_s <= 2 * 1000.0 / kKernelMs);
    REQUIRE(m.accelerator_busy_fraction.has_value());
    CHECK(*m.accelerator_busy_fraction > 0.5);
    CHECK(*m.accelerator_busy_fraction <= 1.0);

    RunProfile profile;
    const Batch out = session.run(inputs, profile);
    CHECK(out["y"].to_vector<float>() == std::vector<float>(16, 0.0f));
    const StepTiming* relu = nullptr;
    for (const auto& step : profile.steps)
        if (step.kind == StepKind::kernel) relu = &step;
    REQUIRE(relu);
    CHECK(relu->op == "Relu");
    CHECK(relu->device == Device("asynctest"));
    CHECK(relu->ms >= kKernelMs);
    CHECK(profile.wall_ms >= relu->ms);
    CHECK(profile.accelerator_busy_ms >= relu->ms);
}

TEST_CASE("a profiled CPU run accounts for every step", "[measure]") {
    GraphBuilder b("mlp");
    Value x = b.input("x", DType::f32, {kDynamic, 4});
    Value w = b.constant(Tensor::from_vector(std::vector<float>(12, 0.5f), {4, 3}), "w");
    b.output("y", b.matmul(b.relu(x), w));  // two steps: a Relu after the MatMul would fuse into it
    Session session(b.build());
    RunProfile profile;
    const Batch out = session.run({{"x", Tensor::from_vector(std::vector<float>(8, 1.0f), {2, 4})}}, profile);
    CHECK(out["y"].to_vector<float>() == std::vector<float>(6, 2.0f));
    REQUIRE(profile.steps.size() == 2);
    double steps = 0;
    for (const auto& s : profile.steps) steps += s.ms;
    CHECK(profile.wall_ms >= steps);
    CHECK_FALSE(profile.accelerator_busy_fraction().has_value());
}

TEST_CASE("memory estimates count weights, activations and nothing uploaded", "[measure]") {
    GraphBuilder b("mlp");
    Value x = b.input("x", DType::f32, {kDynamic, 64});
    Value w1 = b.constant(Tensor::from_vector(std::vector<float>(64 * 256, 0.01f), {64, 256}), "w1");
    Value w2 = b.constant(Tensor::from_vector(std::vector<float>(256 * 8, 0.01f), {256, 8}), "w2");
    b.output("y", b.matmul(b.relu(b.matmul(x, w1)), w2));
    const Graph graph = b.build();

    const MemoryEstimate small = estimate_memory(graph, {}, {{"x", Shape{4, 64}}});
    CHECK(small.device == Device::CPU);
    // The weights, and the copies a CPU kernel packs for itself (f32 panels on an AVX2-only CPU,
    // padded to 16 columns): counted, bounded.
    const size_t plain = (64 * 256 + 256 * 8) * sizeof(float);
    CHECK(small.weights_bytes >= plain);
    CHECK(small.weights_bytes <= 3 * plain);
    CHECK(small.activations_bytes >= 4 * 256 * sizeof(float) + 4 * 8 * sizeof(float));
    CHECK(small.device_total_bytes > 0);
    CHECK(small.fits());
    CHECK_THAT(small.to_string(), Catch::Contains("weights") && Catch::Contains("fits"));
    const MemoryEstimate large = estimate_memory(graph, {}, {{"x", Shape{4096, 64}}});
    CHECK(large.activations_bytes > small.activations_bytes);
    CHECK(large.weights_bytes >= small.weights_bytes);

    SessionOptions half;
    half.precision = Precision::f16;
    CHECK(estimate_memory(graph, half, {{"x", Shape{4, 64}}}).weights_bytes == plain / 2);

    CHECK_THROWS_WITH(estimate_memory(graph, {}, {}), Catch::Contains("no shape given for input 'x'"));
    CHECK_THROWS_WITH(estimate_memory(graph, {}, {{"x", Shape{4, 63}}}), Catch::Contains("expects"));
    CHECK_THROWS_WITH(estimate_memory(graph, {}, {{"x", Shape{4, 64}}, {"z", Shape{1}}}),
                      Catch::Contains("no input named 'z'"));
    SessionOptions nowhere;
    nowhere.device = Device("nosuchdevice");
    CHECK_THROWS_AS(estimate_memory(graph, nowhere, {{"x", Shape{4, 64}}}), DeviceError);

    Session session(graph);
    session.run({{"x", Tensor::from_vector(std::vector<float>(4 * 64, 1.0f), {4, 64})}});
    CHECK(session.memory().weights_bytes == small.weights_bytes);
    CHECK(session.memory().activations_bytes == small.activations_bytes);
}

TEST_CASE("device advice follows the measured profiles", "[measure][advice]") {
    const Device gpu("cuda", 0);
    // The CPU is faster for small batches, the GPU from batch 8 on.
    DeviceAdvisor advisor({{"cpu f32", Device::CPU, 1, 1.0},  {"cpu f32", Device::CPU, 4, 3.0},
                           {"cpu f32", Device::CPU, 8, 6.0},  {"cpu f32", Device::CPU, 16, 12.0},
                           {"cuda:0 f16", gpu, 1, 2.0},       {"cuda:0 f16", gpu, 4, 4.0},
                           {"cuda:0 f16", gpu, 8, 4.5},       {"cuda:0 f16", gpu, 16, 5.0}});
    CHECK(advisor.advise(1).config == "cpu f32");
    CHECK(advisor.advise(1).alternative == std::optional<std::string>("cuda:0 f16"));
    CHECK(advisor.advise(16).config == "cuda:0 f16");
    CHECK(advisor.advise(16).device == gpu);
    CHECK(advisor.advise(16).throughput_per_s == Approx(16 * 1000.0 / 5.0));
    // Interpolated on log-log axes between batches 1 and 4: 2 ms at batch 2 on the GPU.
    CHECK(advisor.advise(2).latency_ms == Approx(std::sqrt(1.0 * 3.0)));
    // Beyond the largest batch latency grows in proportion.
    CHECK(advisor.advise(64).latency_ms == Approx(20.0));
    CHECK(advisor.latency_crossover() == std::optional<int64_t>(8));
    // The CPU's best throughput is 1333/s (batch 4 and 8..16: 1333); the GPU passes it at 8.
    CHECK(advisor.throughput_crossover() == std::optional<int64_t>(8));
    CHECK(advisor.recommendation() ==
          "batch 1–4: cpu f32 (1.00 ms vs 2.00 ms on cuda:0 f16 at batch 1); "
          "batch 8–16: cuda:0 f16 (4.50 ms vs 6.00 ms on cpu f32 at batch 8)");

    DeviceAdvisor cpu_only({{"cpu f32", Device::CPU, 1, 1.0}});
    CHECK_FALSE(cpu_only.latency_crossover());
    CHECK_THAT(cpu_only.recommendation(), Catch::Contains("no accelerator measured"));
    CHECK_THROWS_AS(DeviceAdvisor().advise(1), InvalidArgument);
    CHECK_THROWS_AS(DeviceAdvisor({{"bad", Device::CPU, 0, 1.0}}), InvalidArgument);
}
