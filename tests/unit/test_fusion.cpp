// Graph rewrites a session makes before planning. GELU written out as elementwise ops (PyTorch's
// export before opset 20) becomes one Gelu node; chains whose parts are read elsewhere stay.
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace infer;

namespace {

Value scalar(GraphBuilder& b, float value) { return b.constant(Tensor::from_vector(std::vector<float>{value}, {})); }

// One spelling of x * 0.5 * (1 + erf(x / sqrt(2))) after `x`.
using Spelling = std::function<Value(GraphBuilder&, Value)>;

const std::vector<std::pair<std::string, Spelling>> kSpellings{
    {"((1 + erf(x / sqrt2)) * x) * 0.5 (PyTorch nn.GELU)",
     [](GraphBuilder& b, Value x) {
         auto e = b.op1("Erf", {b.div(x, scalar(b, 1.4142135f))});
         return b.mul(b.mul(x, b.add(e, scalar(b, 1.0f))), scalar(b, 0.5f));
     }},
    {"(x * 0.5) * (1 + erf(x * 1/sqrt2))",
     [](GraphBuilder& b, Value x) {
         auto e = b.op1("Erf", {b.mul(scalar(b, 0.70710678f), x)});
         return b.mul(b.mul(x, scalar(b, 0.5f)), b.add(scalar(b, 1.0f), e));
     }},
    {"((1 + erf(x / sqrt2)) * 0.5) * x",
     [](GraphBuilder& b, Value x) {
         auto e = b.op1("Erf", {b.div(x, scalar(b, 1.4142135f))});
         return b.mul(x, b.mul(b.add(e, scalar(b, 1.0f)), scalar(b, 0.5f)));
     }},
};

size_t count_op(const PlacementReport& report, const std::string& op) {
    size_t count = 0;
    for (const auto& entry : report.nodes) count += entry.op == op;
    return count;
}

Batch sample_input() {
    std::vector<float> values(24);
    for (size_t i = 0; i < values.size(); ++i) values[i] = 0.37f * float(i) - 4.1f;
    return {{"x", Tensor::from_vector(values, {2, 12})}};
}

}  // namespace

TEST_CASE("GELU chains fuse into one Gelu node with the same results", "[fusion]") {
    for (const auto& [label, spell] : kSpellings) {
        INFO(label);
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2, 12});
        b.output("y", spell(b, b.relu(x)));  // a computed input, as in a model's FFN
        Session session(b.build());
        const Batch input = sample_input();
        const std::vector<float> got = session.run(input)["y"].to_vector<float>();
        CHECK(count_op(session.placement(), "Gelu") == 1);
        CHECK(count_op(session.placement(), "Erf") == 0);
        CHECK(count_op(session.placement(), "Mul") == 0);
        const std::vector<float> in = input.at("x").to_vector<float>();
        for (size_t i = 0; i < got.size(); ++i) {
            const double v = std::max(0.0, double(in[i]));
            CHECK(got[i] == Approx(0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))).margin(1e-6));
        }
    }
}

TEST_CASE("x times Sigmoid(x) fuses into one Silu node in either order, and not when the Sigmoid is read on", "[fusion]") {
    for (const bool sigmoid_first : {false, true}) {
        for (const bool sigmoid_is_output : {false, true}) {
            INFO("sigmoid first " << sigmoid_first << ", sigmoid an output " << sigmoid_is_output);
            GraphBuilder b;
            auto x = b.relu(b.input("x", DType::f32, {2, 12}));  // a computed input, as in a model
            auto s = b.sigmoid(x);
            b.output("y", sigmoid_first ? b.mul(s, x) : b.mul(x, s));
            if (sigmoid_is_output) b.output("s", s);
            Session session(b.build());
            const Batch input = sample_input();
            const std::vector<float> got = session.run(input)["y"].to_vector<float>();
            CHECK(count_op(session.placement(), "Silu") == (sigmoid_is_output ? 0u : 1u));
            CHECK(count_op(session.placement(), "Sigmoid") == (sigmoid_is_output ? 1u : 0u));
            const std::vector<float> in = input.at("x").to_vector<float>();
            for (size_t i = 0; i < got.size(); ++i) {
                const double v = std::max(0.0, double(in[i]));
                CHECK(got[i] == Approx(v / (1 + std::exp(-v))).epsilon(1e-6).margin(1e-7));
            }
        }
    }
    // x times the Sigmoid of something else stays two nodes.
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {2, 12});
    b.output("y", b.mul(x, b.sigmoid(b.relu(x))));
    Session session(b.build());
    CHECK(count_op(session.placement(), "Silu") == 0);
}

TEST_CASE("GELU chains stay unfused when a part is read elsewhere or differs", "[fusion]") {
    SECTION("an intermediate value is also a graph output") {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2, 12});
        auto e = b.op1("Erf", {b.div(x, scalar(b, 1.4142135f))});
        b.output("erf", e);
        b.output("y", b.mul(b.mul(x, b.add(e, scalar(b, 1.0f))), scalar(b, 0.5f)));
        Session session(b.build());
        session.run(sample_input());
        CHECK(count_op(session.placement(), "Gelu") == 0);
        CHECK(count_op(session.placement(), "Erf") == 1);
    }
    SECTION("another constant than 1/2") {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2, 12});
        auto e = b.op1("Erf", {b.div(x, scalar(b, 1.4142135f))});
        b.output("y", b.mul(b.mul(x, b.add(e, scalar(b, 1.0f))), scalar(b, 0.6f)));
        Session session(b.build());
        session.run(sample_input());
        CHECK(count_op(session.placement(), "Gelu") == 0);
    }
}

namespace {

Tensor ramp(const std::vector<int64_t>& dims, float step, float start) {
    size_t count = 1;
    for (int64_t d : dims) count *= static_cast<size_t>(d);
    std::vector<float> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = start + step * static_cast<float>(i % 23) - 0.3f * float(i % 7);
    return Tensor::from_vector(values, Shape(dims));
}

}  // namespace

namespace {

// x [rows, 4] · ramp({4, 5}, 0.1, -1) + ramp({5}, 0.2, -0.4) in double, row-major [rows, 5]: the
// product the FusedMatMul tests below build, before their activation.
std::vector<double> reference_product(const Tensor& x) {
    const std::vector<float> xs = x.to_vector<float>(), ws = ramp({4, 5}, 0.1f, -1.0f).to_vector<float>(),
                             bs = ramp({5}, 0.2f, -0.4f).to_vector<float>();
    std::vector<double> out;
    for (size_t r = 0; r < xs.size() / 4; ++r)
        for (size_t c = 0; c < 5; ++c) {
            double v = bs[c];
            for (size_t k = 0; k < 4; ++k) v += double(xs[r * 4 + k]) * ws[k * 5 + c];
            out.push_back(v);
        }
    return out;
}

}  // namespace

