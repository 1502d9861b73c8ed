// ONNX import: good models in old and new forms, and every kind of bad file getting a clear
// ModelError or Unsupported, never a crash.
#include <infer/infer.hpp>
#include <infer/tensor_io.hpp>

#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace infer;
namespace fs = std::filesystem;

namespace {

struct ModelMaker {
    onnx::ModelProto model;
    onnx::GraphProto* graph;

    explicit ModelMaker(int64_t opset = 17) {
        model.set_ir_version(8);
        auto* import = model.add_opset_import();
        import->set_domain("");
        import->set_version(opset);
        graph = model.mutable_graph();
        graph->set_name("g");
    }
    void input(const std::string& name, std::vector<int64_t> dims, int type = onnx::TensorProto_DataType_FLOAT) {
        auto* in = graph->add_input();
        in->set_name(name);
        auto* tensor = in->mutable_type()->mutable_tensor_type();
        tensor->set_elem_type(type);
        for (int64_t d : dims) {
            auto* dim = tensor->mutable_shape()->add_dim();
            if (d < 0) dim->set_dim_param("batch"); else dim->set_dim_value(d);
        }
    }
    void output(const std::string& name) { graph->add_output()->set_name(name); }
    onnx::NodeProto* node(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs) {
        auto* n = graph->add_node();
        n->set_op_type(op);
        n->set_name(op + std::to_string(graph->node_size()));
        for (auto& i : inputs) n->add_input(i);
        for (auto& o : outputs) n->add_output(o);
        return n;
    }
    onnx::TensorProto* initializer(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
        auto* t = graph->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto_DataType_FLOAT);
        for (int64_t d : dims) t->add_dims(d);
        for (float v : values) t->add_float_data(v);
        return t;
    }
    std::string bytes() const {
        std::string b;
        model.SerializeToString(&b);
        return b;
    }
    Graph load() const {
        const std::string b = bytes();
        return Graph::load_from_bytes(b.data(), b.size(), "test.onnx");
    }
};

void add_ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> values) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (int64_t v : values) a->add_ints(v);
}

template <class E>
void expect_error(const ModelMaker& m, const std::string& text) {
    try {
        m.load();
        FAIL("expected an error mentioning " << text);
    } catch (const E& e) {
        INFO(e.what());
        CHECK(std::string(e.what()).find(text) != std::string::npos);
    }
}

Tensor floats(std::vector<float> v, Shape s) { return Tensor::from_vector(v, s); }

}  // namespace

TEST_CASE("an ONNX model loads with symbolic dimensions and runs", "[onnx]") {
    ModelMaker m;
    m.input("x", {-1, 2});
    m.initializer("w", {2, 2}, {1, 2, 3, 4});
    m.node("MatMul", {"x", "w"}, {"h"});
    m.node("Relu", {"h"}, {"y"});
    m.output("y");
    Graph g = m.load();
    REQUIRE(g.inputs().size() == 1);
    CHECK(g.inputs()[0].shape == Shape({kDynamic, 2}));
    Batch out = g.run({{"x", floats({1, -1, 2, 0}, {2, 2})}});
    CHECK(out["y"].to_vector<float>() == std::vector<float>{0, 0, 2, 4});
}

TEST_CASE("older opsets' attribute forms are adapted", "[onnx]") {
    SECTION("Unsqueeze with axes as an attribute (opset 11)") {
        ModelMaker m(11);
        m.input("x", {3});
        add_ints(m.node("Unsqueeze", {"x"}, {"y"}), "axes", {0});
        m.output("y");
        CHECK(m.load().run({{"x", floats({1, 2, 3}, {3})}})["y"].shape() == Shape({1, 3}));
    }
    SECTION("Softmax before opset 13 normalizes over the flattened trailing axes") {
        ModelMaker m(11);
        m.input("x", {1, 2, 2});
        m.node("Softmax", {"x"}, {"y"});  // axis defaults to 1: one row of 4
        m.output("y");
        const auto y = m.load().run({{"x", floats({0, 0, 0, 0}, {1, 2, 2})}})["y"];
        CHECK(y.shape() == Shape({1, 2, 2}));
        for (float v : y.to_vector<float>()) CHECK(v == Approx(0.25f));
    }
}

