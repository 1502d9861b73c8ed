// Control-flow ops with malformed subgraphs: each is refused with an error naming the node,
// and a body whose shapes drift from the plan fails cleanly at run time.
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

using namespace infer;

namespace {

const Shape kScalar(std::vector<int64_t>{});

Tensor true_scalar() {
    Tensor t = Tensor::empty(DType::boolean, kScalar);
    *static_cast<uint8_t*>(t.raw_data()) = 1;
    return t;
}

// A Loop over `x` [2] with `body`, `trips` iterations and no scan outputs unless the body has them.
Graph loop_graph(std::shared_ptr<const Graph> body, int64_t trips, size_t outputs = 1) {
    GraphBuilder b("outer");
    const Value x = b.input("x", DType::f32, Shape{2});
    const Value m = b.constant(Tensor::from_vector(std::vector<int64_t>{trips}, kScalar));
    const auto results = b.op("Loop", {m, b.constant(true_scalar()), x}, {{"body", body}}, outputs, "loop");
    for (size_t i = 0; i < results.size(); ++i) b.output("y" + std::to_string(i), results[i]);
    return b.build();
}

}  // namespace

TEST_CASE("control-flow ops refuse malformed subgraphs, naming the node", "[graph][errors]") {
    SECTION("a body with the wrong number of inputs") {
        GraphBuilder body("body");
        const Value x = body.input("x", DType::f32, Shape{2});
        body.output("cond", body.constant(true_scalar()));
        body.output("x_out", body.relu(x));
        try {
            loop_graph(std::make_shared<const Graph>(body.build()), 3);
            FAIL("expected ModelError");
        } catch (const ModelError& e) {
            CHECK(std::string(e.what()).find("'loop'") != std::string::npos);
            CHECK(std::string(e.what()).find("inputs") != std::string::npos);
        }
    }
    SECTION("a body that returns too few outputs") {
        GraphBuilder body("body");
        body.input("i", DType::i64, kScalar);
        const Value cond = body.input("cond", DType::boolean, kScalar);
        body.input("x", DType::f32, Shape{2});
        body.output("cond_out", body.op1("Identity", {cond}));
        CHECK_THROWS_AS(loop_graph(std::make_shared<const Graph>(body.build()), 3), ModelError);
    }
    SECTION("an If without its branches") {
        GraphBuilder b("outer");
        const Value c = b.input("c", DType::boolean, kScalar);
        b.output("y", b.op1("If", {c}, {}, "if"));
        CHECK_THROWS_AS(b.build(), ModelError);
    }
}

TEST_CASE("a Loop whose carried value changes shape: planned inline it grows, as a kernel it fails cleanly",
          "[session][errors][control]") {
    // The carried value doubles in length every iteration.
    const auto doubling_body = [](bool condition_from_counter) {
        GraphBuilder body("body");
        const Value i = body.input("i", DType::i64, kScalar);
        const Value cond = body.input("cond", DType::boolean, kScalar);
        const Value x = body.input("x", DType::f32, Shape{kDynamic});
        // A condition the body computes (i < 1) leaves the iteration count to run time.
        body.output("cond_out", condition_from_counter
                                    ? body.op1("Less", {i, body.constant(Tensor::from_vector(std::vector<int64_t>{1}, kScalar))})
                                    : body.op1("Identity", {cond}));
        body.output("x_out", body.op1("Concat", {x, x}, {{"axis", int64_t{0}}}));
        return std::make_shared<const Graph>(body.build());
    };
    Batch in{{"x", Tensor::from_vector(std::vector<float>{1, 2}, Shape{2})}};
    SECTION("two known iterations, planned one after the other") {
        const Graph g = loop_graph(doubling_body(false), 2);
        CHECK(g.run(in)["y0"].to_vector<double>() == std::vector<double>{1, 2, 1, 2, 1, 2, 1, 2});
    }
    SECTION("iterations decided at run time: the nested plan cannot hold the new shape, and says so") {
        const Graph g = loop_graph(doubling_body(true), 5);
        CHECK_THROWS_AS(g.run(in), Error);
    }
}