TEST_CASE("MatMul by a weight with its bias and activation becomes one FusedMatMul", "[fusion]") {
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {2, 3, 4});
    auto w = b.constant(ramp({4, 5}, 0.1f, -1.0f));
    auto bias = b.constant(ramp({5}, 0.2f, -0.4f));
    b.output("y", b.relu(b.add(b.matmul(x, w), bias)));
    Session session(b.build());
    const Batch input{{"x", ramp({2, 3, 4}, 0.3f, -2.0f)}};
    const std::vector<float> got = session.run(input)["y"].to_vector<float>();
    CHECK(count_op(session.placement(), "FusedMatMul") == 1);
    CHECK(session.placement().nodes.size() == 1);
    const std::vector<double> product = reference_product(input.at("x"));
    REQUIRE(product.size() == got.size());
    for (size_t i = 0; i < product.size(); ++i) CHECK(got[i] == Approx(std::max(product[i], 0.0)).margin(1e-5));
}

TEST_CASE("FusedMatMul absorbs the exact Gelu and the tanh approximation (GPT-2's) as what each computes", "[fusion]") {
    for (const std::string approximate : {"none", "tanh"}) {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2, 4});
        auto sum = b.add(b.matmul(x, b.constant(ramp({4, 5}, 0.1f, -1.0f))), b.constant(ramp({5}, 0.2f, -0.4f)));
        b.output("y", b.op1("Gelu", {sum}, {{"approximate", approximate}}));
        Session session(b.build());
        const Batch input{{"x", ramp({2, 4}, 0.9f, -3.0f)}};
        const std::vector<float> got = session.run(input)["y"].to_vector<float>();
        INFO(approximate);
        CHECK(count_op(session.placement(), "Gelu") == 0);
        CHECK(count_op(session.placement(), "FusedMatMul") == 1);
        const std::vector<double> product = reference_product(input.at("x"));
        REQUIRE(product.size() == got.size());
        for (size_t i = 0; i < product.size(); ++i) {
            const double v = product[i];
            const double want = approximate == "none"
                                    ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))
                                    : 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
            CHECK(got[i] == Approx(want).margin(1e-5));
        }
    }
}

TEST_CASE("a residual Add before LayerNormalization fuses, keeping the sum when it is read on", "[fusion]") {
    for (const bool sum_read_on : {false, true}) {
        INFO("sum read on: " << sum_read_on);
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2, 8});
        auto r = b.input("r", DType::f32, {2, 8});
        auto sum = b.add(b.relu(x), r);
        auto y = b.layer_norm(sum, b.constant(ramp({8}, 0.1f, 0.5f)), b.constant(ramp({8}, 0.05f, -0.2f)));
        b.output("y", sum_read_on ? b.add(y, sum) : y);
        Session session(b.build());
        session.run({{"x", ramp({2, 8}, 0.3f, -2.0f)}, {"r", ramp({2, 8}, 0.2f, 1.0f)}});
        CHECK(count_op(session.placement(), "AddLayerNormalization") == 1);
        CHECK(count_op(session.placement(), "LayerNormalization") == 0);
        CHECK(count_op(session.placement(), "Add") == (sum_read_on ? 1 : 0));
    }
}

TEST_CASE("attention with its head split and merge becomes one Attention node", "[fusion]") {
    // BERT's self-attention as PyTorch exports it: heads split by Reshape + Transpose, Q·Kᵀ
    // scaled by a Mul, a padding mask added, Softmax, ·V and the heads merged back.
    constexpr int64_t kBatch = 2, kSeq = 5, kHeads = 2, kDepth = 3, kWidth = kHeads * kDepth;
    const auto build = [](bool mask_is_output) {
        GraphBuilder b;
        auto q = b.input("q", DType::f32, {kBatch, kSeq, kWidth});
        auto k = b.input("k", DType::f32, {kBatch, kSeq, kWidth});
        auto v = b.input("v", DType::f32, {kBatch, kSeq, kWidth});
        auto mask = b.input("mask", DType::f32, {kBatch, 1, 1, kSeq});
        const auto split = [&](Value x, std::vector<int64_t> perm) {
            return b.transpose(b.reshape(x, {kBatch, kSeq, kHeads, kDepth}), perm);
        };
        auto scores = b.mul(b.matmul(split(q, {0, 2, 1, 3}), split(k, {0, 2, 3, 1})), scalar(b, 0.5f));
        auto probabilities = b.softmax(b.add(scores, mask));
        if (mask_is_output) b.output("p", probabilities);
        auto context = b.matmul(probabilities, split(v, {0, 2, 1, 3}));
        b.output("y", b.reshape(b.transpose(context, {0, 2, 1, 3}), {kBatch, kSeq, kWidth}));
        return b.build();
    };
    const Batch input{{"q", ramp({kBatch, kSeq, kWidth}, 0.1f, -1.0f)},
                      {"k", ramp({kBatch, kSeq, kWidth}, 0.07f, -0.5f)},
                      {"v", ramp({kBatch, kSeq, kWidth}, 0.2f, -2.0f)},
                      {"mask", ramp({kBatch, 1, 1, kSeq}, -0.5f, 0.0f)}};
    Session fused(build(false));
    Session unfused(build(true));  // the probabilities are read outside the chain
    const std::vector<float> got = fused.run(input)["y"].to_vector<float>();
    const std::vector<float> expected = unfused.run(input)["y"].to_vector<float>();
    CHECK(count_op(fused.placement(), "Attention") == 1);
    CHECK(fused.placement().nodes.size() == 1);
    CHECK(count_op(unfused.placement(), "Attention") == 0);
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(expected[i]).margin(1e-5));
}

