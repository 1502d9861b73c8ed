// A CNN's stretch of convolutions, pools and 8-bit residual sums runs channel-last on the CPU
// (passes/channels_last.cpp): one Transpose where the stretch begins, one for each value read
// outside it, and the results of the channel-first graph (the same bytes for 8-bit ones).
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include "random_tensors.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace infer;

namespace {

template <class T>
Tensor scalar(T v) {
    return Tensor::from_vector(std::vector<T>{v}, Shape(std::vector<int64_t>{}));
}

using infer_test::random_floats;
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
TEST_CASE("Channel-last QLinearConv, ConvIntegerToFloat and MaxPool with wrong operands are clear errors", "[int8][errors]") {
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
    // ChannelsLastConvIntegerToFloat: X, W, the scales, X's zero point.
    const Tensor w_u8 = random_ints<uint8_t>({3, 4, 3, 3}, 0, 255, 16), s3 = scales(3, 0.001f);
    expect_error("ChannelsLastConvIntegerToFloat", {random_ints<uint8_t>({1, 4, 6, 5}, 0, 255, 17), w_u8, s3, scalar(uint8_t{128})},
                 {}, "input has 5 channels; weights expect 4 x group 1");
    expect_error("ChannelsLastConvIntegerToFloat", {random_floats({1, 5, 6, 4}, 1.0f, 18), w_u8, s3}, {},
                 "X and W must be u8 or i8");
    expect_error("ChannelsLastConvIntegerToFloat", {x, w_u8, scales(2, 0.001f)}, {}, "the scale must be one value or a row of 3");
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

namespace {

// x → Conv 3x3 + Relu → MaxPool 3x3/2 → depthwise Conv 3x3 + Clip → Conv 1x1 + the pool + Relu
// → Conv 3x3/2, the pool returned too; f32. Weights constants (channel-last) or graph inputs
// (planes: the pass takes constant weights only).
Graph float_cnn(const std::vector<Tensor>& weights, bool constant_weights) {
    GraphBuilder b("float_channels_last");
    const Value x = b.input("x", DType::f32, {2, 8, 12, 12});
    const auto w = [&](size_t i) {
        return constant_weights ? b.constant(weights[i]) : b.input("w" + std::to_string(i), DType::f32, weights[i].shape());
    };
    const auto bias = [&](int64_t m, uint32_t seed) { return b.constant(random_floats({m}, 0.1f, seed)); };
    const std::vector<int64_t> pad1{1, 1, 1, 1};
    const Value first = b.op1("Relu", {b.op1("Conv", {x, w(0), bias(16, 21)}, {{"pads", pad1}})});
    const Value pooled = b.op1("MaxPool", {first}, {{"kernel_shape", std::vector<int64_t>{3, 3}},
                                                    {"strides", std::vector<int64_t>{2, 2}},
                                                    {"pads", pad1}});
    const Value depthwise = b.op1("Clip", {b.op1("Conv", {pooled, w(1), bias(16, 22)}, {{"pads", pad1}, {"group", int64_t{16}}}),
                                           b.constant(Tensor::from_vector(std::vector<float>{0.0f}, Shape(std::vector<int64_t>{}))),
                                           b.constant(Tensor::from_vector(std::vector<float>{6.0f}, Shape(std::vector<int64_t>{})))});
    const Value sum = b.op1("Relu", {b.op1("Add", {b.op1("Conv", {depthwise, w(2), bias(16, 23)}), pooled})});
    b.output("y", b.op1("Conv", {sum, w(3)}, {{"pads", pad1}, {"strides", std::vector<int64_t>{2, 2}}}));
    b.output("pooled", pooled);
    return b.build();
}

void check_close(const Tensor& got, const Tensor& want) {
    REQUIRE(got.shape() == want.shape());
    const std::vector<float> a = got.to_vector<float>(), b = want.to_vector<float>();
    float largest = 0.0f, worst = 0.0f;
    for (size_t i = 0; i < a.size(); ++i) {
        largest = std::max(largest, std::abs(b[i]));
        worst = std::max(worst, std::abs(a[i] - b[i]));
    }
    CHECK(largest > 0.1f);
    CHECK(worst <= 1e-5f * largest);
}

}  // namespace

TEST_CASE("f32 convolutions and pools run channel-last with the channel-first results", "[passes]") {
    const std::vector<Tensor> weights{random_floats({16, 8, 3, 3}, 0.2f, 31), random_floats({16, 1, 3, 3}, 0.3f, 32),
                                      random_floats({16, 16, 1, 1}, 0.25f, 33), random_floats({5, 16, 3, 3}, 0.1f, 34)};
    const Batch inputs{{"x", random_floats({2, 8, 12, 12}, 1.0f, 35)}};

    const Session channels_last(float_cnn(weights, true));
    CHECK(count(channels_last, "ChannelsLastConv") == 4);
    CHECK(count(channels_last, "ChannelsLastMaxPool") == 1);
    CHECK(count(channels_last, "Conv") + count(channels_last, "FusedConv") == 0);
    CHECK(count(channels_last, "Transpose") == 3);  // in at the first convolution; out to y and to the pool
    const Batch got = channels_last.run(inputs);

    const Session planes(float_cnn(weights, false));
    CHECK(count(planes, "ChannelsLastConv") == 0);
    CHECK(count(planes, "Transpose") == 0);
    Batch plane_inputs = inputs;
    for (size_t i = 0; i < weights.size(); ++i) plane_inputs.set("w" + std::to_string(i), weights[i]);
    const Batch want = planes.run(plane_inputs);
    check_close(got["pooled"], want["pooled"]);
    check_close(got["y"], want["y"]);
}

namespace {

// An FPN's top-down step on x [N, 8, 12, 12]: a coarse level (Conv 3x3/2 + Relu) upsampled to
// the lateral's size (nearest, sizes from Shape(lateral), as torchvision computes them) and by
// constant scales (linear), both added to the lateral (Conv 1x1), then a Conv 3x3. Weights as
// constants or graph inputs (planes), as float_cnn.
Graph top_down(const std::vector<Tensor>& weights, bool constant_weights) {
    GraphBuilder b("top_down");
    const Value x = b.input("x", DType::f32, {kDynamic, 8, 12, 12});
    const auto w = [&](size_t i) {
        return constant_weights ? b.constant(weights[i]) : b.input("w" + std::to_string(i), DType::f32, weights[i].shape());
    };
    const std::vector<int64_t> pad1{1, 1, 1, 1};
    const Value coarse = b.op1("Relu", {b.op1("Conv", {x, w(0)}, {{"pads", pad1}, {"strides", std::vector<int64_t>{2, 2}}})});
    const Value lateral = b.op1("Conv", {x, w(1)});
    const Value nearest = b.op1("Resize", {coarse, Value{}, Value{}, b.op1("Shape", {lateral})},
                                {{"mode", std::string("nearest")}, {"nearest_mode", std::string("floor")},
                                 {"coordinate_transformation_mode", std::string("asymmetric")}});
    const Value linear = b.op1("Resize", {coarse, Value{}, b.constant(Tensor::from_vector(std::vector<float>{1, 1, 2, 2}, {4}))},
                               {{"mode", std::string("linear")}});
    const Value sum = b.op1("Add", {b.op1("Add", {lateral, nearest}), linear});
    b.output("y", b.op1("Conv", {sum, w(2)}, {{"pads", pad1}}));
    return b.build();
}

}  // namespace

TEST_CASE("an FPN's upsampling and sums between its convolutions run channel-last with the channel-first results", "[passes]") {
    const std::vector<Tensor> weights{random_floats({16, 8, 3, 3}, 0.2f, 51), random_floats({16, 8, 1, 1}, 0.3f, 52),
                                      random_floats({4, 16, 3, 3}, 0.1f, 53)};
    const Batch inputs{{"x", random_floats({2, 8, 12, 12}, 1.0f, 54)}};
    const Session channels_last(top_down(weights, true));
    const Batch got = channels_last.run(inputs);
    CHECK(count(channels_last, "ChannelsLastConv") == 3);
    CHECK(count(channels_last, "Transpose") == 2);  // x in, y out: the sizes come from the lateral's twin
    CHECK(count(channels_last, "Gather") == 2);     // the sizes into channel-last order, the twin's shape back

    const Session planes(top_down(weights, false));
    Batch plane_inputs = inputs;
    for (size_t i = 0; i < weights.size(); ++i) plane_inputs.set("w" + std::to_string(i), weights[i]);
    const Batch want = planes.run(plane_inputs);
    CHECK(count(planes, "Transpose") == 0);
    check_close(got["y"], want["y"]);
}

// Sizes of the wrong length reach a channel-last Resize through the Gather that permutes them:
// the error names the Resize they were for.
TEST_CASE("a channel-last Resize by sizes of the wrong length is a clear error naming the Resize", "[passes][errors]") {
    GraphBuilder b("bad_sizes");
    const Value x = b.input("x", DType::f32, {kDynamic, 8, 12, 12});
    const Value coarse = b.op1("Conv", {x, b.constant(random_floats({16, 8, 3, 3}, 0.2f, 61))},
                               {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}});
    const Value lateral = b.op1("Conv", {x, b.constant(random_floats({16, 8, 1, 1}, 0.2f, 62))});
    const Value three = b.op1("Slice", {b.op1("Shape", {lateral}), b.constant(Tensor::from_vector(std::vector<int64_t>{0}, {1})),
                                        b.constant(Tensor::from_vector(std::vector<int64_t>{3}, {1}))});
    const Value up = b.op1("Resize", {coarse, Value{}, Value{}, three}, {{"mode", std::string("nearest")}}, "upsample");
    b.output("y", b.op1("Conv", {b.op1("Add", {lateral, up}), b.constant(random_floats({4, 16, 1, 1}, 0.2f, 63))}));
    const Session session(b.build());
    CHECK_THROWS_WITH(session.run({{"x", random_floats({1, 8, 12, 12}, 1.0f, 64)}}),
                      Catch::Contains("upsample") && Catch::Contains("out of range"));
}

// Where every convolution's output goes on to ops kept in planes (SiLU, as EfficientNet's
// blocks have it), each would need a Transpose in and one out: the f32 forms are not taken.
TEST_CASE("f32 convolutions stay in planes where the Transposes would outnumber them", "[passes]") {
    GraphBuilder b("silu_cnn");
    Value v = b.input("x", DType::f32, {1, 8, 10, 10});
    for (uint32_t i = 0; i < 3; ++i) {
        const Value conv = b.op1("Conv", {v, b.constant(random_floats({8, 8, 3, 3}, 0.2f, 40 + i))},
                                 {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
        v = b.op1("Mul", {conv, b.op1("Sigmoid", {conv})});
    }
    b.output("y", v);
    const Session session(b.build());
    CHECK(count(session, "ChannelsLastConv") == 0);
    CHECK(count(session, "Transpose") == 0);
    CHECK(session.run({{"x", random_floats({1, 8, 10, 10}, 1.0f, 44)}})["y"].shape() == Shape({1, 8, 10, 10}));
}

TEST_CASE("ChannelsLastConv with wrong operands is a clear error", "[errors]") {
    const Tensor x = random_floats({1, 5, 6, 4}, 1.0f, 50);  // [N, H, W, C], 4 channels
    const auto expect_error = [](const std::vector<Tensor>& inputs, const Attributes& attributes, const std::string& says) {
        GraphBuilder b("bad_channels_last_conv");
        std::vector<Value> values;
        for (const Tensor& t : inputs) values.push_back(b.constant(t));
        try {
            b.output("y", b.op1("ChannelsLastConv", values, attributes));
            b.build();
            FAIL("accepted");
        } catch (const Error& e) {
            CHECK_THAT(e.what(), Catch::Contains(says));
        }
    };
    expect_error({x, random_floats({3, 5, 3, 3}, 1.0f, 51)}, {}, "input has 4 channels; weights expect 5 x group 1");
    expect_error({x, random_floats({3, 2, 3, 3}, 1.0f, 52)}, {{"group", int64_t{2}}}, "3 output channels do not split into 2 groups");
    expect_error({x, random_floats({3, 4, 3}, 1.0f, 53)}, {}, "differ in rank");
    expect_error({x, random_floats({3, 4, 3, 3}, 1.0f, 54), random_floats({3}, 1.0f, 55), random_floats({1, 5, 6, 4}, 1.0f, 56)},
                 {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}, "Z must have the output's shape");
    expect_error({x, random_floats({3, 4, 3, 3}, 1.0f, 57)}, {{"activation", std::string("Gelu")}}, "activation must be");
    {  // a 3-D convolution's shapes are fine; the CPU's kernel is 2-D only, and says so
        GraphBuilder b("three_d");
        b.output("y", b.op1("ChannelsLastConv", {b.constant(random_floats({1, 5, 6, 4, 4}, 1.0f, 58)),
                                                  b.constant(random_floats({3, 4, 3, 3, 3}, 1.0f, 59))}));
        try {
            Session(b.build()).run({});
            FAIL("a 3-D ChannelsLastConv ran");
        } catch (const Error& e) {
            CHECK_THAT(e.what(), Catch::Contains("channel-last convolutions are 2-D"));
        }
    }

    GraphBuilder b("good");
    b.output("y", b.op1("ChannelsLastConv", {b.constant(x), b.constant(random_floats({3, 4, 3, 3}, 1.0f, 60))},
                        {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
    const Tensor y = Session(b.build()).run({})["y"];
    CHECK(y.shape() == Shape({1, 5, 6, 3}));
}

// Winograd's tiles go to the pool's threads in equal runs of chunks; whatever the thread count
// (more threads than chunks, chunks not a multiple of the threads), every tile is computed, and
// the same way: the outputs are the same bytes.
TEST_CASE("a Winograd convolution gives the same bytes on any number of threads", "[passes]") {
    const Tensor w = random_floats({24, 16, 3, 3}, 0.2f, 70);
    // 49 tiles (16 threads: 13 chunks of 4), and 112 over two images.
    for (const Tensor& x : {random_floats({1, 14, 14, 16}, 1.0f, 71), random_floats({2, 13, 15, 16}, 1.0f, 72)}) {
        const auto run = [&](int threads) {
            GraphBuilder b("winograd_threads");
            b.output("y", b.op1("ChannelsLastConv", {b.input("x", DType::f32, x.shape()), b.constant(w)},
                                {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
            SessionOptions options;
            options.threads = threads;
            return Session(b.build(), options).run({{"x", x}})["y"].to_vector<float>();
        };
        const std::vector<float> one = run(1);
        REQUIRE(one.size() == static_cast<size_t>(x.shape()[0] * x.shape()[1] * x.shape()[2] * 24));
        CHECK(std::count(one.begin(), one.end(), 0.0f) == 0);  // every tile written
        for (int threads : {2, 3, 5, 16}) CHECK(run(threads) == one);
    }
}

// precision int8 in a float CNN: after a float stem of 3 colours, the convolutions it makes
// integer (ConvIntegerToFloat, its X from DynamicQuantizeLinear) and the Relu, residual Add and
// Clip after them stay in the channel-last stretch with the float depthwise layer between them:
// one Transpose in, one out. The result is the f32 session's within 8-bit rounding.
TEST_CASE("precision int8 keeps a float CNN channel-last around its integer convolutions", "[int8]") {
    const Tensor stem = random_floats({64, 3, 3, 3}, 0.3f, 40);
    const Tensor w1 = random_floats({64, 64, 3, 3}, 0.05f, 41), b1 = random_floats({64}, 0.2f, 42);
    const Tensor dw = random_floats({64, 1, 3, 3}, 0.3f, 43), w3 = random_floats({64, 64, 1, 1}, 0.1f, 44);
    GraphBuilder b("int8_cnn");
    const Value x = b.input("x", DType::f32, {2, 3, 10, 10});
    const Attributes padded{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    Attributes depthwise = padded;
    depthwise.set("group", int64_t{64});
    const Value s = b.relu(b.op1("Conv", {x, b.constant(stem)}, padded));
    const Value a = b.relu(b.op1("Conv", {s, b.constant(w1), b.constant(b1)}, padded));
    const Value d = b.op1("Conv", {a, b.constant(dw)}, depthwise);
    const Value p = b.op1("Conv", {d, b.constant(w3)});
    const Value sum = b.op1("Add", {p, a});
    b.output("y", b.op1("Clip", {sum, b.constant(scalar(0.0f)), b.constant(scalar(6.0f))}));
    const Graph graph = b.build();

    const Session quantized(graph, {.precision = Precision::int8});
    CHECK(count(quantized, "ChannelsLastConvIntegerToFloat") == 2);
    CHECK(count(quantized, "ConvIntegerToFloat") == 0);
    CHECK(count(quantized, "DynamicQuantizeLinear") == 2);
    CHECK(count(quantized, "ChannelsLastConv") == 2);  // the stem and the depthwise layer
    CHECK(count(quantized, "Transpose") == 2);
    const Batch inputs{{"x", random_floats({2, 3, 10, 10}, 1.0f, 45)}};
    const std::vector<float> got = quantized.run(inputs)["y"].to_vector<float>();
    const std::vector<float> want = Session(graph).run(inputs)["y"].to_vector<float>();
    REQUIRE(got.size() == want.size());
    double error = 0, norm = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        error += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
        norm += double(want[i]) * want[i];
        CHECK(got[i] >= 0.0f);  // the Clip still applies
        CHECK(got[i] <= 6.0f);
    }
    CHECK(std::sqrt(error / norm) < 3e-2);
    CHECK(std::sqrt(error / norm) > 0.0);  // it did quantize
}
