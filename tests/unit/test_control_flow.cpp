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

TEST_CASE("a Loop body whose shapes change between iterations fails at run time", "[session][errors]") {
    // The carried value doubles in length every iteration: the plan cannot hold it, and the
    // session says so instead of writing out of bounds.
    GraphBuilder body("body");
    body.input("i", DType::i64, kScalar);
    const Value cond = body.input("cond", DType::boolean, kScalar);
    const Value x = body.input("x", DType::f32, Shape{kDynamic});
    body.output("cond_out", body.op1("Identity", {cond}));
    body.output("x_out", body.op1("Concat", {x, x}, {{"axis", int64_t{0}}}));
    const Graph g = loop_graph(std::make_shared<const Graph>(body.build()), 2);
    Batch in{{"x", Tensor::from_vector(std::vector<float>{1, 2}, Shape{2})}};
    CHECK_THROWS_AS(g.run(in), Error);
}