TEST_CASE("weights in external data files are read from beside the model", "[onnx]") {
    const fs::path dir = fs::temp_directory_path() / "infer_external_data_test";
    fs::create_directories(dir);
    const std::vector<float> weights{0.5f, 1.5f};
    {
        std::ofstream out(dir / "weights.bin", std::ios::binary);
        out.write("pad!", 4);
        out.write(reinterpret_cast<const char*>(weights.data()), 8);
    }
    ModelMaker m;
    m.input("x", {2});
    auto* w = m.graph->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto_DataType_FLOAT);
    w->add_dims(2);
    w->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
    for (auto [k, v] : {std::pair{"location", "weights.bin"}, {"offset", "4"}, {"length", "8"}}) {
        auto* e = w->add_external_data();
        e->set_key(k);
        e->set_value(v);
    }
    m.node("Mul", {"x", "w"}, {"y"});
    m.output("y");
    {
        std::ofstream out(dir / "model.onnx", std::ios::binary);
        out << m.bytes();
    }
    Graph g = Graph::load((dir / "model.onnx").string());
    CHECK(g.run({{"x", floats({2, 2}, {2})}})["y"].to_vector<float>() == std::vector<float>{1, 3});
    fs::remove(dir / "weights.bin");
    CHECK_THROWS_AS(Graph::load((dir / "model.onnx").string()), ModelError);
    fs::remove_all(dir);
}

