// Graphs run on cuda against the same graphs on the CPU: a MatMul → Softmax → LayerNorm block
// in f32, f16 and bf16, and single ops on the paths of the CUDA kernels that the op table's
// cases may not reach (broadcast batches, grouped convs, reversed slices, ...). Sessions are
// strict, so every node must run on the GPU.
#include "test_util.hpp"

#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <functional>

using namespace infer;
using cuda_test::random_values;
using cuda_test::relative_error;

namespace {

struct Input {
    std::string name;
    Shape shape;
    float low = 0.1f, high = 1.0f;
};

// Builds a graph with f32 inputs, runs it on the CPU and (strictly) on cuda with the same
// random inputs, and returns the worst relative error over its outputs.
double cuda_vs_cpu(const std::vector<Input>& inputs,
                   const std::function<void(GraphBuilder&, const std::vector<Value>&)>& body) {
    GraphBuilder b("cuda_vs_cpu");
    std::vector<Value> values;
    Batch batch;
    uint32_t seed = 1;
    for (const Input& in : inputs) {
        values.push_back(b.input(in.name, DType::f32, in.shape));
        batch.set(in.name, Tensor::from_vector(
                               random_values(static_cast<size_t>(in.shape.numel()), seed++, in.low, in.high),
                               in.shape));
    }
    body(b, values);
    const Graph graph = b.build();
    const Batch expected = Session(graph, {Device::CPU}).run(batch);
    SessionOptions options;
    options.device = Device::CUDA;
    options.strict = true;
    const Batch actual = Session(graph, options).run(batch);
    double worst = 0;
    for (const std::string& name : expected.names()) {
        INFO("output " << name);
        const Tensor& out = actual[name];
        CHECK(out.device() == Device::CUDA);
        CHECK(out.shape() == expected[name].shape());
        worst = std::max(worst, relative_error(out.to_vector<float>(), expected[name].to_vector<float>()));
    }
    return worst;
}

Value constant(GraphBuilder& b, const Shape& shape, uint32_t seed) {
    return b.constant(Tensor::from_vector(random_values(static_cast<size_t>(shape.numel()), seed), shape));
}

// x [2, 7, 32] @ w [32, 48] → softmax → layer norm, computed in `type`.
double attention_like_block(DType type) {
    return cuda_vs_cpu({{"x", {2, 7, 32}}}, [type](GraphBuilder& b, const std::vector<Value>& in) {
        const Value w = b.cast(constant(b, {32, 48}, 101), type);
        const Value scale = b.cast(constant(b, {48}, 102), type);
        const Value bias = b.cast(constant(b, {48}, 103), type);
        const Value h = b.softmax(b.matmul(b.cast(in[0], type), w), -1);
        b.output("y", b.cast(b.layer_norm(h, scale, bias, -1, 1e-5f), DType::f32));
    });
}

}  // namespace

TEST_CASE("MatMul, Softmax and LayerNormalization match the CPU", "[cuda][graph]") {
    CHECK(attention_like_block(DType::f32) < 1e-5);
    CHECK(attention_like_block(DType::f16) < 1e-2);
    CHECK(attention_like_block(DType::bf16) < 2e-2);
}

TEST_CASE("batched matrix products broadcast their batch dimensions", "[cuda][graph]") {
    // [2,1,3,4] x [1,3,4,5]: no single stride describes A's or B's batch (pointer arrays).
    CHECK(cuda_vs_cpu({{"a", {2, 1, 3, 4}}, {"b", {1, 3, 4, 5}}},
                      [](GraphBuilder& b, const std::vector<Value>& in) {
                          b.output("y", b.matmul(in[0], in[1]));
                      }) < 1e-5);
    // [4,3,8] x [8]: a vector on the right; [8] x [4,8,5]: on the left (stride 0 for A).
    CHECK(cuda_vs_cpu({{"a", {4, 3, 8}}, {"v", {8}}, {"b", {4, 8, 5}}},
                      [](GraphBuilder& b, const std::vector<Value>& in) {
                          b.output("av", b.matmul(in[0], in[1]));
                          b.output("vb", b.matmul(in[1], in[2]));
                      }) < 1e-5);
}

