// The safetensors reader: good files (one, sharded, every element type, zero-copy sharing) and
// every kind of bad file getting a ModelError (or Unsupported) that names the file and the
// tensor, never a crash.
#include <infer/error.hpp>
#include <infer/safetensors.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

using namespace infer;
namespace fs = std::filesystem;

namespace {

fs::path test_dir() {
    const fs::path dir = fs::temp_directory_path() / "infer_safetensors_test";
    fs::create_directories(dir);
    return dir;
}

// A file of the header's JSON text (its length prefixed, padded with spaces to a multiple of 8 as
// the reference writer does) followed by `data`.
fs::path write_raw(const std::string& name, std::string header, const std::string& data) {
    while ((8 + header.size()) % 8 != 0) header += ' ';
    std::string bytes(8, '\0');
    uint64_t length = header.size();
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>(length >> (8 * i) & 0xff);
    bytes += header + data;
    const fs::path path = test_dir() / name;
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
}

std::string floats(std::initializer_list<float> values) {
    std::string bytes(values.size() * 4, '\0');
    std::memcpy(bytes.data(), values.begin(), bytes.size());
    return bytes;
}

// Two f32 tensors, "a" [2,2] and "b" [3], 28 bytes of data.
const std::string kGoodHeader =
    R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)"
    R"("b":{"dtype":"F32","shape":[3],"data_offsets":[16,28]}})";
const std::string kGoodData = floats({1, 2, 3, 4, 5, 6, 7});

// Opening `path` throws ModelError whose message holds every one of `words`.
void check_model_error(const fs::path& path, std::initializer_list<const char*> words) {
    try {
        Safetensors::open(path.string());
        FAIL("no error for " << path.string());
    } catch (const ModelError& e) {
        const std::string message = e.what();
        INFO(message);
        CHECK(message.find(path.string()) != std::string::npos);
        for (const char* word : words) CHECK(message.find(word) != std::string::npos);
    }
}

}  // namespace

TEST_CASE("safetensors: tensors by name, dtype and shape, sharing the mapping", "[safetensors]") {
    const fs::path path = write_raw("good.safetensors", kGoodHeader, kGoodData);
    std::optional<Tensor> a;
    {
        const Safetensors file = Safetensors::open(path.string());
        CHECK(file.names() == std::vector<std::string>{"a", "b"});
        CHECK(file.contains("b"));
        CHECK_FALSE(file.contains("c"));
        CHECK(file.info("a").dtype == DType::f32);
        CHECK(file.info("a").shape == Shape{2, 2});
        CHECK(file.info("b").file == path.string());
        CHECK(file.metadata().at("format") == "pt");
        CHECK(file.tensor("b").to_vector<float>() == std::vector<float>{5, 6, 7});
        CHECK_THROWS_AS(file.tensor("c"), InvalidArgument);
        a = file.tensor("a");
        // Zero-copy: two reads of one tensor are the same memory.
        CHECK(file.tensor("a").raw_data() == a->raw_data());
    }
    // The tensor outlives the Safetensors object, and writes stay private to the process.
    CHECK(a->to_vector<float>() == std::vector<float>{1, 2, 3, 4});
    a->data<float>()[0] = 42;
    CHECK(Safetensors::open(path.string()).tensor("a").to_vector<float>()[0] == 1);
}