TEST_CASE("the Q, K and V projections of one input become one product that Attention reads in place", "[fusion]") {
    // BERT's self-attention after its head split and scale are fused: three products of x by
    // a weight plus a bias, read only by the Attention node.
    constexpr int64_t kBatch = 2, kSeq = 5, kHeads = 2, kDepth = 4, kWidth = kHeads * kDepth;
    const auto build = [](bool q_is_output, bool cross) {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {kBatch, kSeq, kWidth});
        auto memory = b.input("memory", DType::f32, {kBatch, kSeq, kWidth});
        auto mask = b.input("mask", DType::f32, {kBatch, 1, 1, kSeq});
        float seed = 0.01f;
        const auto project = [&](Value from) {
            seed += 0.013f;
            return b.add(b.matmul(from, b.constant(ramp({kWidth, kWidth}, seed, -0.3f))), b.constant(ramp({kWidth}, 0.05f, seed)));
        };
        auto q = project(x), k = project(cross ? memory : x), v = project(cross ? memory : x);
        if (q_is_output) b.output("q", q);
        b.output("y", b.op1("Attention", {q, k, v, mask}, {{"num_heads", int64_t{kHeads}}, {"scale", 0.5f}}));
        return b.build();
    };
    const Batch input{{"x", ramp({kBatch, kSeq, kWidth}, 0.1f, -1.0f)},
                      {"memory", ramp({kBatch, kSeq, kWidth}, -0.07f, 0.5f)},
                      {"mask", ramp({kBatch, 1, 1, kSeq}, -0.5f, 0.0f)}};
    Session packed(build(false, false));
    Session apart(build(true, false));  // Q is read outside the attention: the three stay apart
    Session cross(build(false, true));  // K and V of another input: nothing to share
    CHECK(count_op(packed.placement(), "FusedMatMul") == 1);
    CHECK(count_op(apart.placement(), "FusedMatMul") == 3);
    CHECK(count_op(cross.placement(), "FusedMatMul") == 3);
    const std::vector<float> got = packed.run(input)["y"].to_vector<float>();
    const std::vector<float> expected = apart.run(input)["y"].to_vector<float>();
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(expected[i]).margin(1e-5));
    // The same in the low types (the packed weight is converted like any other).
    for (Precision p : {Precision::f16, Precision::bf16}) {
        INFO("precision " << precision_name(p));
        const std::vector<float> low = Session(build(false, false), {.precision = p}).run(input)["y"].to_vector<float>();
        for (size_t i = 0; i < low.size(); ++i) CHECK(low[i] == Approx(expected[i]).epsilon(p == Precision::f16 ? 3e-3 : 3e-2).margin(1e-3));
    }
    // At int8 too, dynamic and calibrated: the packed product quantizes x once (per row, or with
    // the range calibrated for the Q projection) to the integers each of the three gets apart, and
    // its weight per column as they do, so the results are the same bits.
    for (const bool calibrated : {false, true}) {
        INFO((calibrated ? "static" : "dynamic") << " int8");
        const auto int8_session = [&](const Graph& graph) {
            SessionOptions options{.precision = Precision::int8};
            if (calibrated) options.calibration = std::make_shared<Calibration>(calibrate(graph, {input}));
            return Session(graph, options);
        };
        const Session packed8 = int8_session(build(false, false)), apart8 = int8_session(build(true, false));
        CHECK(packed8.op_histogram().at("QuantizedMatMul") == 1);
        CHECK(apart8.op_histogram().at("QuantizedMatMul") == 3);
        CHECK(packed8.run(input)["y"].to_vector<float>() == apart8.run(input)["y"].to_vector<float>());
    }
}

TEST_CASE("Attention with packed Q, K and V outside its form is a clear error", "[fusion][errors]") {
    const auto graph = [](int64_t width, bool with_k, int64_t packed) {
        GraphBuilder b;
        auto qkv = b.input("qkv", DType::f32, {1, 3, width});
        Value k = with_k ? b.input("k", DType::f32, {1, 3, 4}) : Value{};
        b.output("y", b.op1("Attention", {qkv, k, Value{}}, {{"num_heads", int64_t{2}}, {"qkv_packed", packed}}));
        return b.build();
    };
    CHECK_THROWS_WITH(graph(12, true, 1), Catch::Contains("K and V are part of input 0 and must be absent"));
    CHECK_THROWS_WITH(graph(10, false, 1), Catch::Contains("does not split into Q, K and V of 2 heads"));
    CHECK_THROWS_WITH(graph(12, false, 2), Catch::Contains("qkv_packed must be 0 or 1"));
    CHECK_THROWS_WITH(graph(12, false, 0), Catch::Contains("K and V are required"));
    const Graph good = graph(12, false, 1);
    const std::vector<float> y = Session(good).run({{"qkv", ramp({1, 3, 12}, 0.1f, -0.5f)}})["y"].to_vector<float>();
    CHECK(y.size() == 12);
}

