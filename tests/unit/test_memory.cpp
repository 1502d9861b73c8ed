// Memory of a session: view ops alias their input, pointwise ops run in place over inputs that
// die there, plans of different shapes share working memory and the plan cache is bounded, and
// with I/O binding a steady run allocates and copies nothing.
#include "core/shared_weights.hpp"
#include "counting_backend.hpp"

#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

using namespace infer;

namespace {

struct RegisteredBackend {
    std::shared_ptr<CountingBackend> backend;
    explicit RegisteredBackend(const std::string& name) : backend(std::make_shared<CountingBackend>(name)) {
        register_backend(backend);
    }
    ~RegisteredBackend() { unregister_backend(backend->name()); }
};

std::vector<float> ramp(size_t n, float scale = 0.01f) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>(i % 37) - 18);
    return v;
}

}  // namespace

TEST_CASE("view ops alias their input: no step, no copy", "[memory]") {
    GraphBuilder b("views");
    auto x = b.input("x", DType::f32, {kDynamic, 4, 6});
    auto flat = b.op1("Flatten", {x}, {{"axis", int64_t{1}}});          // [n, 24]
    auto y = b.relu(flat);
    auto shaped = b.reshape(y, {-1, 6, 4});                              // [n, 6, 4]
    auto lifted = b.op1("Unsqueeze", {shaped, b.constant(Tensor::from_vector(std::vector<int64_t>{1}, {1}), "axes")});
    b.output("z", b.relu(lifted));
    Session session(b.build());
    const std::vector<float> xs = ramp(2 * 24);
    RunProfile profile;
    const Batch out = session.run({{"x", Tensor::from_vector(xs, {2, 4, 6})}}, profile);
    REQUIRE(out["z"].shape() == Shape{2, 1, 6, 4});
    const std::vector<float> z = out["z"].to_vector<float>();
    for (size_t i = 0; i < xs.size(); ++i) CHECK(z[i] == std::max(0.0f, xs[i]));
    // Two Relu kernels ran; the views are in the placement report but took no step.
    CHECK(profile.steps.size() == 2);
    for (const StepTiming& step : profile.steps) CHECK(step.op == "Relu");
    size_t views = 0;
    for (const PlacementEntry& entry : session.placement().nodes)
        views += entry.op == "Flatten" || entry.op == "Reshape" || entry.op == "Unsqueeze";
    CHECK(views == 3);
}

TEST_CASE("a view that is a graph output is the caller's own tensor", "[memory]") {
    GraphBuilder b("view_output");
    auto x = b.input("x", DType::f32, {2, 3});
    auto h = b.relu(x);
    b.output("flat", b.reshape(h, {6}));
    b.output("h", h);
    Session session(b.build());
    const Batch first = session.run({{"x", Tensor::from_vector(ramp(6, 1.0f), {2, 3})}});
    const std::vector<float> kept = first["flat"].to_vector<float>();
    session.run({{"x", Tensor::from_vector(ramp(6, -1.0f), {2, 3})}});
    CHECK(first["flat"].to_vector<float>() == kept);  // not overwritten by the second run
    CHECK(first["h"].to_vector<float>() == kept);
}

