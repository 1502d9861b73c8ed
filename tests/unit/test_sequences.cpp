// Sequences and optionals through the public API: sequence inputs and outputs in a Batch, a
// plan per sequence length, Loops that build sequences, reduced precision, and the errors a
// caller can make, each leaving the session usable.
#include <infer/infer.hpp>
#include <infer/tensor_io.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <random>
#include <thread>

using namespace infer;

namespace {

const Shape kScalar(std::vector<int64_t>{});

Tensor random_tensor(const Shape& shape, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> data(static_cast<size_t>(shape.numel()));
    for (float& v : data) v = u(rng);
    return Tensor::from_vector(data, shape);
}

Tensor i64_scalar(int64_t v) { return Tensor::from_vector(std::vector<int64_t>{v}, kScalar); }

Tensor true_scalar() {
    Tensor t = Tensor::empty(DType::boolean, kScalar);
    *static_cast<uint8_t*>(t.raw_data()) = 1;
    return t;
}

void check_equal(const Tensor& got, const Tensor& want) {
    REQUIRE(got.shape() == want.shape());
    CHECK(got.to(Device::CPU).to_vector<double>() == want.to_vector<double>());
}

// (sequence of [n,3] "items", tensor "extra" [1,3], position "at") → items with extra inserted
// at `at`, and everything concatenated.
Graph insert_graph() {
    GraphBuilder b("insert");
    const Value items = b.sequence_input("items", DType::f32, Shape{kDynamic, 3});
    const Value extra = b.input("extra", DType::f32, Shape{1, 3});
    const Value at = b.input("at", DType::i64, kScalar);
    const Value inserted = b.op1("SequenceInsert", {items, extra, at});
    b.output("inserted", inserted);
    b.output("all", b.op1("ConcatFromSequence", {inserted}, {{"axis", int64_t{0}}}));
    b.output("count", b.op1("SequenceLength", {inserted}));
    return b.build();
}

}  // namespace

TEST_CASE("sequence inputs and outputs travel in a Batch, one plan per length", "[session][sequence]") {
    const Graph graph = insert_graph();
    REQUIRE(graph.inputs()[0].kind == ValueKind::sequence);
    REQUIRE(graph.outputs()[0].kind == ValueKind::sequence);
    REQUIRE(graph.outputs()[1].kind == ValueKind::tensor);
    SessionOptions options;
    options.max_cached_plans = 2;
    Session session(graph, options);
    const Tensor extra = random_tensor(Shape{1, 3}, 7);
    for (const size_t length : {size_t{3}, size_t{0}, size_t{1}, size_t{3}}) {
        std::vector<Tensor> items;
        for (size_t i = 0; i < length; ++i) items.push_back(random_tensor(Shape{static_cast<int64_t>(i + 1), 3}, 10 + static_cast<uint32_t>(i)));
        const int64_t at = length == 0 ? 0 : -1;  // before the last, or into the empty one
        Batch in{{"extra", extra}, {"at", i64_scalar(at)}};
        in.set_sequence("items", items);
        const Batch out = session.run(in);
        std::vector<Tensor> expected = items;
        expected.insert(expected.end() - (length == 0 ? 0 : 1), extra);
        const std::vector<Tensor>& got = out.sequence("inserted");
        REQUIRE(got.size() == expected.size());
        for (size_t i = 0; i < got.size(); ++i) check_equal(got[i], expected[i]);
        CHECK(out["count"].to_vector<int64_t>() == std::vector<int64_t>{static_cast<int64_t>(expected.size())});
        CHECK(out["all"].shape()[0] == [&] {
            int64_t rows = 0;
            for (const Tensor& t : expected) rows += t.shape()[0];
            return rows;
        }());
        // The caller owns the outputs: the next run does not write into them.
        const std::vector<double> kept = got.back().to_vector<double>();
        session.run(in);
        CHECK(got.back().to_vector<double>() == kept);
    }
}