TEST_CASE("GPT-2's attention fuses: Q, K and V split from one tensor, head sizes computed", "[fusion]") {
    // As transformers' GPT-2 exports it: Q, K and V come from a Split of the fused projection,
    // so shape inference knows neither their shape nor the batch and sequence sizes; the head
    // split is view(B, S, -1, D) with B and S taken from Shape nodes, the merge's target too
    // (its Shape nodes read the merged heads, and read Q once fused); a causal mask is added.
    constexpr int64_t kHeads = 2, kDepth = 4, kWidth = kHeads * kDepth, kBatch = 2, kSeq = 5;
    GraphBuilder b;
    auto qkv = b.input("qkv", DType::f32, {kDynamic, kDynamic, 3 * kWidth});
    auto mask = b.input("mask", DType::f32, {1, 1, kDynamic, kDynamic});
    const auto i64 = [&](std::vector<int64_t> v, Shape shape) { return b.constant(Tensor::from_vector(v, shape)); };
    const auto parts = b.op("Split", {qkv, i64({kWidth, kWidth, kWidth}, {3})}, {{"axis", int64_t{2}}}, 3);
    const auto dim = [&](Value x, int64_t axis) {
        auto gathered = b.op1("Gather", {b.op1("Shape", {x}), i64({axis}, {})}, {{"axis", int64_t{0}}});
        return b.op1("Unsqueeze", {gathered, i64({0}, {1})});
    };
    const auto split = [&](Value x, std::vector<int64_t> perm) {
        auto target = b.op1("Concat", {dim(x, 0), dim(x, 1), i64({-1}, {1}), i64({kDepth}, {1})}, {{"axis", int64_t{0}}});
        return b.transpose(b.op1("Reshape", {x, target}), perm);
    };
    auto scores = b.mul(b.matmul(split(parts[0], {0, 2, 1, 3}), split(parts[1], {0, 2, 3, 1})), scalar(b, 0.5f));
    auto context = b.matmul(b.softmax(b.add(scores, mask)), split(parts[2], {0, 2, 1, 3}));
    auto merged = b.transpose(context, {0, 2, 1, 3});
    auto target = b.op1("Concat", {dim(merged, 0), dim(merged, 1), i64({kWidth}, {1})}, {{"axis", int64_t{0}}});
    b.output("y", b.op1("Reshape", {merged, target}));
    const Graph graph = b.build();

    std::vector<float> causal(kSeq * kSeq);
    for (int64_t i = 0; i < kSeq; ++i)
        for (int64_t j = 0; j < kSeq; ++j) causal[size_t(i * kSeq + j)] = j <= i ? 0.0f : -1e9f;
    const Batch input{{"qkv", ramp({kBatch, kSeq, 3 * kWidth}, 0.05f, -1.0f)},
                      {"mask", Tensor::from_vector(causal, {1, 1, kSeq, kSeq})}};
    Session session(graph);
    const std::vector<float> got = session.run(input)["y"].to_vector<float>();
    CHECK(count_op(session.placement(), "Attention") == 1);
    CHECK(count_op(session.placement(), "Softmax") == 0);

    // Against the same attention written out in plain loops.
    const std::vector<float> x = input["qkv"].to_vector<float>();
    REQUIRE(got.size() == size_t(kBatch * kSeq * kWidth));
    for (int64_t n = 0; n < kBatch; ++n)
        for (int64_t h = 0; h < kHeads; ++h)
            for (int64_t i = 0; i < kSeq; ++i) {
                const auto at = [&](int64_t part, int64_t t, int64_t d) {
                    return double(x[size_t((n * kSeq + t) * 3 * kWidth + part * kWidth + h * kDepth + d)]);
                };
                std::vector<double> p(kSeq);
                double top = -1e300, total = 0;
                for (int64_t j = 0; j < kSeq; ++j) {
                    double s = 0;
                    for (int64_t d = 0; d < kDepth; ++d) s += at(0, i, d) * at(1, j, d);
                    p[size_t(j)] = 0.5 * s + causal[size_t(i * kSeq + j)];
                    top = std::max(top, p[size_t(j)]);
                }
                for (double& v : p) total += (v = std::exp(v - top));
                for (int64_t d = 0; d < kDepth; ++d) {
                    double want = 0;
                    for (int64_t j = 0; j < kSeq; ++j) want += p[size_t(j)] / total * at(2, j, d);
                    CHECK(got[size_t((n * kSeq + i) * kWidth + h * kDepth + d)] == Approx(want).margin(1e-5));
                }
            }
}

TEST_CASE("T5's attention fuses: no scale, a position bias and a mask added in turn", "[fusion]") {
    // As transformers' T5 exports it: scores = Q·Kᵀ + position_bias + mask (two Adds, summed
    // outside the kernel once fused), and K's head split is also transposed a second time to
    // take the key length, so its Reshape stays.
    constexpr int64_t kBatch = 2, kSeq = 4, kHeads = 2, kDepth = 3, kWidth = kHeads * kDepth;
    const auto build = [](bool probabilities_out) {
        GraphBuilder b;
        auto q = b.input("q", DType::f32, {kBatch, kSeq, kWidth});
        auto k = b.input("k", DType::f32, {kBatch, kSeq, kWidth});
        auto v = b.input("v", DType::f32, {kBatch, kSeq, kWidth});
        auto position = b.input("position", DType::f32, {1, kHeads, kSeq, kSeq});
        auto mask = b.input("mask", DType::f32, {kBatch, 1, 1, kSeq});
        const auto split = [&](Value x) { return b.reshape(x, {kBatch, kSeq, kHeads, kDepth}); };
        auto k_heads = split(k);
        b.output("key_length", b.op1("Shape", {b.transpose(k_heads, {0, 2, 1, 3})}));
        auto scores = b.matmul(b.transpose(split(q), {0, 2, 1, 3}), b.transpose(k_heads, {0, 2, 3, 1}));
        auto probabilities = b.softmax(b.add(b.add(scores, position), mask));
        if (probabilities_out) b.output("p", probabilities);  // read outside the chain: no fusion
        auto context = b.matmul(probabilities, b.transpose(split(v), {0, 2, 1, 3}));
        b.output("y", b.reshape(b.transpose(context, {0, 2, 1, 3}), {kBatch, kSeq, kWidth}));
        return b.build();
    };
    const Batch input{{"q", ramp({kBatch, kSeq, kWidth}, 0.1f, -1.0f)},
                      {"k", ramp({kBatch, kSeq, kWidth}, 0.07f, -0.5f)},
                      {"v", ramp({kBatch, kSeq, kWidth}, 0.2f, -2.0f)},
                      {"position", ramp({1, kHeads, kSeq, kSeq}, 0.03f, -0.2f)},
                      {"mask", ramp({kBatch, 1, 1, kSeq}, -0.5f, 0.0f)}};
    Session fused(build(false));
    Session unfused(build(true));
    const std::vector<float> got = fused.run(input)["y"].to_vector<float>();
    const std::vector<float> expected = unfused.run(input)["y"].to_vector<float>();
    CHECK(count_op(fused.placement(), "Attention") == 1);
    CHECK(count_op(fused.placement(), "Softmax") == 0);
    CHECK(count_op(unfused.placement(), "Attention") == 0);
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(expected[i]).margin(1e-5));
}

// After the f16/bf16 lowering the residual stream stays f32 while the products run in the low
// type: a Cast widened the product's output into the layer norm and another narrowed its result
// for the next product. Both fold into AddLayerNormalization (Skip read and Y written in the low
// type), and the results stay as close to f32 as before.
namespace {

// `graph` (input x [2, 4, 16], output y) in f16 and bf16 sessions: `norms` `norm` nodes, `casts`
// Casts left, and y within the low types' error of the f32 session's.
void check_norm_casts_folded(const Graph& graph, const std::string& norm, size_t casts, size_t norms = 1) {
    const Batch input{{"x", ramp({2, 4, 16}, 0.11f, -3.0f)}};
    const std::vector<float> reference = Session(graph).run(input)["y"].to_vector<float>();
    for (const Precision precision : {Precision::f16, Precision::bf16}) {
        INFO(precision_name(precision));
        Session session(graph, {.precision = precision});
        const std::vector<float> got = session.run(input)["y"].to_vector<float>();
        CHECK(count_op(session.placement(), norm) == norms);
        CHECK(count_op(session.placement(), "Cast") == casts);
        REQUIRE(got.size() == reference.size());
        for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(reference[i]).margin(3e-2).epsilon(2e-2));
    }
}

}  // namespace

