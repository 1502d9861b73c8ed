// Graph::save_onnx: a graph written as ONNX and loaded back computes the same outputs.
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <filesystem>

using namespace infer;

TEST_CASE("save_onnx round-trips a built graph through an ONNX file", "[onnx_export]") {
    GraphBuilder b("roundtrip");
    const Value x = b.input("x", DType::f32, {kDynamic, 3});
    const Value w = b.constant(Tensor::from_vector<float>({1, -2, 3, 0.5f, 4, -1}, {3, 2}), "w");
    const Value h = b.op1("Gelu", {b.matmul(x, w)}, {{"approximate", std::string("tanh")}});
    b.output("y", b.transpose(b.reshape(h, {0, 2}), {1, 0}));
    b.output("x_again", x);  // an output that is an input: written through Identity
    const Graph graph = b.build();
    const auto path = (std::filesystem::temp_directory_path() / "infer_onnx_export_test.onnx").string();
    graph.save_onnx(path);

    const Graph loaded = Graph::load(path);
    REQUIRE(loaded.inputs().size() == 1);
    CHECK(loaded.inputs()[0].shape.rank() == 2);
    CHECK(loaded.inputs()[0].shape[0] == kDynamic);
    Batch inputs;
    inputs.set("x", Tensor::from_vector<float>({0.5f, 1, -1, 2, 0, 1}, {2, 3}));
    const Batch want = graph.run(inputs), got = loaded.run(inputs);
    CHECK(got["y"].to_vector<float>() == want["y"].to_vector<float>());
    CHECK(got["x_again"].to_vector<float>() == inputs["x"].to_vector<float>());
    CHECK_THROWS_AS(graph.save_onnx("/nonexistent/dir/model.onnx"), InvalidArgument);
}