TEST_CASE("bad model files give ModelError or Unsupported naming the problem", "[onnx][errors]") {
    ModelMaker good;
    good.input("x", {2});
    good.node("Relu", {"x"}, {"y"});
    good.output("y");
    const std::string bytes = good.bytes();

    SECTION("missing file") { CHECK_THROWS_AS(Graph::load("/nonexistent/model.onnx"), ModelError); }
    SECTION("truncated") {
        for (size_t cut = 1; cut < bytes.size(); cut += 3) {
            try {
                Graph::load_from_bytes(bytes.data(), cut, "cut.onnx");
            } catch (const Error&) {  // any clear error is fine; a crash is not
            }
        }
        CHECK_THROWS_AS(Graph::load_from_bytes(bytes.data(), bytes.size() / 2, "cut.onnx"), Error);
    }
    SECTION("garbage bytes") {
        const std::string garbage = "\xff\xfe this is not a protobuf \x01\x02\x03";
        CHECK_THROWS_AS(Graph::load_from_bytes(garbage.data(), garbage.size(), "garbage.onnx"), ModelError);
    }
    SECTION("a valid protobuf that is not a model") {
        onnx::TensorProto t;
        t.set_name("just a tensor");
        t.add_dims(1);
        t.add_float_data(1);
        std::string b;
        t.SerializeToString(&b);
        CHECK_THROWS_AS(Graph::load_from_bytes(b.data(), b.size(), "tensor.onnx"), ModelError);
    }
    SECTION("a cycle") {
        ModelMaker m;
        m.input("x", {2});
        m.node("Add", {"x", "b"}, {"a"});
        m.node("Relu", {"a"}, {"b"});
        m.output("b");
        expect_error<ModelError>(m, "cycle");
    }
    SECTION("a dangling tensor name") {
        ModelMaker m;
        m.input("x", {2});
        m.node("Add", {"x", "ghost"}, {"y"});
        m.output("y");
        expect_error<ModelError>(m, "ghost");
    }
    SECTION("an output nothing produces") {
        ModelMaker m;
        m.input("x", {2});
        m.node("Relu", {"x"}, {"y"});
        m.output("z");
        expect_error<ModelError>(m, "'z'");
    }
    SECTION("an initializer whose data does not match its shape") {
        ModelMaker m;
        m.input("x", {3});
        m.initializer("w", {3}, {1, 2});
        m.node("Add", {"x", "w"}, {"y"});
        m.output("y");
        expect_error<ModelError>(m, "'w'");
    }
    SECTION("an unknown op") {
        ModelMaker m;
        m.input("x", {2});
        m.node("FlashAttention9000", {"x"}, {"y"});
        m.output("y");
        expect_error<Unsupported>(m, "FlashAttention9000");
    }
    SECTION("an op of infer's internal domain (made by fusion, never imported)") {
        for (const char* op : {"Attention", "FusedMatMul", "AddLayerNormalization", "Silu", "ConvIntegerToFloat"}) {
            ModelMaker m;
            m.input("x", {2});
            m.node(op, {"x", "x", "x"}, {"y"});
            m.output("y");
            expect_error<Unsupported>(m, "internal domain");
        }
    }
    SECTION("an unknown domain") {
        ModelMaker m;
        m.input("x", {2});
        m.node("Relu", {"x"}, {"y"})->set_domain("com.example");
        m.output("y");
        expect_error<Unsupported>(m, "com.example");
    }
    SECTION("an opset newer than infer reads") {
        ModelMaker m(99);
        m.input("x", {2});
        m.node("Relu", {"x"}, {"y"});
        m.output("y");
        expect_error<Unsupported>(m, "opset 99");
    }
    SECTION("a pool or conv over an input without spatial axes (found by the fuzzer)") {
        for (const char* op : {"MaxPool", "Conv"}) {
            ModelMaker m;
            m.input("x", {4});
            m.initializer("w", {1, 1, 2, 2}, {1, 1, 1, 1});
            auto* n = std::string(op) == "Conv" ? m.node(op, {"x", "w"}, {"y"}) : m.node(op, {"x"}, {"y"});
            add_ints(n, "kernel_shape", {2, 2});
            m.output("y");
            expect_error<ModelError>(m, "spatial");
        }
    }
    SECTION("an opset-11 Softmax without inputs (found by the fuzzer)") {
        ModelMaker m(11);
        m.input("x", {2});
        m.node("Softmax", {}, {"y"});
        m.output("y");
        expect_error<ModelError>(m, "Softmax");
    }
    SECTION("a tensor produced twice") {
        ModelMaker m;
        m.input("x", {2});
        m.node("Relu", {"x"}, {"y"});
        m.node("Neg", {"x"}, {"y"});
        m.output("y");
        expect_error<ModelError>(m, "'y'");
    }
    SECTION("external data that escapes the model's folder") {
        ModelMaker m;
        m.input("x", {2});
        auto* w = m.graph->add_initializer();
        w->set_name("w");
        w->set_data_type(onnx::TensorProto_DataType_FLOAT);
        w->add_dims(2);
        w->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
        auto* e = w->add_external_data();
        e->set_key("location");
        e->set_value("../../etc/passwd");
        m.node("Add", {"x", "w"}, {"y"});
        m.output("y");
        expect_error<ModelError>(m, "leaves");
    }
}

TEST_CASE("tensors round-trip through .pb and .npy files", "[io]") {
    const fs::path dir = fs::temp_directory_path() / "infer_tensor_io_test";
    fs::create_directories(dir);
    const Tensor t = Tensor::from_vector(std::vector<float>{1.5f, -2, 3, 4, 5, 6}, {2, 3});
    for (const char* name : {"t.pb", "t.npy"}) {
        save_tensor(t, (dir / name).string());
        const Tensor back = load_tensor((dir / name).string());
        CHECK(back.shape() == t.shape());
        CHECK(back.to_vector<float>() == t.to_vector<float>());
    }
    const Tensor ids = Tensor::from_vector(std::vector<int64_t>{7, 8, 9}, {3});
    save_npy(ids, (dir / "ids.npy").string());
    CHECK(load_npy((dir / "ids.npy").string()).to_vector<int64_t>() == std::vector<int64_t>{7, 8, 9});
    {
        std::ofstream bad(dir / "bad.npy", std::ios::binary);
        bad << "not numpy";
    }
    CHECK_THROWS_AS(load_npy((dir / "bad.npy").string()), ModelError);
    fs::remove_all(dir);
}