TEST_CASE("f16 and bf16 sessions fold the casts around a residual layer norm into it", "[fusion][precision]") {
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {2, 4, 16});
    auto h = b.add(b.matmul(x, b.constant(ramp({16, 16}, 0.01f, -0.8f))), b.constant(ramp({16}, 0.05f, -0.3f)));
    auto sum = b.add(x, h);
    auto normed = b.layer_norm(sum, b.constant(ramp({16}, 0.03f, 0.7f)), b.constant(ramp({16}, 0.02f, -0.1f)));
    b.output("y", b.add(sum, b.matmul(normed, b.constant(ramp({16, 16}, 0.007f, -0.5f)))));
    // Left: x narrowed for the first product, the second product's output widened for the
    // residual Add; none around the layer norm.
    check_norm_casts_folded(b.build(), "AddLayerNormalization", 2);
}

// A post-norm encoder (BERT): each layer norm's output Y is the next residual stream, read in f32
// by the next Add and narrowed for the next product; and the export adds the product first
// (X + Skip with the product as X). Each norm writes Y in f32 and again in the low type, and takes
// the product's low-type output as it is.
TEST_CASE("f16 and bf16 sessions fold the casts of a post-norm block into its layer norms", "[fusion][precision]") {
    // Weights small beside the residual stream, as in a trained encoder: the normalized sums
    // then carry bf16's rounding of the products only a little.
    const auto small = [](const Tensor& t) {
        std::vector<float> values = t.to_vector<float>();
        for (float& v : values) v *= 0.02f;
        return Tensor::from_vector(values, t.shape());
    };
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {2, 4, 16});
    auto h1 = b.add(b.matmul(x, b.constant(small(ramp({16, 16}, 0.01f, -0.8f)))), b.constant(ramp({16}, 0.05f, -0.3f)));
    auto n1 = b.layer_norm(b.add(h1, x), b.constant(ramp({16}, 0.03f, 0.7f)), b.constant(ramp({16}, 0.02f, -0.1f)));
    auto h2 = b.matmul(n1, b.constant(small(ramp({16, 16}, 0.007f, -0.5f))));
    b.output("y", b.layer_norm(b.add(h2, n1), b.constant(ramp({16}, -0.02f, 0.9f)), b.constant(ramp({16}, 0.01f, 0.2f))));
    // Left: x narrowed for the first product.
    check_norm_casts_folded(b.build(), "AddLayerNormalization", 1, 2);
}

namespace {

// RMS normalization written out, in the spellings exporters use, of a computed x [2, 4, 16].
Value rms_norm_spelled(GraphBuilder& b, Value x, Value weight, bool pow_and_reciprocal, bool weight_first) {
    const Value square = pow_and_reciprocal ? b.op1("Pow", {x, scalar(b, 2.0f)}) : b.mul(x, x);
    const Value mean = b.op1("ReduceMean", {square, b.constant_i64({-1})}, {{"keepdims", int64_t{1}}});
    const Value rms = b.op1("Sqrt", {b.add(mean, scalar(b, 1e-6f))});
    const Value normalized = pow_and_reciprocal ? b.mul(b.op1("Reciprocal", {rms}), x) : b.div(x, rms);
    return weight_first ? b.mul(weight, normalized) : b.mul(normalized, weight);
}

}  // namespace

TEST_CASE("RMS normalization written out fuses into one RMSNormalization with the same results", "[fusion]") {
    const Tensor input = ramp({2, 4, 16}, 0.11f, -3.0f);
    const std::vector<float> in = input.to_vector<float>(), w = ramp({16}, 0.03f, 0.7f).to_vector<float>();
    for (const bool pow_and_reciprocal : {false, true}) {
        for (const bool weight_first : {false, true}) {
            INFO("Pow and Reciprocal " << pow_and_reciprocal << ", weight first " << weight_first);
            GraphBuilder b;
            auto x = b.relu(b.input("x", DType::f32, {2, 4, 16}));
            b.output("y", rms_norm_spelled(b, x, b.constant(ramp({16}, 0.03f, 0.7f)), pow_and_reciprocal, weight_first));
            Session session(b.build());
            const std::vector<float> got = session.run({{"x", input}})["y"].to_vector<float>();
            CHECK(count_op(session.placement(), "RMSNormalization") == 1);
            CHECK(count_op(session.placement(), "ReduceMean") == 0);
            REQUIRE(got.size() == in.size());
            for (size_t row = 0; row < 8; ++row) {
                double squares = 0;
                for (size_t j = 0; j < 16; ++j) squares += std::pow(std::max(0.0, double(in[row * 16 + j])), 2);
                const double inv = 1 / std::sqrt(squares / 16 + 1e-6);
                for (size_t j = 0; j < 16; ++j)
                    CHECK(got[row * 16 + j] == Approx(std::max(0.0, double(in[row * 16 + j])) * inv * w[j]).epsilon(1e-5).margin(1e-6));
            }
        }
    }
    SECTION("the mean square also a graph output, or a weight computed at run time: no fusion") {
        for (const bool computed_weight : {false, true}) {
            GraphBuilder b;
            auto x = b.relu(b.input("x", DType::f32, {2, 4, 16}));
            auto square = b.mul(x, x);
            auto mean = b.op1("ReduceMean", {square, b.constant_i64({-1})}, {{"keepdims", int64_t{1}}});
            auto normalized = b.div(x, b.op1("Sqrt", {b.add(mean, scalar(b, 1e-6f))}));
            auto weight = computed_weight ? b.relu(b.constant(ramp({16}, 0.03f, 0.7f))) : b.constant(ramp({16}, 0.03f, 0.7f));
            b.output("y", b.mul(normalized, weight));
            if (!computed_weight) b.output("mean", mean);
            Session session(b.build());
            session.run({{"x", input}});
            CHECK(count_op(session.placement(), "RMSNormalization") == 0);
        }
    }
}

