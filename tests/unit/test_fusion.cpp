// Graph rewrites a session makes before planning. GELU written out as elementwise ops (PyTorch's
// export before opset 20) becomes one Gelu node; chains whose parts are read elsewhere stay.
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
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
