// The protocol layer of infer-serve without sockets: datatype names, JSON and binary tensors in
// requests (and every way a request can be wrong, each a 400 naming the problem), JSON and
// binary outputs in responses, metadata, and the served model splitting a request's rows into
// batcher items and stacking their answers back.
#define CATCH_CONFIG_MAIN
#include "datatype.hpp"
#include "infer_request.hpp"
#include "infer_response.hpp"
#include "metadata.hpp"
#include "request_error.hpp"
#include "served_model.hpp"

#include <infer/infer.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <thread>

using namespace infer;
using namespace infer::serve;
using json = nlohmann::json;

namespace {

const std::vector<TensorInfo> kInputs = {{"ids", DType::i64, Shape{kDynamic, kDynamic}},
                                         {"scale", DType::f32, Shape{kDynamic, 3}}};
const std::vector<TensorInfo> kOutputs = {{"out", DType::f32, Shape{kDynamic, 3}},
                                          {"half", DType::f16, Shape{kDynamic}}};

json valid_request() {
    return {{"id", "r1"},
            {"inputs",
             {{{"name", "ids"}, {"shape", {2, 2}}, {"datatype", "INT64"}, {"data", {{1, 2}, {3, 4}}}},
              {{"name", "scale"}, {"shape", {2, 3}}, {"datatype", "FP32"}, {"data", {0.5, 1, 2, 3, 4, 5}}}}}};
}

InferRequest parse(const json& request) { return parse_infer_request(request.dump(), std::nullopt, kInputs, kOutputs); }

// The request is refused with 400 and a message that contains `expected`.
void check_refused(const std::string& body, const std::string& expected, std::optional<size_t> json_length = std::nullopt) {
    INFO(body.substr(0, 300));
    try {
        parse_infer_request(body, json_length, kInputs, kOutputs);
        FAIL("accepted; expected a 400 about '" << expected << "'");
    } catch (const RequestError& e) {
        CHECK(e.status() == 400);
        CHECK_THAT(std::string(e.what()), Catch::Contains(expected));
    }
}

void check_refused(const json& request, const std::string& expected) { check_refused(request.dump(), expected); }

// A binary request: JSON header, then the bytes; returns the body and the header's length.
std::pair<std::string, size_t> binary_body(const json& header, const std::string& bytes) {
    const std::string text = header.dump();
    return {text + bytes, text.size()};
}

template <class T>
std::string bytes_of(const std::vector<T>& values) {
    return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

}  // namespace

TEST_CASE("kserve: datatype names map to DTypes and back", "[server]") {
    for (DType type : kAllDTypes) CHECK(parse_protocol_datatype(protocol_datatype(type)) == type);
    CHECK(protocol_datatype(DType::f32) == "FP32");
    CHECK(protocol_datatype(DType::i64) == "INT64");
    CHECK(protocol_datatype(DType::boolean) == "BOOL");
    CHECK(protocol_datatype(DType::u16) == "UINT16");
    for (const char* unsupported : {"BYTES", "fp32", "uint16", ""}) {
        try {
            parse_protocol_datatype(unsupported);
            FAIL("accepted " << unsupported);
        } catch (const RequestError& e) {
            CHECK(e.status() == 400);
            CHECK_THAT(std::string(e.what()), Catch::Contains("FP32"));  // lists the supported ones
        }
    }
}

TEST_CASE("kserve: a JSON request becomes the model's inputs in its order", "[server]") {
    json request = valid_request();
    std::swap(request["inputs"][0], request["inputs"][1]);  // order in the request does not matter
    request["outputs"] = {{{"name", "half"}, {"parameters", {{"binary_data", true}}}}};
    request["parameters"] = {{"timeout", 2500}, {"priority", 3}};
    const InferRequest parsed = parse(request);
    CHECK(parsed.id == "r1");
    CHECK(parsed.rows == 2);
    CHECK(parsed.inputs.names() == std::vector<std::string>{"ids", "scale"});
    CHECK(parsed.inputs["ids"].to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3, 4});
    CHECK(parsed.inputs["scale"].shape() == Shape{2, 3});
    CHECK(parsed.inputs["scale"].to_vector<float>() == std::vector<float>{0.5f, 1, 2, 3, 4, 5});
    REQUIRE(parsed.outputs.size() == 1);
    CHECK(parsed.outputs[0].name == "half");
    CHECK(parsed.outputs[0].binary);
    CHECK_FALSE(parsed.binary_data_output);
    CHECK(parsed.timeout == std::chrono::microseconds(2500));
    CHECK(parsed.priority == 3);
}