TEST_CASE("RMSNormalization with a scale that does not fit X or a non-float X is a clear error", "[fusion][errors]") {
    const auto graph = [](DType x_type, int64_t scale_length) {
        GraphBuilder b;
        auto x = b.input("x", x_type, {2, 16});
        b.output("y", b.op1("RMSNormalization", {x, b.constant(ramp({scale_length}, 0.1f, 0.5f))}));
        return b.build();
    };
    CHECK_THROWS_WITH(Session(graph(DType::f32, 15)), Catch::Contains("Scale [15] does not broadcast"));
    CHECK_THROWS_WITH(Session(graph(DType::i32, 16)), Catch::Contains("must be floating-point"));
    Session good(graph(DType::f32, 16));
    CHECK(good.run({{"x", ramp({2, 16}, 0.2f, -1.0f)}})["y"].shape() == Shape{2, 16});
}

TEST_CASE("f16 and bf16 sessions fold the casts around an RMS normalization into it", "[fusion][precision]") {
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {2, 4, 16});
    auto h = b.matmul(x, b.constant(ramp({16, 16}, 0.01f, -0.8f)));
    auto normed = rms_norm_spelled(b, b.add(x, h), b.constant(ramp({16}, 0.03f, 0.7f)), false, false);
    b.output("y", b.matmul(normed, b.constant(ramp({16, 16}, 0.007f, -0.5f))));
    // x narrowed for the first product, that product widened for the residual Add, the
    // output widened; the norm's own narrowing for the second product folded into it.
    check_norm_casts_folded(b.build(), "RMSNormalization", 3);
}

// AddLayerNormalization's folded form (Skip and Y in f16/bf16 beside an f32 X) written by hand:
// a Skip or y_dtype outside it is an error that says so, and the form itself builds and runs.
TEST_CASE("AddLayerNormalization with a Skip or y_dtype outside the folded form is a clear error", "[fusion][errors]") {
    const auto graph = [](DType skip_type, const std::string& y_dtype) {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2, 8});
        auto skip = b.input("skip", skip_type, {2, 8});
        Attributes attrs{{"epsilon", 1e-5f}};
        if (!y_dtype.empty()) attrs.set("y_dtype", y_dtype);
        b.output("y", b.op1("AddLayerNormalization", {x, skip, b.constant(ramp({8}, 0.1f, 0.5f))}, attrs));
        return b.build();
    };
    CHECK_THROWS_WITH(graph(DType::f16, "f64"), Catch::Contains("y_dtype f64 beside X of f32"));
    CHECK_THROWS_WITH(graph(DType::i64, ""), Catch::Contains("Skip is i64 but X is f32"));
    CHECK_THROWS_AS(graph(DType::f16, "f9"), Error);
    // Y narrowed a second time in place of the sum (low_y_dtype): only to f16 or bf16, not beside y_dtype.
    const auto narrowed_twice = [](const std::string& low_y_dtype, const std::string& y_dtype) {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2, 8});
        Attributes attrs{{"epsilon", 1e-5f}, {"low_y_dtype", low_y_dtype}};
        if (!y_dtype.empty()) attrs.set("y_dtype", y_dtype);
        auto outputs = b.op("AddLayerNormalization", {x, x, b.constant(ramp({8}, 0.1f, 0.5f))}, attrs, 2);
        b.output("y", outputs[0]);
        b.output("low", outputs[1]);
        return b.build();
    };
    CHECK_THROWS_WITH(narrowed_twice("f32", ""), Catch::Contains("low_y_dtype must name f16 or bf16"));
    CHECK_THROWS_WITH(narrowed_twice("f16", "f16"), Catch::Contains("low_y_dtype beside y_dtype"));
    CHECK(narrowed_twice("bf16", "").outputs().size() == 2);

    Session session(graph(DType::f16, "f16"));
    std::vector<half> skip;
    for (int i = 0; i < 16; ++i) skip.emplace_back(0.125f * static_cast<float>(i % 5));
    const Tensor y = session.run({{"x", ramp({2, 8}, 0.1f, -0.8f)}, {"skip", Tensor::from_vector(skip, {2, 8})}})["y"];
    CHECK(y.dtype() == DType::f16);  // as y_dtype asks
    for (const float v : y.to_vector<float>()) CHECK(std::isfinite(v));
}

namespace {

// A ResNet block on x [batch, 4, 6, 6]: Conv → Relu → Conv → + x → Relu, and a Conv whose Add
// broadcasts a constant per-channel row (no residual: the row folds into its bias, then the ReLU
// fuses). With `block_fusion`, every intermediate value is also a graph output, which keeps each
// node as it is: the unfused results to compare with.
Graph resnet_block(bool block_fusion) {
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {kDynamic, 4, 6, 6});
    const Attributes pad1{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    auto c1 = b.op1("Conv", {x, b.constant(ramp({4, 4, 3, 3}, 0.013f, -0.9f)), b.constant(ramp({4}, 0.3f, -0.5f))}, pad1);
    auto r1 = b.relu(c1);
    auto c2 = b.op1("Conv", {r1, b.constant(ramp({4, 4, 3, 3}, -0.011f, 0.7f))}, pad1);
    auto sum = b.add(c2, x);
    b.output("y", b.relu(sum));
    auto c3 = b.op1("Conv", {x, b.constant(ramp({4, 4, 1, 1}, 0.05f, -0.4f))});
    b.output("z", b.relu(b.add(c3, b.constant(ramp({1, 4, 1, 1}, 0.5f, -1.0f)))));
    if (block_fusion)
        for (const auto& [name, value] : std::vector<std::pair<std::string, Value>>{{"c1", c1}, {"c2", c2}, {"sum", sum}, {"c3", c3}})
            b.output(name, value);
    return b.build();
}

}  // namespace

TEST_CASE("Conv with its residual Add and Relu becomes one FusedConv with the same results", "[fusion]") {
    Session fused(resnet_block(false)), plain(resnet_block(true));
    for (const int64_t batch : {1, 3}) {
        const Batch input{{"x", ramp({batch, 4, 6, 6}, 0.017f, -2.3f)}};
        const Batch got = fused.run(input), want = plain.run(input);
        CHECK(count_op(fused.placement(), "FusedConv") == 3);  // Conv+Relu, Conv+Add+Relu, c3 (+row)+Relu
        CHECK(count_op(fused.placement(), "Conv") == 0);
        CHECK(count_op(fused.placement(), "Add") == 0);
        CHECK(count_op(plain.placement(), "FusedConv") == 0);
        for (const char* name : {"y", "z"}) {
            const std::vector<float> a = got[name].to_vector<float>(), e = want[name].to_vector<float>();
            REQUIRE(a.size() == e.size());
            for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(e[i]).margin(1e-5));
        }
    }
}