TEST_CASE("sequence inputs are checked, and a failed run leaves the session usable", "[session][sequence][errors]") {
    const Graph graph = insert_graph();
    Session session(graph);
    const Batch good = [] {
        Batch in{{"extra", random_tensor(Shape{1, 3}, 1)}, {"at", i64_scalar(0)}};
        in.set_sequence("items", {random_tensor(Shape{2, 3}, 2)});
        return in;
    }();
    SECTION("a tensor given for the sequence") {
        Batch in{{"extra", random_tensor(Shape{1, 3}, 1)}, {"at", i64_scalar(0)}, {"items", random_tensor(Shape{2, 3}, 2)}};
        CHECK_THROWS_WITH(session.run(in), Catch::Contains("'items'") && Catch::Contains("sequence"));
    }
    SECTION("the sequence missing") {
        Batch in{{"extra", random_tensor(Shape{1, 3}, 1)}, {"at", i64_scalar(0)}};
        CHECK_THROWS_AS(session.run(in), InvalidArgument);
    }
    SECTION("an element of another dtype or shape") {
        Batch in = good;
        in.set_sequence("items", {random_tensor(Shape{2, 3}, 2), Tensor::from_vector(std::vector<int64_t>{1, 2, 3}, Shape{1, 3})});
        CHECK_THROWS_WITH(session.run(in), Catch::Contains("element 1 of input 'items'"));
        in.set_sequence("items", {random_tensor(Shape{2, 4}, 2)});
        CHECK_THROWS_WITH(session.run(in), Catch::Contains("element 0 of input 'items'"));
    }
    SECTION("a position out of range") {
        Batch in = good;
        in.set("at", i64_scalar(5));
        CHECK_THROWS_WITH(session.run(in), Catch::Contains("position 5 is out of range"));
    }
    CHECK(session.run(good).sequence("inserted").size() == 2);
}

TEST_CASE("a position computed at run time is refused with a reason", "[session][sequence][errors]") {
    // Positions fed by graph inputs are known when the plan is made (the plan is made for their
    // values); one computed by a SequenceMap body is not.
    GraphBuilder body("body");
    const Value element = body.input("element", DType::f32, Shape{4});
    body.output("argmax", body.op1("ArgMax", {element}, {{"keepdims", int64_t{0}}}));
    GraphBuilder b("computed");
    const Value x = b.input("x", DType::f32, Shape{4});
    const Value s = b.op1("SequenceConstruct", {x, x});
    const Value positions = b.op1("SequenceMap", {s}, {{"body", std::make_shared<const Graph>(body.build())}});
    const Value at = b.op1("SequenceAt", {positions, b.constant(i64_scalar(0))});
    b.output("y", b.op1("SequenceAt", {s, at}));
    Session session(b.build());
    CHECK_THROWS_WITH(session.run({{"x", random_tensor(Shape{4}, 3)}}), Catch::Contains("computed at run time"));
}

TEST_CASE("a Loop that builds a sequence is planned iteration by iteration", "[session][sequence]") {
    // acc starts empty; iteration i appends x * i; the sequence is concatenated after the loop.
    GraphBuilder body("body");
    const Value i = body.input("i", DType::i64, kScalar);
    const Value cond = body.input("cond", DType::boolean, kScalar);
    const Value acc = body.sequence_input("acc", DType::f32);
    const Value x_inner = body.input("x", DType::f32, Shape{2});
    const Value scaled = body.mul(x_inner, body.op1("Cast", {i}, {{"to", int64_t{1}}}));
    body.output("cond_out", body.op1("Identity", {cond}));
    body.output("acc_out", body.op1("SequenceInsert", {acc, scaled}));
    body.output("scan", body.op1("Identity", {scaled}));

    GraphBuilder b("outer");
    const Value x = b.input("x", DType::f32, Shape{2});
    const Value trips = b.input("trips", DType::i64, kScalar);
    const Value empty = b.op1("SequenceEmpty", {}, {{"dtype", int64_t{1}}});
    const auto loop = b.op("Loop", {trips, b.constant(true_scalar()), empty, x},
                           {{"body", std::make_shared<const Graph>(body.build())}, {"implicit_inputs", int64_t{1}}}, 2);
    b.output("joined", b.op1("ConcatFromSequence", {loop[0]}, {{"axis", int64_t{0}}}));
    b.output("stacked", loop[1]);
    const Graph graph = b.build();
    Session session(graph);
    const Tensor xv = Tensor::from_vector(std::vector<float>{1.5f, -2.0f}, Shape{2});
    for (const int64_t n : {int64_t{4}, int64_t{1}}) {
        const Batch out = session.run({{"x", xv}, {"trips", i64_scalar(n)}});
        std::vector<double> want;
        for (int64_t k = 0; k < n; ++k) {
            want.push_back(1.5 * static_cast<double>(k));
            want.push_back(-2.0 * static_cast<double>(k));
        }
        CHECK(out["joined"].to_vector<double>() == want);
        CHECK(out["stacked"].shape() == Shape{n, 2});
        CHECK(out["stacked"].to_vector<double>() == want);
    }
}