TEST_CASE("kserve: binary tensor data is read at its offsets after the JSON header", "[server]") {
    json header = valid_request();
    header["inputs"][0].erase("data");
    header["inputs"][0]["parameters"] = {{"binary_data_size", 32}};
    header["inputs"][1].erase("data");
    header["inputs"][1]["parameters"] = {{"binary_data_size", 24}};
    header["parameters"] = {{"binary_data_output", true}};
    const std::vector<int64_t> ids{7, 8, 9, 10};
    const std::vector<float> scale{1.5f, -2, 3, 4, 5, 6.25f};
    auto [body, length] = binary_body(header, bytes_of(ids) + bytes_of(scale));
    const InferRequest parsed = parse_infer_request(body, length, kInputs, kOutputs);
    CHECK(parsed.inputs["ids"].to_vector<int64_t>() == ids);
    CHECK(parsed.inputs["scale"].to_vector<float>() == scale);
    CHECK(parsed.binary_data_output);

    SECTION("one input binary, the other JSON") {
        header["inputs"][1].erase("parameters");
        header["inputs"][1]["data"] = scale;
        auto [mixed, mixed_length] = binary_body(header, bytes_of(ids));
        const InferRequest m = parse_infer_request(mixed, mixed_length, kInputs, kOutputs);
        CHECK(m.inputs["ids"].to_vector<int64_t>() == ids);
        CHECK(m.inputs["scale"].to_vector<float>() == scale);
    }
    SECTION("sizes that do not add up are refused") {
        check_refused(body.substr(0, body.size() - 4), "runs past", length);
        check_refused(body + "xx", "belong to no input", length);
        check_refused(body, "beyond the body", body.size() + 1);
        check_refused(header.dump(), "no Inference-Header-Content-Length");
        header["inputs"][0]["parameters"]["binary_data_size"] = 24;
        check_refused(binary_body(header, bytes_of(ids)).first, "32 bytes", binary_body(header, "").second);
        header["inputs"][0]["parameters"]["binary_data_size"] = -1;
        check_refused(binary_body(header, "").first, "byte count", binary_body(header, "").second);
        header["inputs"][0]["parameters"]["binary_data_size"] = 32;
        header["inputs"][0]["data"] = ids;
        check_refused(binary_body(header, bytes_of(ids) + bytes_of(scale)).first, "both",
                      binary_body(header, "").second);
    }
}

TEST_CASE("kserve: Inference-Header-Content-Length must be a byte count", "[server]") {
    CHECK(parse_json_length("123") == 123);
    for (const char* bad : {"", "-1", "12x", "abc", " 12"}) {
        try {
            parse_json_length(bad);
            FAIL("accepted '" << bad << "'");
        } catch (const RequestError& e) {
            CHECK(e.status() == 400);
        }
    }
}