// A frozen batch norm as frameworks export it (torchvision's detection backbones): Conv, then
// Mul and Add by per-channel constants, then Relu. The scale and shift fold into the weight and
// bias, so the Relu fuses too. Constants that broadcast along other axes, and a Conv output read
// elsewhere, stay as they are.
TEST_CASE("Conv then Mul and Add by per-channel constants folds into one convolution", "[fusion]") {
    // With `every_value_an_output`, nothing fuses or folds: the results to compare with.
    const auto build = [](const std::vector<int64_t>& scale_shape, const std::vector<int64_t>& shift_shape,
                          bool read_conv_output, bool with_bias, bool every_value_an_output) {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {kDynamic, 4, 5, 5});
        std::vector<Value> inputs{x, b.constant(ramp({4, 2, 3, 3}, 0.021f, -0.6f))};
        if (with_bias) inputs.push_back(b.constant(ramp({4}, 0.3f, -0.2f)));
        Attributes attributes{{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", int64_t{2}}};
        auto c = b.op1("Conv", inputs, attributes);
        auto scaled = b.mul(b.constant(ramp(scale_shape, 0.25f, 0.5f)), c);
        auto shifted = b.add(scaled, b.constant(ramp(shift_shape, -0.2f, 0.3f)));
        b.output("y", b.relu(shifted));
        if (read_conv_output || every_value_an_output) b.output("c", c);
        if (every_value_an_output) {
            b.output("scaled", scaled);
            b.output("shifted", shifted);
        }
        return b.build();
    };
    struct Case {
        std::vector<int64_t> scale, shift;
        bool read_conv_output, with_bias;
        size_t mul, add;  // left after the passes
    };
    const std::vector<Case> cases{
        {{1, 4, 1, 1}, {1, 4, 1, 1}, false, true, 0, 0},   // torchvision's FrozenBatchNorm2d
        {{4, 1, 1}, {1}, false, false, 0, 0},              // no bias; a shift of one value
        {{1, 1, 1, 5}, {1, 4, 1, 1}, false, true, 1, 1},   // the scale varies along the width: neither folds
        {{1, 4, 1, 1}, {5}, false, true, 0, 1},            // [5] lines up with the width: the Add stays
        {{1, 4, 1, 1}, {1, 4, 1, 1}, true, true, 1, 1},    // the Conv's output is read elsewhere
    };
    for (const Case& k : cases) {
        INFO("scale " << Shape(k.scale).to_string() << ", shift " << Shape(k.shift).to_string());
        Session folded(build(k.scale, k.shift, k.read_conv_output, k.with_bias, false));
        Session plain(build(k.scale, k.shift, false, k.with_bias, true));
        for (const int64_t batch : {1, 2}) {
            const Batch input{{"x", ramp({batch, 4, 5, 5}, 0.013f, -1.7f)}};
            const std::vector<float> got = folded.run(input)["y"].to_vector<float>();
            const std::vector<float> want = plain.run(input)["y"].to_vector<float>();
            CHECK(count_op(folded.placement(), "Mul") == k.mul);  // the plan is made at the first run
            CHECK(count_op(folded.placement(), "Add") == k.add);
            REQUIRE(got.size() == want.size());
            for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(1e-5));
        }
    }
}

// A Conv of no output channels, scaled: nothing to fold, and the session runs (an empty result).
TEST_CASE("a Conv with no output channels followed by a Mul is left as it is and runs", "[fusion][errors]") {
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {1, 4, 5, 5});
    auto c = b.op1("Conv", {x, b.constant(Tensor::from_vector(std::vector<float>{}, {0, 4, 3, 3}))});
    b.output("y", b.mul(c, scalar(b, 2.0f)));
    Session session(b.build());
    const Tensor y = session.run({{"x", ramp({1, 4, 5, 5}, 0.01f, 0.0f)}})["y"];
    CHECK(y.shape() == Shape({1, 0, 3, 3}));
    CHECK(count_op(session.placement(), "Mul") == 1);
}

TEST_CASE("Conv followed by a Clip with constant bounds (ReLU6) becomes one FusedConv", "[fusion]") {
    const auto build = [](bool block_fusion, bool computed_bound) {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {1, 3, 6, 6});
        auto c = b.op1("Conv", {x, b.constant(ramp({5, 3, 3, 3}, 0.07f, -0.8f))},
                       {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
        // A bound the graph computes (here from the input) keeps the Clip a node of its own.
        auto high = computed_bound ? b.op1("ReduceMax", {x}, {{"keepdims", int64_t{0}}}) : scalar(b, 6.0f);
        b.output("y", b.op1("Clip", {c, scalar(b, 0.0f), high}));
        if (block_fusion) b.output("c", c);
        return b.build();
    };
    Session fused(build(false, false)), plain(build(true, false)), computed(build(false, true));
    const Batch input{{"x", ramp({1, 3, 6, 6}, 0.11f, -0.6f)}};
    const std::vector<float> got = fused.run(input)["y"].to_vector<float>(), want = plain.run(input)["y"].to_vector<float>();
    computed.run(input);
    CHECK(count_op(fused.placement(), "FusedConv") == 1);
    CHECK(count_op(fused.placement(), "Clip") == 0);
    CHECK(count_op(computed.placement(), "Clip") == 1);
    REQUIRE(got.size() == want.size());
    size_t clipped_high = 0, clipped_low = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        CHECK(got[i] == Approx(want[i]).margin(1e-5));
        clipped_high += want[i] == 6.0f;
        clipped_low += want[i] == 0.0f;
    }
    CHECK(clipped_high > 0);  // both bounds are reached, so both are tested
    CHECK(clipped_low > 0);
}