TEST_CASE("an If is planned inline when the plan knows its condition, and runs its branch as a kernel when not",
          "[session][control]") {
    // then: x * 2, else: -x, both reading x from the enclosing graph.
    const auto branch = [](bool then) {
        GraphBuilder g(then ? "then" : "else");
        const Value x = g.input("x", DType::f32, Shape{4});
        g.output("y", then ? g.add(x, x) : g.op1("Neg", {x}));
        return std::make_shared<const Graph>(g.build());
    };
    const infer::Attributes if_attributes{{"then_branch", branch(true)}, {"else_branch", branch(false)},
                                          {"implicit_inputs", int64_t{1}}};
    const auto expect = [](const Tensor& y, const std::vector<float>& x, bool then) {
        std::vector<double> want;
        for (float v : x) want.push_back(then ? 2.0 * v : -static_cast<double>(v));
        CHECK(y.to_vector<double>() == want);
    };
    const auto inline_branch = [](const Session& session) {
        bool branch_node = false;
        for (const auto& entry : session.placement().nodes) branch_node = branch_node || entry.node.rfind("if/", 0) == 0;
        return branch_node;
    };
    SECTION("a condition the input's shape decides: the branch's nodes are the plan's") {
        GraphBuilder b("outer");
        const Value x = b.input("x", DType::f32, Shape{kDynamic});
        const Value long_input = b.op1("Greater", {b.op1("Size", {x}), b.constant(Tensor::from_vector(std::vector<int64_t>{3}, kScalar))});
        b.output("y", b.op1("If", {long_input, x}, if_attributes, "if"));
        Session session(b.build());
        for (const std::vector<float>& xs : {std::vector<float>{1, -2, 3, 0.5f}, std::vector<float>{4, -1}}) {
            const int64_t n = static_cast<int64_t>(xs.size());
            expect(session.run({{"x", Tensor::from_vector(xs, Shape{n})}})["y"], xs, n > 3);
            CHECK(inline_branch(session));
        }
    }
    SECTION("a condition fed by a graph input: read at run time, so the plan is not made per value") {
        GraphBuilder b("outer");
        const Value x = b.input("x", DType::f32, Shape{4});
        const Value c = b.input("c", DType::boolean, kScalar);
        b.output("y", b.op1("If", {c, x}, if_attributes, "if"));
        SessionOptions options;
        options.max_cached_plans = 1;
        Session session(b.build(), options);
        const std::vector<float> xs{1, -2, 3, 0.5f};
        for (const bool then : {true, false, true}) {
            Tensor c_value = Tensor::empty(DType::boolean, kScalar);
            *static_cast<uint8_t*>(c_value.raw_data()) = then;
            expect(session.run({{"x", Tensor::from_vector(xs, Shape{4})}, {"c", c_value}})["y"], xs, then);
            CHECK_FALSE(inline_branch(session));
        }
    }
    SECTION("a condition computed by a SequenceMap body: known only at run time") {
        GraphBuilder positive("positive");
        const Value element = positive.input("element", DType::f32, Shape{4});
        positive.output("p", positive.op1("Greater", {positive.op1("ReduceSum", {element}, {{"keepdims", int64_t{0}}}),
                                                      positive.constant(Tensor::from_vector(std::vector<float>{0}, kScalar))}));
        GraphBuilder b("outer");
        const Value x = b.input("x", DType::f32, Shape{4});
        const Value flags = b.op1("SequenceMap", {b.op1("SequenceConstruct", {x})},
                                  {{"body", std::make_shared<const Graph>(positive.build())}});
        const Value c = b.op1("SequenceAt", {flags, b.constant(Tensor::from_vector(std::vector<int64_t>{0}, kScalar))});
        b.output("y", b.op1("If", {c, x}, if_attributes, "if"));
        Session session(b.build());
        for (const std::vector<float>& xs : {std::vector<float>{1, 2, 3, -1}, std::vector<float>{-1, -2, 3, -1}}) {
            expect(session.run({{"x", Tensor::from_vector(xs, Shape{4})}})["y"], xs, xs[0] > 0);
            bool kernel = false;
            for (const auto& entry : session.placement().nodes) kernel = kernel || (entry.node == "if" && entry.op == "If");
            CHECK(kernel);
        }
    }
}

TEST_CASE("a Loop planned inline keeps one copy of its body's weights", "[session][control][memory]") {
    // x ← x · W, eight times, W a 64x64 constant of the body.
    std::vector<float> identity(64 * 64, 0.0f);
    for (size_t i = 0; i < 64; ++i) identity[i * 64 + i] = 1.0f;
    GraphBuilder body("body");
    body.input("i", DType::i64, kScalar);
    const Value cond = body.input("cond", DType::boolean, kScalar);
    const Value x = body.input("x", DType::f32, Shape{1, 64});
    body.output("cond_out", body.op1("Identity", {cond}));
    body.output("x_out", body.matmul(x, body.constant(Tensor::from_vector(identity, Shape{64, 64}))));
    GraphBuilder b("outer");
    const Value in = b.input("x", DType::f32, Shape{1, 64});
    const Value m = b.constant(Tensor::from_vector(std::vector<int64_t>{8}, kScalar));
    b.output("y", b.op("Loop", {m, b.constant(true_scalar()), in}, {{"body", std::make_shared<const Graph>(body.build())}}, 1)[0]);
    Session session(b.build());
    std::vector<float> values(64);
    for (size_t i = 0; i < 64; ++i) values[i] = static_cast<float>(i) - 20.0f;
    const Tensor y = session.run({{"x", Tensor::from_vector(values, Shape{1, 64})}})["y"];
    CHECK(y.to_vector<float>() == values);
    CHECK(session.memory().weights_bytes < 2 * 64 * 64 * sizeof(float));
}