TEST_CASE("pointwise ops run in place over inputs that die there", "[memory]") {
    const int64_t n = 64, width = 256;
    GraphBuilder b("chain");
    auto x = b.input("x", DType::f32, {n, 32});
    auto w1 = b.constant(Tensor::from_vector(ramp(32 * width), {32, width}), "w1");
    auto w2 = b.constant(Tensor::from_vector(ramp(width * 8), {width, 8}), "w2");
    auto h = b.matmul(x, w1);
    h = b.op1("Tanh", {b.op1("Sigmoid", {b.relu(h)})});
    b.output("y", b.matmul(b.add(h, h), w2));
    Session session(b.build());
    const std::vector<float> xs = ramp(n * 32, 0.1f);
    const std::vector<float> y = session.run({{"x", Tensor::from_vector(xs, {n, 32})}})["y"].to_vector<float>();
    // One [n, width] buffer serves the whole chain; without in-place updates it takes two.
    const uint64_t one_buffer = n * width * sizeof(float);
    CHECK(session.memory().activations_bytes < 2 * one_buffer);
    // And the values are right (float64 reference).
    const std::vector<float> w1v = ramp(32 * width), w2v = ramp(width * 8);
    for (int64_t r = 0; r < n; r += 13)
        for (int64_t c = 0; c < 8; ++c) {
            double sum = 0;
            for (int64_t k = 0; k < width; ++k) {
                double v = 0;
                for (int64_t t = 0; t < 32; ++t) v += double(xs[r * 32 + t]) * w1v[t * width + k];
                v = std::tanh(1.0 / (1.0 + std::exp(-std::max(0.0, v))));
                sum += 2 * v * w2v[k * 8 + c];
            }
            CHECK(y[r * 8 + c] == Approx(sum).epsilon(1e-4).margin(1e-5));
        }
}

TEST_CASE("memory returns to a steady level over thousands of input shapes", "[memory]") {
    RegisteredBackend counting("counting_shapes");
    GraphBuilder b("shapes");
    auto x = b.input("x", DType::f32, {kDynamic, kDynamic});
    auto h = b.relu(b.add(x, x));
    b.output("y", b.relu(b.add(h, h)));
    SessionOptions options;
    options.device = Device("counting_shapes");
    options.max_cached_plans = 8;
    Session session(b.build(), options);
    const auto run = [&](int64_t rows, int64_t cols) {
        const std::vector<float> xs = ramp(static_cast<size_t>(rows * cols));
        const Tensor input = Tensor::from_vector(xs, {rows, cols}).to(Device("counting_shapes"));
        const std::vector<float> y = session.run({{"x", input}})["y"].to_vector<float>();
        for (size_t i = 0; i < xs.size(); i += 7) REQUIRE(y[i] == std::max(0.0f, 4 * xs[i]));
    };
    run(40, 50);  // the largest shape first: working memory reaches its size once
    const int64_t steady = counting.backend->live_bytes.load();
    int64_t highest = steady;
    for (int64_t rows = 1; rows <= 40; ++rows)
        for (int64_t cols = 1; cols <= 50; ++cols) {  // 2000 distinct shapes
            run(rows, cols);
            highest = std::max(highest, counting.backend->live_bytes.load());
        }
    CHECK(counting.backend->live_bytes.load() <= steady);
    CHECK(highest <= steady + 2 * 40 * 50 * static_cast<int64_t>(sizeof(float)));  // an input and an output in flight
}

TEST_CASE("with bound inputs and outputs a steady run allocates and copies nothing", "[memory][binding]") {
    RegisteredBackend counting("counting_bound");
    const Device device("counting_bound");
    GraphBuilder b("bound");
    auto x = b.input("x", DType::f32, {4, 8});
    auto h = x;
    for (int i = 0; i < 6; ++i) h = b.relu(b.add(h, h));
    b.output("y", h);
    b.output("z", b.relu(x));
    Session session(b.build(), {.device = device});
    const Tensor input = Tensor::from_vector(std::vector<float>(32, 0.25f), {4, 8}).to(device);
    Batch outputs{{"y", Tensor::empty(DType::f32, {4, 8}, device)}, {"z", Tensor::empty(DType::f32, {4, 8}, device)}};
    const Tensor y = outputs["y"];
    session.run({{"x", input}}, outputs);  // first run: arena, streams
    const int allocations = counting.backend->allocations.load();
    const int copies = counting.backend->copies.load();
    for (int i = 0; i < 5; ++i) {
        RunProfile profile;
        session.run({{"x", input}}, outputs, profile);
        CHECK(profile.allocations == 0);
        CHECK(profile.copies == 0);
    }
    CHECK(counting.backend->allocations.load() == allocations);
    CHECK(counting.backend->copies.load() == copies);
    CHECK(outputs["y"].buffer() == y.buffer());  // written where the caller put it
    CHECK(y.to_vector<float>() == std::vector<float>(32, 16.0f));
    CHECK(outputs["z"].to_vector<float>() == std::vector<float>(32, 0.25f));

    // Unbound outputs are still made and added; a bound tensor on the CPU is filled by a copy.
    Batch partly{{"y", Tensor::empty(DType::f32, {4, 8})}};
    RunProfile profile;
    session.run({{"x", input}}, partly, profile);
    CHECK(partly["y"].device() == Device::CPU);
    CHECK(partly["y"].to_vector<float>() == std::vector<float>(32, 16.0f));
    CHECK(partly.contains("z"));
    CHECK(profile.copies == 1);
    CHECK(profile.allocations == 2);  // z, and y's staging on the device
}