TEST_CASE("kserve: every malformed request is a 400 naming what is wrong", "[server]") {
    check_refused(std::string("{\"inputs\": [ {\"name\": "), "malformed JSON");
    check_refused(std::string("[1, 2]"), "JSON object");
    check_refused(std::string("\xff\xfe"), "malformed JSON");

    auto with = [](auto&& change) {
        json request = valid_request();
        change(request);
        return request;
    };
    check_refused(with([](json& r) { r.erase("inputs"); }), "\"inputs\"");
    check_refused(with([](json& r) { r["inputs"] = json::array(); }), "\"inputs\"");
    check_refused(with([](json& r) { r["inputs"][0] = 5; }), "must be an object");
    check_refused(with([](json& r) { r["inputs"][0].erase("name"); }), "no \"name\"");
    check_refused(with([](json& r) { r["inputs"][0]["name"] = "input_ids"; }), "unknown input 'input_ids'");
    check_refused(with([](json& r) { r["inputs"][1] = r["inputs"][0]; }), "given twice");
    check_refused(with([](json& r) { r["inputs"][0].erase("datatype"); }), "no \"datatype\"");
    check_refused(with([](json& r) { r["inputs"][0]["datatype"] = "BYTES"; }), "'BYTES' is not supported");
    check_refused(with([](json& r) { r["inputs"][0]["datatype"] = "INT32"; }), "the model takes INT64");
    check_refused(with([](json& r) { r["inputs"][0].erase("shape"); }), "no \"shape\"");
    check_refused(with([](json& r) { r["inputs"][0]["shape"] = "2x2"; }), "array of sizes");
    check_refused(with([](json& r) { r["inputs"][0]["shape"] = {2, -2}; }), "not a size");
    check_refused(with([](json& r) { r["inputs"][0]["shape"] = {4}; }), "does not match the model's");
    check_refused(with([](json& r) { r["inputs"][1]["shape"] = {3, 2}; }), "does not match the model's [?,3]");
    check_refused(with([](json& r) {
                      r["inputs"][0]["shape"] = {0, 2};
                      r["inputs"][0]["data"] = json::array();
                  }),
                  "no rows");
    check_refused(with([](json& r) { r["inputs"][0]["shape"] = {1 << 30, 1 << 30}; }), "too large");
    check_refused(with([](json& r) { r["inputs"][0]["data"] = {1, 2, 3}; }), "3 data elements for shape [2,2]");
    check_refused(with([](json& r) { r["inputs"][0].erase("data"); }), "neither \"data\"");
    check_refused(with([](json& r) { r["inputs"][0]["data"] = {1, 2, 3, "4"}; }), "element 3 (\"4\") is not an integer");
    check_refused(with([](json& r) { r["inputs"][0]["data"] = {1, 2, 3, 4.5}; }), "not an integer");
    check_refused(with([](json& r) { r["inputs"][1]["data"] = {1, 2, 3, 4, 5, nullptr}; }), "not a number");
    check_refused(with([](json& r) { r["inputs"].erase(1); }), "missing input 'scale'");
    check_refused(with([](json& r) {
                      r["inputs"][1]["shape"] = {1, 3};
                      r["inputs"][1]["data"] = {1, 2, 3};
                  }),
                  "must agree");
    check_refused(with([](json& r) { r["outputs"] = "out"; }), "\"outputs\" must be an array");
    check_refused(with([](json& r) { r["outputs"] = {{{"name", "logits"}}}; }), "unknown output 'logits'");
    check_refused(with([](json& r) { r["outputs"] = {{{"name", "out"}, {"parameters", {{"binary_data", 1}}}}}; }),
                  "binary_data must be true or false");
    check_refused(with([](json& r) { r["parameters"] = 7; }), "\"parameters\" must be an object");
    check_refused(with([](json& r) { r["parameters"] = {{"timeout", -5}}; }), "timeout");
    check_refused(with([](json& r) { r["parameters"] = {{"priority", "high"}}; }), "priority");
    check_refused(with([](json& r) { r["id"] = 12; }), "\"id\" must be a string");
}

TEST_CASE("kserve: integers out of the input's range are refused, booleans must be booleans", "[server]") {
    const std::vector<TensorInfo> inputs = {{"small", DType::i32, Shape{kDynamic}}, {"flag", DType::boolean, Shape{kDynamic}}};
    auto request = [](json small, json flag) {
        return json{{"inputs",
                     {{{"name", "small"}, {"shape", {1}}, {"datatype", "INT32"}, {"data", {small}}},
                      {{"name", "flag"}, {"shape", {1}}, {"datatype", "BOOL"}, {"data", {flag}}}}}}
            .dump();
    };
    const InferRequest ok = parse_infer_request(request(-2147483648LL, true), std::nullopt, inputs, {});
    CHECK(ok.inputs["small"].to_vector<int32_t>() == std::vector<int32_t>{-2147483647 - 1});
    CHECK(*static_cast<const bool*>(ok.inputs["flag"].raw_data()));
    for (const auto& [body, expected] : {std::pair{request(2147483648LL, true), "out of range"},
                                         std::pair{request(json(18446744073709551615ULL), true), "out of range"},
                                         std::pair{request(1, 1), "not true or false"}}) {
        try {
            parse_infer_request(body, std::nullopt, inputs, {});
            FAIL("accepted " << body);
        } catch (const RequestError& e) {
            CHECK(e.status() == 400);
            CHECK_THAT(std::string(e.what()), Catch::Contains(expected));
        }
    }
}