TEST_CASE("an optional input may be left out of the batch", "[session][sequence]") {
    GraphBuilder b("optional");
    const Value maybe = b.optional_input("maybe", DType::f32, Shape{3});
    b.output("has", b.op1("OptionalHasElement", {maybe}));
    b.output("same", b.op1("Identity", {maybe}));
    Session session(b.build());
    const Batch none = session.run({});
    CHECK(none["has"].to_vector<double>() == std::vector<double>{0});
    CHECK_FALSE(none.contains("same"));
    const Tensor v = random_tensor(Shape{3}, 5);
    const Batch some = session.run({{"maybe", v}});
    CHECK(some["has"].to_vector<double>() == std::vector<double>{1});
    check_equal(some["same"], v);
}

TEST_CASE("sequences in f16 and bf16 sessions agree with f32", "[session][sequence][precision]") {
    // SplitToSequence → SequenceMap (MatMul by a weight) → ConcatFromSequence.
    GraphBuilder body("body");
    const Value piece = body.input("piece", DType::f32, Shape{2, 8});
    const Value w_inner = body.input("w", DType::f32, Shape{8, 8});
    body.output("y", body.matmul(piece, w_inner));
    GraphBuilder b("split_map_concat");
    const Value x = b.input("x", DType::f32, Shape{6, 8});
    const Value w = b.constant(random_tensor(Shape{8, 8}, 9), "w");
    const Value pieces = b.op1("SplitToSequence", {x, b.constant(i64_scalar(2))}, {{"axis", int64_t{0}}});
    const Value mapped = b.op1("SequenceMap", {pieces, w}, {{"body", std::make_shared<const Graph>(body.build())}});
    b.output("y", b.op1("ConcatFromSequence", {mapped}, {{"axis", int64_t{0}}}));
    const Graph graph = b.build();
    const Batch in{{"x", random_tensor(Shape{6, 8}, 4)}};
    const Tensor want = Session(graph).run(in)["y"];
    const Tensor direct = Session([&] {
        GraphBuilder d("direct");
        const Value dx = d.input("x", DType::f32, Shape{6, 8});
        d.output("y", d.matmul(dx, d.constant(random_tensor(Shape{8, 8}, 9))));
        return d.build();
    }()).run(in)["y"];
    const std::vector<double> a = want.to_vector<double>(), c = direct.to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(c[i]).margin(1e-6));
    for (const Precision precision : {Precision::f16, Precision::bf16}) {
        SessionOptions options;
        options.precision = precision;
        const std::vector<double> got = Session(graph, options).run(in)["y"].to_vector<double>();
        const double tolerance = precision == Precision::f16 ? 1e-2 : 5e-2;
        for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(a[i]).margin(tolerance * 4));
    }
}

TEST_CASE("sequence and optional files round-trip", "[io][sequence]") {
    const std::string dir = (std::filesystem::temp_directory_path() / "infer_sequence_io").string();
    std::filesystem::create_directories(dir);
    const std::vector<Tensor> elements{random_tensor(Shape{2, 3}, 1), random_tensor(Shape{4}, 2)};
    save_sequence_proto(elements, dir + "/s.pb", "s");
    const std::vector<Tensor> back = load_sequence_proto(dir + "/s.pb");
    REQUIRE(back.size() == 2);
    for (size_t i = 0; i < 2; ++i) check_equal(back[i], elements[i]);
    save_optional_proto({false, true, {}}, dir + "/none.pb");
    const OptionalContents none = load_optional_proto(dir + "/none.pb");
    CHECK_FALSE(none.present);
    save_optional_proto({true, false, {elements[0]}}, dir + "/one.pb");
    const OptionalContents one = load_optional_proto(dir + "/one.pb");
    CHECK(one.present);
    CHECK_FALSE(one.sequence);
    check_equal(one.elements.at(0), elements[0]);
    CHECK_THROWS_AS(load_sequence_proto(dir + "/missing.pb"), InvalidArgument);
    std::filesystem::remove_all(dir);
}