TEST_CASE("safetensors: every element type, and unaligned tensors copied", "[safetensors]") {
    // F16 1.0 = 0x3c00, BF16 1.0 = 0x3f80 (little-endian); the I32 at offset 7 and the I64 at 13
    // are not aligned to their element size, so those two are copied out of the mapping.
    std::string data;
    data += std::string("\x00\x3c", 2) + std::string("\x80\x3f", 2);  // h, bh
    data += std::string("\x01\x00", 2) + std::string("\x07", 1);       // flags, byte
    data += std::string("\x05\x00\x00\x00", 4) + std::string("\xfe", 1) + std::string("\x01", 1);  // i, s, t
    int64_t big = 1234567890123;
    data += std::string(reinterpret_cast<const char*>(&big), 8);
    const std::string header =
        R"({"h":{"dtype":"F16","shape":[1],"data_offsets":[0,2]},)"
        R"("bh":{"dtype":"BF16","shape":[1],"data_offsets":[2,4]},)"
        R"("flags":{"dtype":"BOOL","shape":[2],"data_offsets":[4,6]},)"
        R"("byte":{"dtype":"U8","shape":[],"data_offsets":[6,7]},)"
        R"("i":{"dtype":"I32","shape":[1],"data_offsets":[7,11]},)"
        R"("s":{"dtype":"I8","shape":[1],"data_offsets":[11,12]},)"
        R"("t":{"dtype":"U8","shape":[1,1],"data_offsets":[12,13]},)"
        R"("big":{"dtype":"I64","shape":[1],"data_offsets":[13,21]},)"
        R"("empty":{"dtype":"F32","shape":[0,3],"data_offsets":[21,21]}})";
    const Safetensors file = Safetensors::open(write_raw("types.safetensors", header, data).string());
    CHECK(file.tensor("h").to_vector<float>() == std::vector<float>{1});
    CHECK(file.tensor("bh").to_vector<float>() == std::vector<float>{1});
    CHECK(file.tensor("flags").dtype() == DType::boolean);
    CHECK(file.tensor("byte").shape() == Shape{});
    CHECK(file.tensor("byte").to_vector<int64_t>() == std::vector<int64_t>{7});
    CHECK(file.tensor("i").to_vector<int64_t>() == std::vector<int64_t>{5});
    CHECK(file.tensor("s").to_vector<int64_t>() == std::vector<int64_t>{-2});
    CHECK(file.tensor("big").to_vector<int64_t>() == std::vector<int64_t>{big});
    CHECK(file.tensor("empty").numel() == 0);
}