TEST_CASE("Conv followed by HardSwish becomes one FusedConv with the same results", "[fusion]") {
    // A depthwise convolution (its own kernels) and a plain one, each read by a HardSwish; with
    // the convolution's output also a graph output, the chain stays as written (the reference).
    for (const int64_t group : {int64_t{1}, int64_t{4}}) {
        INFO("group " << group);
        const auto build = [group](bool block_fusion) {
            GraphBuilder b;
            auto x = b.input("x", DType::f32, {1, 4, 9, 9});
            auto c = b.op1("Conv", {x, b.constant(ramp({4, 4 / group, 3, 3}, 0.1f, -0.4f)), b.constant(ramp({4}, 0.3f, -0.5f))},
                           {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", group}});
            b.output("y", b.op1("HardSwish", {c}));
            if (block_fusion) b.output("c", c);
            return b.build();
        };
        Session fused(build(false)), plain(build(true));
        const Batch input{{"x", ramp({1, 4, 9, 9}, 0.2f, -1.0f)}};
        const std::vector<float> got = fused.run(input)["y"].to_vector<float>(), want = plain.run(input)["y"].to_vector<float>();
        CHECK(count_op(fused.placement(), "FusedConv") == 1);
        CHECK(count_op(fused.placement(), "HardSwish") == 0);
        CHECK(count_op(plain.placement(), "HardSwish") == 1);
        REQUIRE(got.size() == want.size());
        size_t zero = 0, identity = 0, curved = 0;  // each piece of HardSwish reached
        const std::vector<float> c = plain.run(input)["c"].to_vector<float>();
        for (size_t i = 0; i < got.size(); ++i) {
            CHECK(got[i] == Approx(want[i]).margin(1e-5));
            zero += c[i] <= -3.0f;
            identity += c[i] >= 3.0f;
            curved += c[i] > -3.0f && c[i] < 3.0f;
        }
        CHECK(zero > 0);
        CHECK(identity > 0);
        CHECK(curved > 0);
    }
}

TEST_CASE("FusedConv with a wrong residual, activation or bounds is a clear error, and a good one runs", "[fusion][errors]") {
    const auto graph = [](Shape z_shape, const std::string& activation, float clip_min, float clip_max) {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {1, 2, 5, 5});
        Attributes attrs{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
        if (!activation.empty()) attrs.set("activation", activation);
        if (activation == "Clip") {
            attrs.set("clip_min", clip_min);
            attrs.set("clip_max", clip_max);
        }
        b.output("y", b.op1("FusedConv", {x, b.constant(ramp({3, 2, 3, 3}, 0.05f, -0.4f)), b.constant(ramp({3}, 0.1f, 0.0f)),
                                          b.input("z", DType::f32, z_shape)},
                            attrs));
        return b.build();
    };
    CHECK_THROWS_WITH(graph({1, 3, 4, 5}, "Relu", 0, 0), Catch::Contains("Z must have the output's shape [1,3,5,5]"));
    CHECK_THROWS_WITH(graph({1, 3, 5, 5}, "Gelu", 0, 0), Catch::Contains("activation must be empty, Relu, Clip or HardSwish"));
    CHECK_THROWS_WITH(graph({1, 3, 5, 5}, "Clip", 6, 0), Catch::Contains("clip_min must not exceed clip_max"));

    Session session(graph({1, 3, 5, 5}, "Clip", 0, 6));
    const Tensor y = session.run({{"x", ramp({1, 2, 5, 5}, 0.3f, -2.0f)}, {"z", ramp({1, 3, 5, 5}, 0.2f, -1.0f)}})["y"];
    for (const float v : y.to_vector<float>()) CHECK((v >= 0.0f && v <= 6.0f));
}

TEST_CASE("an unknown or unrunnable INFER_FLOAT_GEMM is a clear error, and sessions run once it is put right", "[errors]") {
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {16, 4});
    b.output("y", b.relu(b.add(b.matmul(x, b.constant(ramp({4, 5}, 0.1f, -1.0f))), b.constant(ramp({5}, 0.2f, -0.4f)))));
    const Graph g = b.build();
    const Batch input{{"x", ramp({16, 4}, 0.3f, -2.0f)}};
    // ctest runs the op tests under INFER_FLOAT_GEMM=avx2 and =blas: put it back after.
    const char* previous = std::getenv("INFER_FLOAT_GEMM");
    const std::string saved = previous ? previous : "";
    setenv("INFER_FLOAT_GEMM", "sse9", 1);
    CHECK_THROWS_WITH(Session(g).run(input), Catch::Contains("INFER_FLOAT_GEMM=sse9: expected blas, avx2 or avx512"));
    setenv("INFER_FLOAT_GEMM", "blas", 1);
    const std::vector<float> blas = Session(g).run(input)["y"].to_vector<float>();
    if (previous)
        setenv("INFER_FLOAT_GEMM", saved.c_str(), 1);
    else
        unsetenv("INFER_FLOAT_GEMM");
    const std::vector<float> chosen = Session(g).run(input)["y"].to_vector<float>();  // this CPU's best kernel
    REQUIRE(chosen.size() == blas.size());
    for (size_t i = 0; i < blas.size(); ++i) CHECK(chosen[i] == Approx(blas[i]).margin(1e-5));
}

TEST_CASE("INFER_BF16_GEMM picks the bf16 products' kernel; an unknown or unrunnable one is a clear error", "[errors]") {
    if (!std::getenv("INFER_BF16_GEMM")) {
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {40, 64});
        b.output("y", b.relu(b.add(b.matmul(x, b.constant(ramp({64, 40}, 0.01f, -0.3f))), b.constant(ramp({40}, 0.2f, -0.4f)))));
        const Graph g = b.build();
        const Batch input{{"x", ramp({40, 64}, 0.03f, -2.0f)}};
        SessionOptions bf16;
        bf16.precision = Precision::bf16;
        const auto run_with = [&](const char* kernel) {
            setenv("INFER_BF16_GEMM", kernel, 1);
            try {
                std::vector<float> y = Session(g, bf16).run(input)["y"].to_vector<float>();
                unsetenv("INFER_BF16_GEMM");
                return y;
            } catch (...) {
                unsetenv("INFER_BF16_GEMM");
                throw;
            }
        };
        CHECK_THROWS_WITH(run_with("sse9"), Catch::Contains("INFER_BF16_GEMM=sse9: expected blas, avx512_bf16 or amx_bf16"));
        const std::vector<float> blas = run_with("blas");
        for (const char* kernel : {"avx512_bf16", "amx_bf16"}) {
            std::vector<float> y;
            try {
                y = run_with(kernel);
            } catch (const Unsupported& e) {
                CHECK_THAT(e.what(), Catch::Contains("this CPU cannot run that kernel"));
                continue;
            }
            INFO(kernel);
            REQUIRE(y.size() == blas.size());
            for (size_t i = 0; i < blas.size(); ++i) CHECK(y[i] == Approx(blas[i]).epsilon(1e-2).margin(1e-2));
        }
        const std::vector<float> chosen = Session(g, bf16).run(input)["y"].to_vector<float>();  // the CPU's best again
        CHECK(chosen.size() == blas.size());
    }
}
