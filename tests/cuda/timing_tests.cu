// The timing rules on a real GPU: CUDA event marks measure device time (a kernel of known length
// is never timed shorter), measure() includes everything a caller waits for, and a model that
// cannot fit fails early with the estimate, leaving the session usable.
#include "test_util.hpp"

#include <infer/backend.hpp>
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

using namespace infer;

namespace {

// Spins until the GPU's global timer (nanoseconds) has advanced by `ns`: a kernel whose length
// is known whatever the clocks.
__global__ void spin_kernel(unsigned long long ns) {
    unsigned long long start = 0, now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

}  // namespace

TEST_CASE("CUDA timing marks measure when the device ran the work", "[cuda][timing]") {
    auto stream = backend_for(Device::CUDA)->create_stream(0);
    auto handle = static_cast<cudaStream_t>(stream->native_handle());
    for (double ms : {0.5, 5.0, 25.0}) {
        const auto host_start = std::chrono::steady_clock::now();
        auto before = stream->mark();
        spin_kernel<<<1, 1, 0, handle>>>(static_cast<unsigned long long>(ms * 1e6));
        REQUIRE(cudaGetLastError() == cudaSuccess);
        auto after = stream->mark();
        const double enqueue_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start).count();
        const double device_ms = stream->elapsed_ms(*before, *after);
        INFO(ms << " ms kernel: events " << device_ms << " ms, host enqueue " << enqueue_ms << " ms");
        CHECK(device_ms >= ms * 0.999);
        CHECK(device_ms < ms + 5.0);
        // The launch itself returned long before the kernel finished: a host clock read without
        // synchronizing would have measured the enqueue, not the work.
        if (ms >= 25.0) CHECK(enqueue_ms < ms / 2);
    }
}

TEST_CASE("measure() on CUDA covers copies and compute", "[cuda][timing]") {
    GraphBuilder b("matmul");
    Value x = b.input("x", DType::f32, {kDynamic, 1024});
    Value w = b.constant(Tensor::from_vector(cuda_test::random_values(1024 * 1024, 7), {1024, 1024}), "w");
    b.output("y", b.relu(b.matmul(b.matmul(x, w), w)));
    SessionOptions options;
    options.device = Device::CUDA;
    Session session(b.build(), options);
    const Batch inputs{{"x", Tensor::from_vector(cuda_test::random_values(512 * 1024, 8), {512, 1024})}};

    // Warm: the first run also creates the cuBLAS handle and its workspace inside the first
    // product's step, which a profile rightly counts but which is not what is checked here.
    session.run(inputs);
    RunProfile profile;
    session.run(inputs, profile);
    double kernels = 0;
    for (const auto& step : profile.steps)
        if (step.kind == StepKind::kernel) kernels += step.ms;
    CHECK(profile.h2d_ms > 0);
    CHECK(profile.used_accelerator);
    CHECK(profile.wall_ms >= kernels + profile.h2d_ms);
    REQUIRE(profile.accelerator_busy_fraction());
    CHECK(*profile.accelerator_busy_fraction() > 0);
    CHECK(*profile.accelerator_busy_fraction() <= 1.0);

    MeasureOptions quick;
    quick.min_time_s = 0.2;
    const Measurement m = measure(session, inputs, 512, quick);
    CHECK(m.latency.min_ms >= kernels * 0.9);
    CHECK(m.h2d_ms > 0);
    CHECK(m.d2h_ms > 0);  // the outputs come back to the host inside the timing
    CHECK(m.latency.median_ms >= m.latency.min_ms);
    CHECK(m.latency.p99_ms >= m.latency.p90_ms);

    // Compute only: inputs already on the GPU, outputs left there. (Such runs replay a captured
    // CUDA graph, so the profiled kernels above are no lower bound for them.)
    const Batch on_gpu{{"x", inputs["x"].to(Device::CUDA)}};
    MeasureOptions compute_only = quick;
    compute_only.outputs_on_device = true;
    const Measurement c = measure(session, on_gpu, 512, compute_only);
    CHECK(c.h2d_ms == 0);
    CHECK(c.d2h_ms == 0);
    CHECK(c.latency.min_ms > 0);
    CHECK(c.latency.median_ms < m.latency.median_ms);  // 2 MiB fewer to copy each way

    const MemoryEstimate memory = session.memory();
    CHECK(memory.device == Device::CUDA);
    CHECK(memory.weights_bytes == 1024 * 1024 * sizeof(float));
    CHECK(memory.activations_bytes >= 2 * 512 * 1024 * sizeof(float));
    CHECK(memory.workspace_bytes > 0);  // cuBLAS's
    CHECK(memory.fits());
}

TEST_CASE("a model too big for the GPU fails early with the estimate", "[cuda][memory]") {
    GraphBuilder b("wide");
    Value x = b.input("x", DType::f32, {kDynamic, 16});
    Value w = b.constant(Tensor::from_vector(cuda_test::random_values(16 * (1 << 20), 9), {16, 1 << 20}), "w");
    b.output("y", b.matmul(x, w));
    const Graph graph = b.build();
    SessionOptions options;
    options.device = Device::CUDA;

    // 300000 rows × 2^20 columns of f32 is 1.2 TB of output: no GPU has it.
    const MemoryEstimate too_big = estimate_memory(graph, options, {{"x", Shape{300000, 16}}});
    CHECK_FALSE(too_big.fits());
    CHECK(too_big.activations_bytes >= 300000ull * (1 << 20) * sizeof(float));

    Session session(graph, options);
    const size_t free_before = device_properties(Device::CUDA).free_memory_bytes;
    const Tensor huge_input = Tensor::from_vector(cuda_test::random_values(300000 * 16, 10), {300000, 16});
    CHECK_THROWS_AS(session.run({{"x", huge_input}}), OutOfMemory);
    try {
        session.run({{"x", huge_input}});
    } catch (const OutOfMemory& e) {
        CHECK_THAT(std::string(e.what()), Catch::Contains("does not fit") && Catch::Contains("activations") &&
                                              Catch::Contains("weights"));
    }
    // Nothing was uploaded for the failed plan...
    CHECK(device_properties(Device::CUDA).free_memory_bytes + (8u << 20) >= free_before);
    // ...and the session still runs shapes that fit.
    const Batch out = session.run({{"x", Tensor::from_vector(cuda_test::random_values(2 * 16, 11), {2, 16})}});
    CHECK(out["y"].shape() == Shape{2, 1 << 20});
}
