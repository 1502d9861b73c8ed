// CUDA graphs (SessionOptions::graph_capture): a captured run must give exactly what the same
// session gives node by node, run after run with new input values (the graph replays with the
// data of the moment), when the outputs are bound to other tensors (the nodes are captured
// again at the new addresses), around a profiled run (node by node, timed), and in f16 where
// the fused attention kernel runs. And an f16 session on cuda notices activations below f16's
// range, as the CPU does (tests/unit/test_precision_range.cpp).
#include "test_util.hpp"

#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace infer;
using cuda_test::random_values;
using cuda_test::relative_error;

namespace {

constexpr int64_t kBatch = 2, kSeq = 24, kWidth = 64, kHeads = 2;

Value weight(GraphBuilder& b, const Shape& shape, uint32_t seed, float scale = 0.2f) {
    std::vector<float> w = random_values(static_cast<size_t>(shape.numel()), seed);
    for (float& v : w) v *= scale;
    return b.constant(Tensor::from_vector(w, shape));
}

// One encoder layer as PyTorch exports it (the session's passes fuse its attention, bias+GELU
// and residual+LayerNorm): enough distinct kernels to make a graph worth capturing.
Graph encoder_layer() {
    GraphBuilder b("capture");
    const Value x = b.input("x", DType::f32, {kBatch, kSeq, kWidth});
    const int64_t depth = kWidth / kHeads;
    const auto heads = [&](Value v, std::vector<int64_t> perm) {
        return b.transpose(b.reshape(v, {kBatch, kSeq, kHeads, depth}), perm);
    };
    const Value q = heads(b.add(b.matmul(x, weight(b, {kWidth, kWidth}, 1)), weight(b, {kWidth}, 2)), {0, 2, 1, 3});
    const Value k = heads(b.add(b.matmul(x, weight(b, {kWidth, kWidth}, 3)), weight(b, {kWidth}, 4)), {0, 2, 3, 1});
    const Value v = heads(b.add(b.matmul(x, weight(b, {kWidth, kWidth}, 5)), weight(b, {kWidth}, 6)), {0, 2, 1, 3});
    const Value scale = b.constant(Tensor::from_vector(std::vector<float>{1.0f / std::sqrt(float(depth))}, {}));
    const Value p = b.softmax(b.mul(b.matmul(q, k), scale), -1);
    const Value merged = b.reshape(b.transpose(b.matmul(p, v), {0, 2, 1, 3}), {kBatch, kSeq, kWidth});
    const Value h = b.layer_norm(b.add(merged, x), weight(b, {kWidth}, 7, 1.0f), weight(b, {kWidth}, 8), -1, 1e-5f);
    const Value up = b.op1("Gelu", {b.add(b.matmul(h, weight(b, {kWidth, 4 * kWidth}, 9)), weight(b, {4 * kWidth}, 10))});
    b.output("y", b.add(b.matmul(up, weight(b, {4 * kWidth, kWidth}, 11, 0.1f)), h));
    return b.build();
}

Batch input(uint32_t seed) {
    const Shape shape{kBatch, kSeq, kWidth};
    return {{"x", Tensor::from_vector(random_values(static_cast<size_t>(shape.numel()), seed), shape)}};
}

SessionOptions on_cuda(Precision precision, bool capture) {
    SessionOptions options;
    options.device = Device::CUDA;
    options.strict = true;
    options.precision = precision;
    options.graph_capture = capture;
    return options;
}

}  // namespace

TEST_CASE("captured runs give what node-by-node runs give, run after run", "[cuda][capture]") {
    const Graph graph = encoder_layer();
    for (Precision precision : {Precision::f32, Precision::f16}) {
        INFO("precision " << precision_name(precision));
        Session captured(graph, on_cuda(precision, true));
        Session plain(graph, on_cuda(precision, false));
        for (uint32_t run = 0; run < 5; ++run) {
            INFO("run " << run);
            const Batch in = input(100 + run);
            const std::vector<float> want = plain.run(in)["y"].to_vector<float>();
            CHECK(captured.run(in)["y"].to_vector<float>() == want);
            if (run == 2) {  // a profiled run in between goes node by node
                RunProfile profile;
                CHECK(captured.run(in, profile)["y"].to_vector<float>() == want);
                CHECK(profile.steps.size() > 5);
            }
        }
        // Outputs bound to new tensors each run: the graph is captured again at their addresses.
        for (uint32_t run = 0; run < 3; ++run) {
            const Batch in = input(200 + run);
            Batch out{{"y", Tensor::empty(DType::f32, {kBatch, kSeq, kWidth}, Device::CUDA)}};
            captured.run(in, out);
            CHECK(out["y"].to_vector<float>() == plain.run(in)["y"].to_vector<float>());
        }
        const std::vector<float> reference = Session(graph, {Device::CPU}).run(input(7))["y"].to_vector<float>();
        CHECK(relative_error(captured.run(input(7))["y"].to_vector<float>(), reference) <
              (precision == Precision::f32 ? 1e-5 : 1e-2));
    }
}

// Six products by weights of `scale`, each followed by ReLU, then one to 8 columns: the values
// shrink or grow by about the same factor at every layer.
Graph layers(const std::string& name, uint32_t seed, float scale) {
    GraphBuilder b(name);
    Value x = b.input("x", DType::f32, {4, kWidth});
    for (uint32_t layer = 0; layer < 6; ++layer) x = b.relu(b.matmul(x, weight(b, {kWidth, kWidth}, seed + layer, scale)));
    b.output("y", b.matmul(x, weight(b, {kWidth, 8}, seed + 10, 1.0f)));
    return b.build();
}

// Three runs stay finite and within `tolerance` of f32, the nodes whose f16 results left f16's
// range having been moved to f32.
void check_kept_in_f32(const Graph& graph, uint32_t seed, Precision precision, double tolerance) {
    const Batch in{{"x", Tensor::from_vector(random_values(4 * kWidth, seed), {4, kWidth})}};
    const std::vector<float> reference = graph.run(in)["y"].to_vector<float>();
    Session session(graph, on_cuda(precision, true));
    for (int run = 0; run < 3; ++run) {
        INFO("run " << run);
        const std::vector<float> y = session.run(in)["y"].to_vector<float>();
        CHECK(std::all_of(y.begin(), y.end(), [](float v) { return std::isfinite(v); }));
        CHECK(relative_error(y, reference) <= tolerance);
    }
    CHECK_FALSE(session.placement().kept_f32.empty());
}

TEST_CASE("f16 sessions on cuda notice activations below f16's range", "[cuda][precision]") {
    // Each layer scales by about 1/20: after six the values sit near 1e-8, zeros in f16.
    check_kept_in_f32(layers("shrinking", 30, 0.01f), 3, Precision::f16, 1e-2);
}

TEST_CASE("f16 sessions on cuda notice results beyond f16's largest value", "[cuda][precision]") {
    // Each layer grows the values about 15-fold: after five they pass 65504, infinity in f16.
    check_kept_in_f32(layers("growing", 50, 6.0f), 5, Precision::f16, 1e-2);
}

TEST_CASE("int8 sessions on cuda, f16 between their products, notice results beyond f16's range", "[cuda][precision][int8]") {
    // The same growth through int8 products whose outputs are f16: the QuantizedMatMuls that
    // overflow and those after them are run again with f32 activations. Seven quantized products
    // in a row cost a few per cent.
    check_kept_in_f32(layers("growing", 50, 6.0f), 5, Precision::int8, 8e-2);
}