TEST_CASE("kserve: BOOL binary data must be bytes 0 or 1", "[server]") {
    const std::vector<TensorInfo> inputs = {{"flag", DType::boolean, Shape{kDynamic}}};
    const json header = {{"inputs", {{{"name", "flag"}, {"shape", {3}}, {"datatype", "BOOL"},
                                      {"parameters", {{"binary_data_size", 3}}}}}}};
    const std::string text = header.dump();
    const InferRequest ok = parse_infer_request(text + std::string("\1\0\1", 3), text.size(), inputs, {});
    CHECK(static_cast<const bool*>(ok.inputs["flag"].raw_data())[2]);
    try {
        parse_infer_request(text + std::string("\1\2\1", 3), text.size(), inputs, {});
        FAIL("accepted a bool byte of 2");
    } catch (const RequestError& e) {
        CHECK_THAT(std::string(e.what()), Catch::Contains("other than 0 or 1"));
    }
}

TEST_CASE("kserve: responses carry JSON data or binary data at the header's end", "[server]") {
    InferRequest request = parse(valid_request());
    Batch outputs{{"out", Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3})},
                  {"half", Tensor::from_vector(std::vector<half>{half(0.5f), half(-2.0f)}, {2})}};

    SECTION("JSON: every output of the model, in its order") {
        const EncodedResponse response = encode_infer_response("tiny", request, outputs, kOutputs);
        CHECK_FALSE(response.json_length);
        CHECK(response.content_type == "application/json");
        const json document = json::parse(response.body);
        CHECK(document["model_name"] == "tiny");
        CHECK(document["id"] == "r1");
        REQUIRE(document["outputs"].size() == 2);
        CHECK(document["outputs"][0]["name"] == "out");
        CHECK(document["outputs"][0]["datatype"] == "FP32");
        CHECK(document["outputs"][0]["shape"] == json{2, 3});
        CHECK(document["outputs"][0]["data"] == json{1.0, 2.0, 3.0, 4.0, 5.0, 6.0});
        CHECK(document["outputs"][1]["datatype"] == "FP16");
        CHECK(document["outputs"][1]["data"] == json{0.5, -2.0});
    }
    SECTION("binary for the output asked so, JSON for the other, in the order asked") {
        request.outputs = {{"half", false}, {"out", true}};
        const EncodedResponse response = encode_infer_response("tiny", request, outputs, kOutputs);
        REQUIRE(response.json_length);
        CHECK(response.content_type == "application/octet-stream");
        const json header = json::parse(response.body.substr(0, *response.json_length));
        CHECK(header["outputs"][0]["name"] == "half");
        CHECK(header["outputs"][0]["data"] == json{0.5, -2.0});
        CHECK(header["outputs"][1]["parameters"]["binary_data_size"] == 24);
        CHECK_FALSE(header["outputs"][1].contains("data"));
        REQUIRE(response.body.size() == *response.json_length + 24);
        std::vector<float> values(6);
        std::memcpy(values.data(), response.body.data() + *response.json_length, 24);
        CHECK(values == std::vector<float>{1, 2, 3, 4, 5, 6});
    }
    SECTION("binary_data_output: every output as bytes, one after the other") {
        request.binary_data_output = true;
        const EncodedResponse response = encode_infer_response("tiny", request, outputs, kOutputs);
        REQUIRE(response.json_length);
        CHECK(response.body.size() == *response.json_length + 24 + 4);
        uint16_t second = 0;
        std::memcpy(&second, response.body.data() + *response.json_length + 24 + 2, 2);
        CHECK(half_bits_to_float(second) == -2.0f);
    }
    CHECK(json::parse(error_body("bad \xff byte"))["error"].get<std::string>().starts_with("bad "));
}

