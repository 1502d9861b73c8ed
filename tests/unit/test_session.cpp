#include "counting_backend.hpp"

#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <thread>

using namespace infer;

namespace {
bool mentions(const std::exception& e, const std::string& text) {
    return std::string(e.what()).find(text) != std::string::npos;
}

// y = relu(x + x) @ w, z = relu(x)
Graph small_graph() {
    GraphBuilder b("small");
    auto x = b.input("x", DType::f32, {kDynamic, 3});
    std::vector<float> w{1, 0, 0, 1, 1, 1};
    auto wc = b.constant(Tensor::from_vector(w, {3, 2}), "w");
    b.output("y", b.matmul(b.relu(b.add(x, x)), wc));
    b.output("z", b.relu(x));
    return b.build();
}

Tensor rows(const std::vector<float>& v) {
    return Tensor::from_vector(v, {static_cast<int64_t>(v.size() / 3), 3});
}

// The expected y for small_graph, in float64.
std::vector<float> expected_y(const std::vector<float>& x) {
    std::vector<float> y;
    for (size_t r = 0; r < x.size() / 3; ++r) {
        double h[3];
        for (int k = 0; k < 3; ++k) h[k] = std::max(0.0, 2.0 * x[r * 3 + k]);
        y.push_back(static_cast<float>(h[0] + h[2]));
        y.push_back(static_cast<float>(h[1] + h[2]));
    }
    return y;
}

struct RegisteredBackend {
    std::shared_ptr<CountingBackend> backend;
    explicit RegisteredBackend(const std::string& name) : backend(std::make_shared<CountingBackend>(name)) {
        register_backend(backend);
    }
    ~RegisteredBackend() { unregister_backend(backend->name()); }
};
}  // namespace

TEST_CASE("a session runs a graph and names its outputs", "[session]") {
    Session session(small_graph());
    const std::vector<float> x{1, -2, 3, -4, 5, 6};
    Batch out = session.run({{"x", rows(x)}});
    CHECK(out["y"].to_vector<float>() == expected_y(x));
    CHECK(out["z"].to_vector<float>() == std::vector<float>{1, 0, 3, 0, 5, 6});
    CHECK(out.names() == std::vector<std::string>{"y", "z"});
}

TEST_CASE("bad inputs give InvalidArgument naming the culprit and leave the session usable",
          "[session][errors]") {
    Session session(small_graph());
    const std::vector<float> x{1, 2, 3};
    const auto still_works = [&] {
        CHECK(session.run({{"x", rows(x)}})["y"].to_vector<float>() == expected_y(x));
    };
    SECTION("unknown input name") {
        try {
            session.run({{"x", rows(x)}, {"extra", rows(x)}});
            FAIL("expected an error");
        } catch (const InvalidArgument& e) {
            CHECK(mentions(e, "extra"));
        }
        still_works();
    }
    SECTION("missing input") {
        try {
            session.run({});
            FAIL("expected an error");
        } catch (const InvalidArgument& e) {
            CHECK(mentions(e, "'x'"));
            CHECK(mentions(e, "missing"));
        }
        still_works();
    }
    SECTION("wrong shape") {
        try {
            session.run({{"x", Tensor::from_vector(std::vector<float>{1, 2, 3, 4}, {1, 4})}});
            FAIL("expected an error");
        } catch (const InvalidArgument& e) {
            CHECK(mentions(e, "[1,4]"));
            CHECK(mentions(e, "[?,3]"));
        }
        still_works();
    }
    SECTION("wrong dtype") {
        try {
            session.run({{"x", Tensor::from_vector(std::vector<int32_t>{1, 2, 3}, {1, 3})}});
            FAIL("expected an error");
        } catch (const InvalidArgument& e) {
            CHECK(mentions(e, "i32"));
            CHECK(mentions(e, "f32"));
        }
        still_works();
    }
    SECTION("undefined tensor") {
        CHECK_THROWS_AS(session.run({{"x", Tensor()}}), InvalidArgument);
        still_works();
    }
}

TEST_CASE("unknown devices, and CUDA where it is absent, give a DeviceError", "[session][errors]") {
    try {
        Session session(small_graph(), {.device = Device("tpu")});
        FAIL("expected an error");
    } catch (const DeviceError& e) {
        CHECK(mentions(e, "tpu"));
    }
    CHECK_THROWS_AS(small_graph().run({{"x", rows({1, 2, 3})}}, Device("tpu")), DeviceError);
    const auto devices = available_devices();
    const bool have_cuda = std::find(devices.begin(), devices.end(), Device::CUDA) != devices.end();
    if (!have_cuda) {
        try {
            Session session(small_graph(), {.device = Device::CUDA});
            FAIL("expected an error");
        } catch (const DeviceError& e) {
            CHECK(mentions(e, "cuda"));
        }
        // The graph's session cache is not poisoned by the failure.
        Graph g = small_graph();
        CHECK_THROWS_AS(g.run({{"x", rows({1, 2, 3})}}, Device::CUDA), DeviceError);
        CHECK(g.run({{"x", rows({1, 2, 3})}}, Device::CPU)["z"].numel() == 3);
    }
    CHECK_THROWS_AS(Session(small_graph(), {.device = Device("cpu", 1)}), DeviceError);
}