TEST_CASE("safetensors: sharded checkpoints through model.safetensors.index.json", "[safetensors]") {
    const fs::path dir = test_dir() / "sharded";
    fs::create_directories(dir);
    fs::rename(write_raw("s1", R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", floats({1, 2})),
               dir / "model-00001-of-00002.safetensors");
    fs::rename(write_raw("s2", R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", floats({3})),
               dir / "model-00002-of-00002.safetensors");
    const auto write_index = [&](const std::string& text) {
        std::ofstream(dir / "model.safetensors.index.json") << text;
    };
    write_index(R"({"metadata":{"total_size":12},"weight_map":{"a":"model-00001-of-00002.safetensors",)"
                R"("b":"model-00002-of-00002.safetensors"}})");
    const Safetensors checkpoint = Safetensors::open(dir.string());  // the folder finds the index
    CHECK(checkpoint.names() == std::vector<std::string>{"a", "b"});
    CHECK(checkpoint.tensor("b").to_vector<float>() == std::vector<float>{3});
    CHECK(checkpoint.info("a").file == (dir / "model-00001-of-00002.safetensors").string());

    const fs::path index = dir / "model.safetensors.index.json";
    write_index(R"({"weight_map":{"a":"model-00002-of-00002.safetensors"}})");
    check_model_error(index, {"'a'", "not in its shard"});
    write_index(R"({"weight_map":{"a":"../elsewhere.safetensors"}})");
    check_model_error(index, {"'a'", "not a file name"});
    write_index(R"({"weight_map":{"a":"missing.safetensors"}})");
    check_model_error(index, {"missing.safetensors"});
    write_index(R"({"weight_map":[]})");
    check_model_error(index, {"weight_map"});
    write_index("{not json");
    check_model_error(index, {"not valid JSON"});
}

TEST_CASE("safetensors: malformed and truncated files are ModelErrors", "[safetensors]") {
    // Written byte by byte: files no writer would make.
    const auto write_bytes = [](const std::string& name, const std::string& bytes) {
        const fs::path path = test_dir() / name;
        std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return path;
    };
    SECTION("empty file") { check_model_error(write_bytes("empty.safetensors", ""), {"too short"}); }
    SECTION("header length past the end") {
        check_model_error(write_bytes("long.safetensors", std::string("\x40\x00\x00\x00\x00\x00\x00\x00{}", 10)),
                          {"truncated"});
    }
    SECTION("huge header length") {
        check_model_error(write_bytes("huge.safetensors", std::string(8, '\xff') + "{}"), {"larger than"});
    }
    SECTION("not JSON") { check_model_error(write_raw("notjson.safetensors", "{\"a\":", ""), {"not valid JSON"}); }
    SECTION("not an object") { check_model_error(write_raw("array.safetensors", "[1,2]", ""), {"not a JSON object"}); }
    SECTION("data truncated") {
        check_model_error(write_raw("truncated.safetensors", kGoodHeader, kGoodData.substr(0, 20)),
                          {"'b'", "outside the data section"});
    }
    SECTION("trailing bytes") {
        check_model_error(write_raw("trailing.safetensors", kGoodHeader, kGoodData + "xxxx"), {"cover 28 bytes"});
    }
    SECTION("offsets outside the file") {
        check_model_error(write_raw("outside.safetensors",
                                    R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[1000000,1000004]}})",
                                    floats({1})),
                          {"'a'"});
    }
    SECTION("overlapping offsets") {
        check_model_error(write_raw("overlap.safetensors",
                                    R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                    R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                    floats({1, 2, 3})),
                          {"'b'", "overlap", "'a'"});
    }
    SECTION("a gap between tensors") {
        check_model_error(write_raw("gap.safetensors",
                                    R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                    R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                                    floats({1, 2, 3})),
                          {"'b'", "gap"});
    }
    SECTION("reversed offsets") {
        check_model_error(write_raw("reversed.safetensors",
                                    R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})", floats({1})),
                          {"'a'", "end before"});
    }
    SECTION("shape times element size is not the byte length") {
        check_model_error(write_raw("size.safetensors",
                                    R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", floats({1, 2})),
                          {"'a'", "need 12"});
    }
    SECTION("a shape whose size overflows") {
        check_model_error(write_raw("overflow.safetensors",
                                    R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})",
                                    ""),
                          {"'a'", "overflows"});
    }
    SECTION("an unknown element type") {
        check_model_error(write_raw("dtype.safetensors",
                                    R"({"a":{"dtype":"F31","shape":[1],"data_offsets":[0,4]}})", floats({1})),
                          {"'a'", "F31"});
    }
    SECTION("negative, fractional and missing fields") {
        check_model_error(write_raw("negative.safetensors",
                                    R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", floats({1})),
                          {"'a'", "shape"});
        check_model_error(write_raw("fraction.safetensors",
                                    R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4.0]}})", floats({1})),
                          {"'a'", "data_offsets"});
        check_model_error(write_raw("missing.safetensors", R"({"a":{"dtype":"F32","shape":[1]}})", floats({1})),
                          {"'a'", "data_offsets"});
        check_model_error(write_raw("dtype_type.safetensors",
                                    R"({"a":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})", floats({1})),
                          {"'a'", "dtype"});
        check_model_error(write_raw("metadata.safetensors", R"({"__metadata__":{"k":1}})", ""), {"__metadata__"});
    }
    SECTION("no checkpoint in a folder") {
        const fs::path dir = test_dir() / "none";
        fs::create_directories(dir);
        check_model_error(dir, {"model.safetensors"});
    }
}

TEST_CASE("safetensors: element types infer lacks are Unsupported", "[safetensors]") {
    const fs::path path = write_raw("f8.safetensors",
                                    R"({"a":{"dtype":"F8_E4M3","shape":[4],"data_offsets":[0,4]}})", floats({1}));
    CHECK_THROWS_AS(Safetensors::open(path.string()), Unsupported);
}