TEST_CASE("bound outputs of the wrong name, dtype or shape are refused before running", "[memory][binding][errors]") {
    GraphBuilder b("bound_errors");
    auto x = b.input("x", DType::f32, {2, 3});
    b.output("y", b.relu(x));
    Session session(b.build());
    const Batch inputs{{"x", Tensor::from_vector(ramp(6), {2, 3})}};
    Batch wrong_name{{"q", Tensor::empty(DType::f32, {2, 3})}};
    CHECK_THROWS_WITH(session.run(inputs, wrong_name), Catch::Contains("no output named 'q'"));
    Batch wrong_shape{{"y", Tensor::empty(DType::f32, {3, 2})}};
    CHECK_THROWS_WITH(session.run(inputs, wrong_shape), Catch::Contains("output 'y'") && Catch::Contains("[2,3]"));
    Batch wrong_dtype{{"y", Tensor::empty(DType::f16, {2, 3})}};
    CHECK_THROWS_AS(session.run(inputs, wrong_dtype), InvalidArgument);
    Batch fine{{"y", Tensor::empty(DType::f32, {2, 3})}};
    session.run(inputs, fine);  // still usable
    CHECK(fine["y"].to_vector<float>()[0] == std::max(0.0f, ramp(6)[0]));
}

TEST_CASE("sessions share the derived forms of a constant while one of them holds it", "[memory][session]") {
    using detail::SharedWeights;
    const Tensor weight = Tensor::from_vector(std::vector<float>{1.0f, 2.0f, 3.0f}, {3});
    int made = 0;
    const auto make = [&] {
        ++made;
        return Tensor::from_vector(std::vector<float>{2.0f, 4.0f, 6.0f}, {3});
    };
    {
        const Tensor a = SharedWeights::find_or_make(weight, "doubled", make);
        const Tensor b = SharedWeights::find_or_make(weight, "doubled", make);
        CHECK(made == 1);
        CHECK(a.buffer() == b.buffer());
        CHECK(b.to_vector<float>() == std::vector<float>{2.0f, 4.0f, 6.0f});
        CHECK_FALSE(SharedWeights::find(weight, "tripled").defined());  // another form
        // Another constant with the same values is another constant.
        const Tensor twin = Tensor::from_vector(std::vector<float>{1.0f, 2.0f, 3.0f}, {3});
        CHECK_FALSE(SharedWeights::find(twin, "doubled").defined());
    }
    // Nobody holds the form any more: it is gone, and made again when asked for.
    CHECK_FALSE(SharedWeights::find(weight, "doubled").defined());
    (void)SharedWeights::find_or_make(weight, "doubled", make);
    CHECK(made == 2);

    // A form of several constants is found only for the same living constants, in order.
    {
        const Tensor other = Tensor::from_vector(std::vector<float>{5.0f}, {1});
        auto part = std::make_unique<Tensor>(Tensor::from_vector(std::vector<float>{4.0f}, {1}));
        const Tensor joined = SharedWeights::find_or_make({weight, *part}, "joined", make);
        CHECK(made == 3);
        CHECK(SharedWeights::find_or_make({weight, *part}, "joined", make).buffer() == joined.buffer());
        CHECK(made == 3);
        (void)SharedWeights::find_or_make({weight, other}, "joined", make);  // another second part
        (void)SharedWeights::find_or_make({*part, weight}, "joined", make);  // another order
        CHECK(made == 5);
        // A part gone, and a new constant where it was, is not the form's source any more.
        part = std::make_unique<Tensor>(Tensor::from_vector(std::vector<float>{4.0f}, {1}));
        (void)SharedWeights::find_or_make({weight, *part}, "joined", make);
        CHECK(made == 6);
    }

    // The registry holds weak references only: forms made and dropped over and over leave
    // nothing alive behind them.
    const size_t before = SharedWeights::live_forms();
    for (int i = 0; i < 1000; ++i) {
        const Tensor source = Tensor::from_vector(std::vector<float>{float(i)}, {1});
        (void)SharedWeights::find_or_make(source, "doubled", make);
    }
    CHECK(SharedWeights::live_forms() == before);
}

