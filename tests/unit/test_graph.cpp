#include <infer/infer.hpp>

#include <catch2/catch.hpp>

using namespace infer;

namespace {
bool mentions(const std::exception& e, const std::string& text) {
    return std::string(e.what()).find(text) != std::string::npos;
}
}  // namespace

TEST_CASE("GraphBuilder builds a validated graph with inferred shapes", "[graph]") {
    GraphBuilder b("mlp");
    auto x = b.input("x", DType::f32, {kDynamic, 4});
    auto w = b.constant(Tensor::from_vector(std::vector<float>(12, 0.5f), {4, 3}), "w");
    auto y = b.relu(b.matmul(x, w));
    b.output("y", y);
    Graph g = b.build();
    CHECK(g.name() == "mlp");
    REQUIRE(g.inputs().size() == 1);
    CHECK(g.inputs()[0].shape == Shape({kDynamic, 4}));
    REQUIRE(g.outputs().size() == 1);
    CHECK(g.outputs()[0].shape == Shape({kDynamic, 3}));
    CHECK(g.node_count() == 2);
    CHECK(g.op_histogram().at("MatMul") == 1);
}

TEST_CASE("graph validation names the node and the problem", "[graph][errors]") {
    SECTION("incompatible shapes") {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2, 3});
        auto w = b.input("w", DType::f32, {4, 5});
        b.output("y", b.op1("MatMul", {x, w}, {}, "bad_matmul"));
        try {
            b.build();
            FAIL("expected an error");
        } catch (const ModelError& e) {
            CHECK(mentions(e, "bad_matmul"));
            CHECK(mentions(e, "[2,3]"));
        }
    }
    SECTION("mixed dtypes") {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2});
        auto i = b.input("i", DType::i64, {2});
        b.output("y", b.add(x, i));
        CHECK_THROWS_AS(b.build(), ModelError);
    }
    SECTION("wrong number of inputs") {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2});
        CHECK_THROWS_AS(b.op1("Relu", {x, x}), ModelError);
    }
    SECTION("unknown op") {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2});
        CHECK_THROWS_AS(b.op1("FancyAttention", {x}), Unsupported);
    }
    SECTION("a value from another builder") {
        GraphBuilder other;
        for (int i = 0; i < 5; ++i) other.input("v" + std::to_string(i), DType::f32, {1});
        auto foreign = other.input("z", DType::f32, {1});
        GraphBuilder b;
        b.input("x", DType::f32, {1});
        CHECK_THROWS_AS(b.relu(foreign), ModelError);
    }
    SECTION("no outputs, duplicate names") {
        GraphBuilder b;
        b.input("x", DType::f32, {1});
        CHECK_THROWS_AS(b.build(), ModelError);
        GraphBuilder d;
        auto x = d.input("x", DType::f32, {1});
        d.input("x", DType::f32, {1});
        d.output("y", x);
        CHECK_THROWS_AS(d.build(), ModelError);
    }
    SECTION("a bad attribute") {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2, 3});
        b.output("y", b.transpose(x, {0, 0}));
        CHECK_THROWS_AS(b.build(), ModelError);
    }
    SECTION("a reshape target whose element count overflows (found by the fuzzer)") {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {15});
        b.output("y", b.reshape(x, {15, INT64_MAX, -1}));
        CHECK_THROWS_AS(b.build(), ModelError);
    }
    SECTION("Where needs a bool condition") {
        GraphBuilder b;
        auto c = b.input("c", DType::f32, {2});
        auto x = b.input("x", DType::f32, {2});
        b.output("y", b.op1("Where", {c, x, x}));
        CHECK_THROWS_AS(b.build(), ModelError);
    }
}

TEST_CASE("shape arithmetic on dynamic dimensions folds away at plan time", "[graph][planner]") {
    // y = Reshape(x, Concat(Gather(Shape(x), 0), [2, 2])): the chain exporters emit.
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {kDynamic, 4});
    auto shape = b.op1("Shape", {x});
    auto batch = b.op1("Gather", {shape, b.constant_i64({0})}, {{"axis", int64_t{0}}});
    auto target = b.op1("Concat", {batch, b.constant_i64({2, 2})}, {{"axis", int64_t{0}}});
    b.output("y", b.op1("Reshape", {x, target}));
    Graph g = b.build();
    CHECK(g.outputs()[0].shape.rank() == 3);  // rank known, dims dynamic until a batch arrives

    Session session(g);
    for (int64_t n : {3, 1, 5}) {
        std::vector<float> v(static_cast<size_t>(n * 4), 1.5f);
        Batch out = session.run({{"x", Tensor::from_vector(v, {n, 4})}});
        CHECK(out["y"].shape() == Shape({n, 2, 2}));
        CHECK(out["y"].to_vector<float>() == v);
    }
    const PlacementReport report = session.placement();
    REQUIRE(report.nodes.size() == 1);  // Shape, Gather and Concat were folded
    CHECK(report.nodes[0].op == "Reshape");
}

TEST_CASE("graph outputs may be inputs or constants", "[graph]") {
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {2});
    auto c = b.constant(Tensor::from_vector(std::vector<float>{7, 8}, {2}), "c");
    b.output("same", x);
    b.output("constant", c);
    b.output("sum", b.add(x, c));
    Graph g = b.build();
    Batch out = g.run({{"x", Tensor::from_vector(std::vector<float>{1, 2}, {2})}});
    CHECK(out["same"].to_vector<float>() == std::vector<float>{1, 2});
    CHECK(out["constant"].to_vector<float>() == std::vector<float>{7, 8});
    CHECK(out["sum"].to_vector<float>() == std::vector<float>{8, 10});
    // The caller owns what it gets: changing it leaves the model alone.
    Tensor constant = out["constant"];
    constant.data<float>()[0] = -1;
    Batch again = g.run({{"x", Tensor::from_vector(std::vector<float>{1, 2}, {2})}});
    CHECK(again["constant"].to_vector<float>() == std::vector<float>{7, 8});
}