TEST_CASE("ops a backend lacks fall back to the CPU, reported; strict mode refuses",
          "[session][placement]") {
    RegisteredBackend counting("counting");
    Session session(small_graph(), {.device = Device("counting")});
    const std::vector<float> x{-1, 2, -3, 4, 5, -6};
    Batch out = session.run({{"x", rows(x)}});
    CHECK(out["y"].to_vector<float>() == expected_y(x));
    CHECK(out["z"].device() == Device("counting"));
    const PlacementReport report = session.placement();
    CHECK(report.nodes.size() == 4);
    CHECK(report.fallbacks() == 1);  // MatMul
    CHECK(report.copies >= 1);
    CHECK(report.to_string().find("MatMul") != std::string::npos);
    for (const auto& entry : report.nodes)
        CHECK(entry.device == (entry.op == "MatMul" ? Device::CPU : Device("counting")));

    SessionOptions strict{.device = Device("counting"), .strict = true};
    Session refused(small_graph(), strict);  // dynamic input shapes: the plan comes with a run
    try {
        refused.run({{"x", rows(x)}});
        FAIL("expected an error");
    } catch (const Unsupported& e) {
        CHECK(mentions(e, "MatMul"));
        CHECK(mentions(e, "strict"));
    }
    GraphBuilder b;
    auto a = b.input("a", DType::f32, {2, 2});
    b.output("y", b.matmul(a, a));
    CHECK_THROWS_AS(Session(b.build(), strict), Unsupported);  // static shapes: at construction
}

TEST_CASE("a steady-state run allocates only its outputs", "[session][memory]") {
    RegisteredBackend counting("counting_alloc");
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {4, 8});
    auto h = x;
    for (int i = 0; i < 6; ++i) h = b.relu(b.add(h, h));
    b.output("y", h);
    Session session(b.build(), {.device = Device("counting_alloc")});
    Tensor input = Tensor::from_vector(std::vector<float>(32, 0.25f), {4, 8}).to(Device("counting_alloc"));
    session.run({{"x", input}});  // first run: arena, workspaces, streams
    const int before = counting.backend->allocations.load();
    Batch out = session.run({{"x", input}});
    CHECK(counting.backend->allocations.load() - before == 1);  // the output alone
    CHECK(out["y"].to_vector<float>() == std::vector<float>(32, 16.0f));
}

TEST_CASE("runs from many threads at once give each its own correct result", "[session][threads]") {
    Session session(small_graph());
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 50; ++i) {
                const std::vector<float> x{float(t), float(-i), float(i + t), 1, 2, float(t * i)};
                if (session.run({{"x", rows(x)}})["y"].to_vector<float>() != expected_y(x)) ++wrong;
            }
        });
    }
    for (auto& th : threads) th.join();
    CHECK(wrong.load() == 0);
}

TEST_CASE("sessions reject options they cannot honour", "[session][errors]") {
    CHECK_THROWS_AS(Session(small_graph(), {.threads = -1}), InvalidArgument);
    CHECK(parse_precision("bf16") == Precision::bf16);
    CHECK_THROWS_AS(parse_precision("f8"), InvalidArgument);
}

TEST_CASE("the log level can be set and read back", "[log]") {
    const LogLevel before = log_level();
    CHECK(before == LogLevel::warn);  // quiet by default
    set_log_level(LogLevel::info);
    CHECK(log_level() == LogLevel::info);
    set_log_level(LogLevel::off);
    CHECK(log_level() == LogLevel::off);
    set_log_level(before);
}

TEST_CASE("f16 and bf16 sessions keep the f32 interface and stay close to f32", "[session][precision]") {
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {2, 8});
    std::vector<float> w(64), scale(8, 1.0f), bias(8, 0.1f);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * float(int(i % 7) - 3);
    auto h = b.matmul(x, b.constant(Tensor::from_vector(w, {8, 8})));
    h = b.layer_norm(b.add(h, x), b.constant(Tensor::from_vector(scale, {8})),
                     b.constant(Tensor::from_vector(bias, {8})));
    b.output("y", b.softmax(b.relu(h)));
    Graph g = b.build();
    std::vector<float> input(16);
    for (size_t i = 0; i < input.size(); ++i) input[i] = 0.3f * float(i % 5) - 0.6f;
    const Batch batch{{"x", Tensor::from_vector(input, {2, 8})}};
    const std::vector<float> reference = g.run(batch)["y"].to_vector<float>();
    for (Precision p : {Precision::f16, Precision::bf16}) {
        Session session(g, {.precision = p});
        const Tensor y = session.run(batch)["y"];
        CHECK(y.dtype() == DType::f32);
        const std::vector<float> got = y.to_vector<float>();
        for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(reference[i]).margin(2e-2));
    }
}