TEST_CASE("Gemm honours transA, transB, alpha, beta and a broadcast C", "[cuda][graph]") {
    CHECK(cuda_vs_cpu({{"a", {6, 5}}, {"b", {7, 6}}, {"c", {7}}},
                      [](GraphBuilder& b, const std::vector<Value>& in) {
                          b.output("y", b.op1("Gemm", {in[0], in[1], in[2]},
                                              {{"transA", int64_t{1}}, {"transB", int64_t{1}},
                                               {"alpha", 0.5f}, {"beta", 2.0f}}));
                      }) < 1e-5);
}

TEST_CASE("grouped, strided, padded Conv with bias, then pools", "[cuda][graph]") {
    CHECK(cuda_vs_cpu({{"x", {2, 4, 9, 8}}}, [](GraphBuilder& b, const std::vector<Value>& in) {
        const Value w = constant(b, {6, 2, 3, 3}, 201);
        const Value bias = constant(b, {6}, 202);
        const Value y = b.op1("Conv", {in[0], w, bias},
                              {{"group", int64_t{2}}, {"strides", std::vector<int64_t>{2, 1}},
                               {"pads", std::vector<int64_t>{1, 1, 1, 0}},
                               {"dilations", std::vector<int64_t>{1, 2}}});
        b.output("conv", y);
        b.output("max", b.op1("MaxPool", {y}, {{"kernel_shape", std::vector<int64_t>{2, 2}},
                                               {"ceil_mode", int64_t{1}}}));
        b.output("avg", b.op1("AveragePool", {y},
                              {{"kernel_shape", std::vector<int64_t>{3, 3}},
                               {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                               {"count_include_pad", int64_t{1}}}));
        b.output("gap", b.op1("GlobalAveragePool", {y}));
    }) < 1e-5);
}

TEST_CASE("data movement: slices, concat, split, gather, expand, transpose", "[cuda][graph]") {
    CHECK(cuda_vs_cpu({{"x", {3, 5, 4}}, {"z", {3, 2, 4}}},
                      [](GraphBuilder& b, const std::vector<Value>& in) {
                          b.output("slice", b.op1("Slice", {in[0], b.constant_i64({4, -1}),
                                                            b.constant_i64({0, -100}),
                                                            b.constant_i64({1, 0}),
                                                            b.constant_i64({-2, -1})}));
                          const Value joined = b.op1("Concat", {in[0], in[1]}, {{"axis", int64_t{1}}});
                          const auto parts = b.op("Split", {joined, b.constant_i64({3, 4})},
                                                  {{"axis", int64_t{1}}}, 2);
                          b.output("split0", parts[0]);
                          b.output("split1", b.transpose(parts[1], {2, 0, 1}));
                          b.output("gather", b.op1("Gather", {in[0], b.constant_i64({-1, 0, 2})},
                                                   {{"axis", int64_t{1}}}));
                          b.output("expand", b.op1("Expand", {in[1], b.constant_i64({2, 3, 2, 4})}));
                      }) < 1e-6);
}

TEST_CASE("reductions, column softmax, broadcasting and Where", "[cuda][graph]") {
    CHECK(cuda_vs_cpu({{"x", {4, 6, 5}}, {"y", {6, 1}}},
                      [](GraphBuilder& b, const std::vector<Value>& in) {
                          b.output("mean", b.op1("ReduceMean", {in[0], b.constant_i64({0, 2})},
                                                 {{"keepdims", int64_t{0}}}));
                          b.output("max", b.op1("ReduceMax", {in[0], b.constant_i64({-1})}));
                          b.output("sum", b.op1("ReduceSum", {in[0]}));
                          b.output("softmax", b.softmax(in[0], 1));
                          const Value sum = b.add(in[0], in[1]);
                          const Value mask = b.op1("Greater", {in[0], in[1]});
                          b.output("where", b.op1("Where", {mask, sum, b.op1("Neg", {in[1]})}));
                          b.output("gelu", b.op1("Gelu", {sum}, {{"approximate", std::string("tanh")}}));
                          b.output("pow", b.op1("Pow", {b.op1("Abs", {in[0]}), in[1]}));
                      }) < 1e-5);
}

TEST_CASE("BatchNormalization and casts through integers", "[cuda][graph]") {
    CHECK(cuda_vs_cpu({{"x", {2, 3, 4, 5}, 0.1f, 4.0f}, {"var", {3}, 0.5f, 2.0f}},
                      [](GraphBuilder& b, const std::vector<Value>& in) {
                          const Value var = b.op1("Abs", {in[1]});
                          b.output("bn", b.op1("BatchNormalization",
                                               {in[0], constant(b, {3}, 301), constant(b, {3}, 302),
                                                constant(b, {3}, 303), var},
                                               {{"epsilon", 1e-3f}}));
                          b.output("truncated", b.cast(b.cast(in[0], DType::i32), DType::f32));
                          b.output("nonzero", b.cast(b.cast(in[0], DType::boolean), DType::f32));
                      }) < 1e-5);
}

// A ResNet-like stretch in f16 and bf16: the convolutions and the max pool run channel-last on
// the GPU (passes/channels_last.cpp: one product per layer over every output pixel, the bias,
// residual and ReLU in cuBLASLt's epilogue, a depthwise layer direct), a Transpose at each edge,
// and the results agree with the CPU's f32 within the low type's error.
TEST_CASE("f16 and bf16 convolutions run channel-last on cuda and match the CPU", "[cuda][graph]") {
    GraphBuilder b("cnn_stretch");
    const Value x = b.input("x", DType::f32, {2, 16, 12, 12});
    const auto conv = [&](Value in, const Shape& w, uint32_t seed, const Attributes& attrs) {
        return b.op1("Conv", {in, constant(b, w, seed), constant(b, {w[0]}, seed + 1)}, attrs);
    };
    const Attributes pad1{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    const Value c1 = b.relu(conv(x, {16, 16, 3, 3}, 301, pad1));
    const Value c2 = conv(c1, {16, 16, 1, 1}, 303, {});
    const Value block = b.relu(b.add(c2, x));
    const Value pooled = b.op1("MaxPool", {block}, {{"kernel_shape", std::vector<int64_t>{3, 3}},
                                                    {"strides", std::vector<int64_t>{2, 2}},
                                                    {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    Attributes depthwise = pad1;
    depthwise.set("group", int64_t{16});
    const Value d = b.relu(conv(pooled, {16, 1, 3, 3}, 305, depthwise));
    const Value s = conv(d, {24, 16, 3, 3}, 307, {{"strides", std::vector<int64_t>{2, 2}}});
    b.output("y", b.op1("GlobalAveragePool", {s}));
    const Graph graph = b.build();
    const Batch batch{{"x", Tensor::from_vector(random_values(2 * 16 * 12 * 12, 309), {2, 16, 12, 12})}};
    const std::vector<float> expected = Session(graph, {Device::CPU}).run(batch)["y"].to_vector<float>();
    for (const Precision precision : {Precision::f16, Precision::bf16}) {
        INFO(precision_name(precision));
        SessionOptions options;
        options.device = Device::CUDA;
        options.strict = true;
        options.precision = precision;
        Session session(graph, options);
        const std::vector<float> got = session.run(batch)["y"].to_vector<float>();
        size_t channels_last = 0, pools = 0;
        for (const auto& node : session.placement().nodes) {
            channels_last += node.op == "ChannelsLastConv";
            pools += node.op == "ChannelsLastMaxPool";
        }
        CHECK(channels_last == 4);
        CHECK(pools == 1);
        CHECK(relative_error(got, expected) < (precision == Precision::f16 ? 5e-3 : 3e-2));
    }
}