namespace {

// ids [B, S] i64 and mask [B, S] i64 → tokens = ids · mask as f32 [B, S], count = Σ mask [B].
Graph token_model() {
    GraphBuilder b("tokens");
    auto ids = b.input("input_ids", DType::i64, {kDynamic, kDynamic});
    auto mask = b.input("attention_mask", DType::i64, {kDynamic, kDynamic});
    auto product = b.cast(b.mul(ids, mask), DType::f32);
    b.output("tokens", product);
    b.output("count", b.op1("ReduceSum", {b.cast(mask, DType::f32), b.constant_i64({1})}, {{"keepdims", int64_t{0}}}));
    return b.build();
}

InferRequest token_request(int64_t rows, int64_t length, int64_t first) {
    std::vector<int64_t> ids(static_cast<size_t>(rows * length)), mask(ids.size(), 1);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = first + static_cast<int64_t>(i);
    InferRequest request;
    request.rows = rows;
    request.inputs = {{"input_ids", Tensor::from_vector(ids, {rows, length})},
                      {"attention_mask", Tensor::from_vector(mask, {rows, length})}};
    return request;
}

}  // namespace

TEST_CASE("kserve: metadata gives protocol datatypes and -1 for dynamic dimensions", "[server]") {
    const json model = model_metadata("tokens", token_model(), {"cpu"});
    CHECK(model["name"] == "tokens");
    CHECK(model["inputs"][0] == json{{"name", "input_ids"}, {"datatype", "INT64"}, {"shape", {-1, -1}}});
    CHECK(model["outputs"][1] == json{{"name", "count"}, {"datatype", "FP32"}, {"shape", {-1}}});
    CHECK(server_metadata()["extensions"] == json{"binary_tensor_data"});
}

TEST_CASE("kserve: a served model splits rows into batcher items and stacks their answers", "[server]") {
    ModelOptions options;
    options.batcher.max_batch = 8;
    options.batcher.max_delay = std::chrono::microseconds(3000);
    ServedModel model("tokens", token_model(), options);

    const Batch outputs = model.infer(token_request(3, 5, 100));
    CHECK(outputs["tokens"].shape() == Shape{3, 5});  // trimmed back from the bucket of 16
    CHECK(outputs["tokens"].to_vector<float>()[14] == 114.0f);
    CHECK(outputs["count"].to_vector<float>() == std::vector<float>{5, 5, 5});

    // Threads with different lengths share batches; each gets its own rows back.
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 6; ++t)
        threads.emplace_back([&, t] {
            for (int r = 0; r < 10; ++r) {
                const int64_t length = 1 + (t * 7 + r) % 20, first = t * 1000 + r * 50;
                const Batch answer = model.infer(token_request(2, length, first));
                const std::vector<float> tokens = answer["tokens"].to_vector<float>();
                bool ok = answer["tokens"].shape() == Shape{2, length};
                for (size_t i = 0; ok && i < tokens.size(); ++i) ok = tokens[i] == static_cast<float>(first + static_cast<int64_t>(i));
                if (!ok || answer["count"].to_vector<float>() != std::vector<float>(2, static_cast<float>(length))) ++wrong;
            }
        });
    for (std::thread& thread : threads) thread.join();
    CHECK(wrong == 0);

    const json stats = model.stats();
    CHECK(stats["completed"] == 3 + 6 * 10 * 2);
    CHECK(stats["failed"] == 0);
    CHECK(stats["batches"].get<int>() <= stats["completed"].get<int>());
    CHECK(stats["batches_per_device"]["cpu"] == stats["batches"]);
    model.shutdown();
    CHECK_THROWS_AS(model.infer(token_request(1, 4, 0)), Overloaded);
}

TEST_CASE("kserve: a model without a dynamic batch axis is refused at load", "[server]") {
    GraphBuilder b("fixed");
    b.output("y", b.relu(b.input("x", DType::f32, {1, 4})));
    CHECK_THROWS_AS(ServedModel("fixed", b.build(), {}), Unsupported);
}