TEST_CASE("f16 and bf16 sessions keep mask constants finite", "[session][precision]") {
    // Exporters mask attention with the most negative f32; converted naively to f16 (and, by
    // rounding, to bf16) that is -inf, and a row where every position is masked becomes NaN.
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {1, 4});
    const std::vector<float> w{0.1f, -0.2f, 0.3f, 0.0f, 0.5f, 0.1f, -0.4f, 0.2f,
                               -0.3f, 0.2f, 0.1f, 0.4f, 0.0f, 0.3f, -0.1f, 0.2f};
    const std::vector<float> mask(4, std::numeric_limits<float>::lowest());
    auto scores = b.matmul(x, b.constant(Tensor::from_vector(w, {4, 4})));
    b.output("p", b.softmax(b.add(scores, b.constant(Tensor::from_vector(mask, {1, 4})))));
    Graph g = b.build();
    const Batch batch{{"x", Tensor::from_vector(std::vector<float>{0.5f, -1.0f, 2.0f, 0.25f}, {1, 4})}};
    for (Precision p : {Precision::f32, Precision::f16, Precision::bf16}) {
        INFO("precision " << precision_name(p));
        const std::vector<float> got = Session(g, {.precision = p}).run(batch)["p"].to_vector<float>();
        for (float value : got) CHECK(value == Approx(0.25f).margin(1e-3));
    }
}

TEST_CASE("sessions with different thread counts coexist and run at once", "[session][threads]") {
    // A product large enough that the CPU splits it over its threads.
    const int64_t n = 256;
    GraphBuilder b("threads");
    auto x = b.input("x", DType::f32, {n, n});
    std::vector<float> w(static_cast<size_t>(n * n));
    for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) - 3.0f;
    b.output("y", b.matmul(x, b.constant(Tensor::from_vector(w, {n, n}), "w")));
    const Graph graph = b.build();
    std::vector<float> xs(static_cast<size_t>(n * n));
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 5) - 2.0f;
    const Tensor input = Tensor::from_vector(xs, {n, n});
    const std::vector<float> expected = Session(graph, {.threads = 1}).run({{"x", input}})["y"].to_vector<float>();

    Session two(graph, {.threads = 2});
    Session eight(graph, {.threads = 8});
    std::atomic<int> wrong{0};
    std::thread a([&] {
        for (int i = 0; i < 10; ++i) wrong += two.run({{"x", input}})["y"].to_vector<float>() != expected;
    });
    std::thread c([&] {
        for (int i = 0; i < 10; ++i) wrong += eight.run({{"x", input}})["y"].to_vector<float>() != expected;
    });
    a.join();
    c.join();
    CHECK(wrong.load() == 0);
}

TEST_CASE("Dropout in training mode refuses a ratio of 1 and the session runs after", "[session][errors]") {
    GraphBuilder b("dropout");
    const Value x = b.input("x", DType::f32, {3, 4});
    const Value ratio = b.input("ratio", DType::f32, {});
    Tensor on = Tensor::empty(DType::boolean, Shape(std::vector<int64_t>{}));
    *static_cast<uint8_t*>(on.raw_data()) = 1;
    b.output("y", b.op("Dropout", {x, ratio, b.constant(on)}, {{"seed", int64_t{7}}}, 1)[0]);
    const Session session(b.build());
    const Tensor input = Tensor::from_vector(std::vector<float>(12, 1.0f), {3, 4});
    const auto with_ratio = [&](float r) {
        return session.run({{"x", input}, {"ratio", Tensor::from_vector(std::vector<float>{r}, Shape(std::vector<int64_t>{}))}});
    };
    try {
        with_ratio(1.0f);
        FAIL("ratio 1 was accepted");
    } catch (const InvalidArgument& e) {
        CHECK_THAT(e.what(), Catch::Contains("ratio must be in [0, 1)"));
    }
    // Kept elements are scaled by 1 / (1 - ratio), dropped ones are 0; the same seed, the same drops.
    const std::vector<float> y = with_ratio(0.5f)["y"].to_vector<float>();
    CHECK(std::all_of(y.begin(), y.end(), [](float v) { return v == 0.0f || v == 2.0f; }));
    CHECK(with_ratio(0.5f)["y"].to_vector<float>() == y);
}