TEST_CASE("the batcher refuses graphs with sequence inputs, naming the input", "[batcher][sequence][errors]") {
    const Session session(insert_graph());
    CHECK_THROWS_WITH(Batcher(session), Catch::Contains("'items'") && Catch::Contains("sequence"));
}

TEST_CASE("malformed sequence graphs are refused, naming the node", "[graph][sequence][errors]") {
    SECTION("a sequence op given a tensor") {
        GraphBuilder b("g");
        const Value x = b.input("x", DType::f32, Shape{2});
        b.output("y", b.op1("SequenceAt", {x, b.constant(i64_scalar(0))}, {}, "at"));
        CHECK_THROWS_WITH(b.build(), Catch::Contains("'at'") && Catch::Contains("must be a sequence"));
    }
    SECTION("a tensor op given a sequence") {
        GraphBuilder b("g");
        const Value x = b.input("x", DType::f32, Shape{2});
        b.output("y", b.op1("Relu", {b.op1("SequenceConstruct", {x})}, {}, "relu"));
        CHECK_THROWS_WITH(b.build(), Catch::Contains("'relu'") && Catch::Contains("is a sequence"));
    }
    SECTION("an element of another dtype") {
        GraphBuilder b("g");
        const Value x = b.input("x", DType::f32, Shape{2});
        const Value i = b.input("i", DType::i64, Shape{2});
        b.output("y", b.op1("SequenceInsert", {b.op1("SequenceConstruct", {x}), i}, {}, "insert"));
        CHECK_THROWS_WITH(b.build(), Catch::Contains("'insert'") && Catch::Contains("i64"));
    }
    SECTION("elements that cannot be concatenated") {
        GraphBuilder b("g");
        const Value x = b.input("x", DType::f32, Shape{2, 3});
        const Value z = b.input("z", DType::f32, Shape{2, 4});
        const Value s = b.op1("SequenceConstruct", {x, z});
        b.output("y", b.op1("ConcatFromSequence", {s}, {{"axis", int64_t{0}}}, "concat"));
        const Graph graph = b.build();  // static shapes: the session plans, and fails, at once
        CHECK_THROWS_WITH(Session(graph), Catch::Contains("'concat'") && Catch::Contains("dimension 1"));
    }
}

TEST_CASE("sessions with SequenceMap bodies run from several threads at once", "[session][sequence][concurrency]") {
    GraphBuilder body("body");
    const Value piece = body.input("piece", DType::f32, Shape{2, 8});
    body.output("y", body.op1("Relu", {piece}));
    GraphBuilder b("split_map_concat");
    const Value x = b.input("x", DType::f32, Shape{6, 8});
    const Value pieces = b.op1("SplitToSequence", {x, b.constant(i64_scalar(2))}, {{"axis", int64_t{0}}});
    const Value mapped = b.op1("SequenceMap", {pieces}, {{"body", std::make_shared<const Graph>(body.build())}});
    b.output("y", b.op1("ConcatFromSequence", {mapped}, {{"axis", int64_t{0}}}));
    const Graph graph = b.build();
    // Two sessions of one graph share the body's runner, and each runs from two threads.
    const Session first(graph), second(graph);
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            const Session& session = t % 2 ? first : second;
            for (int i = 0; i < 20; ++i) {
                const Tensor x_value = random_tensor(Shape{6, 8}, static_cast<uint32_t>(t * 100 + i));
                const std::vector<double> in = x_value.to_vector<double>();
                const std::vector<double> got = session.run({{"x", x_value}})["y"].to_vector<double>();
                for (size_t k = 0; k < in.size(); ++k)
                    if (got[k] != std::max(in[k], 0.0)) ++wrong;
            }
        });
    for (auto& thread : threads) thread.join();
    CHECK(wrong == 0);
}
