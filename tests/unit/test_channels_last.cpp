// A quantized CNN's stretch of 8-bit convolutions, pools and residual sums runs channel-last on
// the CPU (passes/channels_last_integer.cpp): one Transpose where the stretch begins, one for
// each value read outside it, and the same bytes the channel-first graph gives.
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include "random_tensors.hpp"

#include <algorithm>
#include <random>
#include <vector>

using namespace infer;

namespace {

template <class T>
Tensor scalar(T v) {
    return Tensor::from_vector(std::vector<T>{v}, Shape(std::vector<int64_t>{}));
}

using infer_test::random_ints;

Tensor scales(int64_t count, float base) {
    std::vector<float> v(static_cast<size_t>(count));
    for (size_t i = 0; i < v.size(); ++i) v[i] = base * (1.0f + 0.01f * static_cast<float>(i % 7));
    return Tensor::from_vector(v, {count});
}

// A convolution's operands: weights [M, C, k, k] (i8), per-channel scales and zero points, its
// output's scale and zero point, an i32 bias.
struct Layer {
    Tensor w, w_scale, w_zero, bias;
    float y_scale;
    uint8_t y_zero;
};

Layer layer(int64_t m, int64_t c, int64_t k, float y_scale, uint32_t seed) {
    return {random_ints<int8_t>({m, c, k, k}, -127, 127, seed), scales(m, 0.004f),
            Tensor::from_vector(std::vector<int8_t>(static_cast<size_t>(m), 0), {m}), random_ints<int32_t>({m}, -2000, 2000, seed + 1),
            y_scale, static_cast<uint8_t>(100 + seed % 40)};
}

// x → QuantizeLinear → QLinearConv 3x3 → MaxPool 3x3/2 → QLinearConv 1x1 → QuantizedAdd with
// the pool → QLinearConv 3x3/2 → DequantizeLinear, the pool's bytes returned too. The weights
// constants (as a model has them), or graph inputs: then nothing is channel-last (the pass takes
// constant weights only), which gives the channel-first reading of the same graph.
Graph cnn(const std::vector<Layer>& layers, bool constant_weights) {
    GraphBuilder b("channels_last");
    const Value x = b.input("x", DType::f32, {2, 16, 12, 12});
    const float x_scale = 0.02f;
    const uint8_t x_zero = 128;
    Value q = b.op1("QuantizeLinear", {x, b.constant(scalar(x_scale)), b.constant(scalar(x_zero))});
    const auto conv = [&](Value in, float in_scale, uint8_t in_zero, size_t i, Attributes attributes) {
        const Layer& l = layers[i];
        const Value w = constant_weights ? b.constant(l.w) : b.input("w" + std::to_string(i), DType::i8, l.w.shape());
        return b.op1("QLinearConv",
                     {in, b.constant(scalar(in_scale)), b.constant(scalar(in_zero)), w, b.constant(l.w_scale), b.constant(l.w_zero),
                      b.constant(scalar(l.y_scale)), b.constant(scalar(l.y_zero)), b.constant(l.bias)},
                     attributes);
    };
    const Value first = conv(q, x_scale, x_zero, 0, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    const Value pooled = b.op1("MaxPool", {first}, {{"kernel_shape", std::vector<int64_t>{3, 3}},
                                                    {"strides", std::vector<int64_t>{2, 2}},
                                                    {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    const Value pointwise = conv(pooled, layers[0].y_scale, layers[0].y_zero, 1, {});
    const float sum_scale = 0.05f;
    const uint8_t sum_zero = 90;
    const Value sum = b.op1("QuantizedAdd", {pointwise, b.constant(scalar(layers[1].y_scale)), b.constant(scalar(layers[1].y_zero)),
                                             pooled, b.constant(scalar(layers[0].y_scale)), b.constant(scalar(layers[0].y_zero)),
                                             b.constant(scalar(sum_scale)), b.constant(scalar(sum_zero))});
    const Value last = conv(sum, sum_scale, sum_zero, 2,
                            {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}});
    b.output("y", b.op1("DequantizeLinear", {last, b.constant(scalar(layers[2].y_scale)), b.constant(scalar(layers[2].y_zero))}));
    b.output("pooled", pooled);
    return b.build();
}

size_t count(const Session& session, const std::string& op) {
    const auto histogram = session.op_histogram();
    return histogram.count(op) ? histogram.at(op) : 0;
}

}  // namespace

TEST_CASE("8-bit convolutions, pools and residual sums run channel-last with the channel-first bytes", "[int8][qdq]") {
    const std::vector<Layer> layers{layer(24, 16, 3, 0.08f, 1), layer(24, 24, 1, 0.06f, 2), layer(8, 24, 3, 0.1f, 3)};
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xs(2 * 16 * 12 * 12);
    for (float& v : xs) v = normal(rng);
    Batch inputs{{"x", Tensor::from_vector(xs, {2, 16, 12, 12})}};

    const Session channels_last(cnn(layers, true));
    CHECK(count(channels_last, "ChannelsLastQLinearConv") == 3);
    CHECK(count(channels_last, "ChannelsLastMaxPool") == 1);
    CHECK(count(channels_last, "QLinearConv") == 0);
    // In at the first convolution; out to the DequantizeLinear and to the returned pool.
    CHECK(count(channels_last, "Transpose") == 3);
    const Batch got = channels_last.run(inputs);

    const Session planes(cnn(layers, false));
    CHECK(count(planes, "ChannelsLastQLinearConv") == 0);
    CHECK(count(planes, "Transpose") == 0);
    Batch plane_inputs = inputs;
    for (size_t i = 0; i < layers.size(); ++i) plane_inputs.set("w" + std::to_string(i), layers[i].w);
    const Batch want = planes.run(plane_inputs);

    REQUIRE(got["pooled"].shape() == Shape({2, 24, 6, 6}));
    CHECK(got["pooled"].to_vector<uint8_t>() == want["pooled"].to_vector<uint8_t>());
    REQUIRE(got["y"].shape() == Shape({2, 8, 3, 3}));
    const std::vector<float> y = got["y"].to_vector<float>();
    CHECK(y == want["y"].to_vector<float>());
    // Not one saturated value everywhere: the layers' scales leave the bytes spread.
    CHECK(std::count(y.begin(), y.end(), y[0]) < static_cast<std::ptrdiff_t>(y.size() / 4));
}

// The channel-last ops a pass makes can also be written by hand (GraphBuilder): wrong operands
// are errors that name what was wrong, and a good graph built and run afterwards works.
TEST_CASE("ChannelsLastQLinearConv and ChannelsLastMaxPool with wrong operands are clear errors", "[int8][errors]") {
    const Tensor x = random_ints<uint8_t>({1, 5, 6, 4}, 0, 255, 11);  // [N, H, W, C], 4 channels
    const Layer l = layer(3, 4, 3, 0.1f, 12);
    const auto conv_inputs = [&](const Tensor& input, const Tensor& w) {
        return std::vector<Tensor>{input, scalar(0.02f), scalar(uint8_t{128}), w, l.w_scale, l.w_zero, scalar(l.y_scale),
                                   scalar(l.y_zero), l.bias};
    };
    const auto expect_error = [](const std::string& op, const std::vector<Tensor>& inputs, const Attributes& attributes,
                                 const std::string& says) {
        GraphBuilder b("bad_" + op);
        std::vector<Value> values;
        for (const Tensor& t : inputs) values.push_back(b.constant(t));
        try {
            b.output("y", b.op1(op, values, attributes));
            b.build();
            FAIL(op << " was accepted");
        } catch (const Error& e) {
            CHECK_THAT(e.what(), Catch::Contains(says));
        }
    };
    // Channels are X's last axis: 5 of them against weights for 4.
    expect_error("ChannelsLastQLinearConv", conv_inputs(random_ints<uint8_t>({1, 4, 6, 5}, 0, 255, 13), l.w), {},
                 "input has 5 channels; weights expect 4 x group 1");
    expect_error("ChannelsLastQLinearConv", conv_inputs(x, random_ints<int8_t>({3, 4, 3}, -127, 127, 14)), {}, "differ in rank");
    expect_error("ChannelsLastMaxPool", {x}, {}, "kernel_shape is required");
    expect_error("ChannelsLastMaxPool", {random_ints<uint8_t>({4, 6}, 0, 255, 15)}, {{"kernel_shape", std::vector<int64_t>{2}}},
                 "input must be [N, spatial..., C]");

    GraphBuilder b("good");
    std::vector<Value> values;
    for (const Tensor& t : conv_inputs(x, l.w)) values.push_back(b.constant(t));
    b.output("y", b.op1("ChannelsLastQLinearConv", values, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
    const Tensor y = Session(b.build()).run({})["y"];
    CHECK(y.shape() == Shape({1, 5, 6, 3}));
}