TEST_CASE("f16 sessions of one graph share their converted weights and outlive each other", "[memory][session]") {
    GraphBuilder b("shared");
    auto x = b.input("x", DType::f32, {2, 4});
    std::vector<float> w(16);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.125f * float(i) - 1.0f;
    b.output("y", b.matmul(x, b.constant(Tensor::from_vector(w, {4, 4}))));
    const Graph g = b.build();
    const Batch batch{{"x", Tensor::from_vector(std::vector<float>{1, 2, 3, 4, -1, -2, -3, -4}, {2, 4})}};
    const size_t before = detail::SharedWeights::live_forms();
    auto first = std::make_unique<Session>(g, SessionOptions{.precision = Precision::f16});
    const std::vector<float> expected = first->run(batch)["y"].to_vector<float>();
    CHECK(detail::SharedWeights::live_forms() == before + 1);  // the f16 weight
    Session second(g, {.precision = Precision::f16});
    CHECK(detail::SharedWeights::live_forms() == before + 1);  // the same one
    first.reset();
    CHECK(second.run(batch)["y"].to_vector<float>() == expected);
}

TEST_CASE("sessions of one graph share its Q, K and V weights joined into one product", "[memory][session]") {
    // Self-attention's three projections of x become one product (fuse_qkv) by the weights side
    // by side: a second session takes the first one's joined weight (and its f16 form) instead
    // of joining, narrowing and uploading its own.
    constexpr int64_t kWidth = 8;
    GraphBuilder b("qkv");
    auto x = b.input("x", DType::f32, {2, 3, kWidth});
    float seed = 0.01f;
    const auto project = [&](Value from) {
        seed += 0.013f;
        std::vector<float> w = ramp(kWidth * kWidth, seed), bias = ramp(kWidth, 2 * seed);
        return b.add(b.matmul(from, b.constant(Tensor::from_vector(w, {kWidth, kWidth}))),
                     b.constant(Tensor::from_vector(bias, {kWidth})));
    };
    auto q = project(x), k = project(x), v = project(x);
    b.output("y", b.op1("Attention", {q, k, v}, {{"num_heads", int64_t{2}}}));
    const Graph g = b.build();
    const Batch batch{{"x", Tensor::from_vector(ramp(2 * 3 * kWidth, 0.05f), {2, 3, kWidth})}};
    for (Precision precision : {Precision::f32, Precision::f16}) {
        INFO("precision " << precision_name(precision));
        const size_t before = detail::SharedWeights::live_forms();
        auto first = std::make_unique<Session>(g, SessionOptions{.precision = precision});
        CHECK(first->op_histogram().at("FusedMatMul") == 1);
        const std::vector<float> expected = first->run(batch)["y"].to_vector<float>();
        const size_t made = detail::SharedWeights::live_forms();
        CHECK(made >= before + 2);  // the joined weight and bias (and their f16 forms)
        Session second(g, {.precision = precision});
        CHECK(detail::SharedWeights::live_forms() == made);  // nothing new
        first.reset();
        CHECK(second.run(batch)["y"].to_vector<float>() == expected);
    }
}
