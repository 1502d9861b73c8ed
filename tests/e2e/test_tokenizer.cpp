// BertTokenizer: its behaviour on a small vocabulary ([basics], needs no model), and its ids on
// a corpus of 500+ varied texts against HuggingFace's tokenizer ([tokenizer], needs the cache).
#include <catch2/catch.hpp>

#include <infer/tokenizer.hpp>

#include "e2e.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

namespace {

infer::BertTokenizer small_tokenizer(bool lower_case = true) {
    return infer::BertTokenizer::from_vocab(
        {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "play", "##ing", "##s", ",", "!",
         "cafe", "un", "##aff", "##able", "中", "国", "Hello", "a", "##b", "$"},
        lower_case, "test vocabulary");
}

std::string join(const std::vector<std::string>& pieces) {
    std::string out;
    for (const auto& piece : pieces) out += (out.empty() ? "" : " ") + piece;
    return out;
}

}  // namespace

TEST_CASE("BertTokenizer splits, lower-cases and strips accents", "[basics]") {
    const auto tokenizer = small_tokenizer();
    CHECK(join(tokenizer.tokenize("Hello, WORLD!")) == "hello , world !");
    CHECK(join(tokenizer.tokenize("playing plays unaffable")) == "play ##ing play ##s un ##aff ##able");
    CHECK(join(tokenizer.tokenize("Café\tcafé\u00a0CAFÉ")) == "cafe cafe cafe");
    CHECK(join(tokenizer.tokenize("中国")) == "中 国");
    CHECK(join(tokenizer.tokenize("$hello")) == "$ hello");
    CHECK(join(tokenizer.tokenize("hello\x07world")) == "[UNK]");  // control dropped: one word
    CHECK(join(tokenizer.tokenize("zzz playingx")) == "[UNK] [UNK]");
    CHECK(join(tokenizer.tokenize("[MASK] hello[SEP]")) == "[MASK] hello [SEP]");
    CHECK(join(small_tokenizer(false).tokenize("Hello hello")) == "Hello hello");
    CHECK(tokenizer.tokenize("  \n ").empty());
}

TEST_CASE("BertTokenizer keeps the 100-character word limit", "[basics]") {
    const auto tokenizer = infer::BertTokenizer::from_vocab({"[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "##a"});
    CHECK(tokenizer.tokenize(std::string(100, 'a')).size() == 100);
    CHECK(join(tokenizer.tokenize(std::string(101, 'a'))) == "[UNK]");
}

TEST_CASE("BertTokenizer encodes with [CLS]/[SEP], truncates and pads batches", "[basics]") {
    const auto tokenizer = small_tokenizer();
    const infer::Encoding e = tokenizer.encode("hello world", 512);
    CHECK(e.input_ids == std::vector<int64_t>{2, 5, 6, 3});
    CHECK(e.attention_mask == std::vector<int64_t>{1, 1, 1, 1});
    CHECK(e.token_type_ids == std::vector<int64_t>{0, 0, 0, 0});
    CHECK(tokenizer.encode("hello world", 3).input_ids == std::vector<int64_t>{2, 5, 3});
    CHECK(tokenizer.encode("", 8).input_ids == std::vector<int64_t>{2, 3});

    const infer::Batch batch = tokenizer.encode_batch({"hello", "hello world !"}, 512);
    REQUIRE(batch["input_ids"].shape() == infer::Shape{2, 5});
    CHECK(batch["input_ids"].dtype() == infer::DType::i64);
    CHECK(batch["input_ids"].to_vector<int64_t>() == std::vector<int64_t>{2, 5, 3, 0, 0, 2, 5, 6, 11, 3});
    CHECK(batch["attention_mask"].to_vector<int64_t>() == std::vector<int64_t>{1, 1, 1, 0, 0, 1, 1, 1, 1, 1});
    CHECK(batch["token_type_ids"].to_vector<int64_t>() == std::vector<int64_t>(10, 0));
}

TEST_CASE("BertTokenizer reports bad input and bad vocabularies", "[basics]") {
    const auto tokenizer = small_tokenizer();
    CHECK_THROWS_AS(tokenizer.encode("hello", 1), infer::InvalidArgument);
    CHECK_THROWS_WITH(tokenizer.encode("ab\xC3(", 8), Catch::Contains("UTF-8") && Catch::Contains("byte 2"));
    CHECK_THROWS_AS(tokenizer.encode("\xED\xA0\x80", 8), infer::InvalidArgument);  // a surrogate
    CHECK_THROWS_AS(tokenizer.encode("\xC0\xAF", 8), infer::InvalidArgument);      // overlong
    CHECK_THROWS_WITH(tokenizer.encode_batch({"ok", "\xFF"}), Catch::Contains("text 1"));
    CHECK_THROWS_AS(tokenizer.encode_batch({}), infer::InvalidArgument);
    CHECK_THROWS_AS(tokenizer.token_id("nope"), infer::InvalidArgument);
    CHECK_THROWS_AS(tokenizer.token(1000), infer::InvalidArgument);
    CHECK(tokenizer.token_id("world") == 6);
    CHECK(tokenizer.token(6) == "world");
    CHECK_THROWS_WITH(infer::BertTokenizer::from_vocab_file("/nonexistent/vocab.txt"),
                      Catch::Contains("/nonexistent/vocab.txt"));
    CHECK_THROWS_AS(infer::BertTokenizer::from_vocab_file("/nonexistent/vocab.txt"), infer::ModelError);
    CHECK_THROWS_WITH(infer::BertTokenizer::from_vocab({"[PAD]", "[CLS]", "[SEP]"}), Catch::Contains("[UNK]"));
}

namespace {

// A tokenizer.json of a five-token WordPiece model, with `normalizer` and `model_type` replaced.
std::filesystem::path write_tokenizer_json(const std::string& normalizer, const std::string& model_type = "WordPiece") {
    const auto folder = std::filesystem::temp_directory_path() / "infer_tokenizer_json_test";
    std::filesystem::create_directories(folder);
    std::ofstream(folder / "tokenizer.json")
        << R"({"normalizer":)" << normalizer << R"(,"pre_tokenizer":{"type":"BertPreTokenizer"},)"
        << R"("added_tokens":[{"id":0,"content":"[PAD]","special":true}],)"
        << R"("model":{"type":")" << model_type << R"(","unk_token":"[UNK]","continuing_subword_prefix":"##",)"
        << R"("max_input_chars_per_word":100,"vocab":{"[PAD]":0,"[UNK]":1,"[CLS]":2,"[SEP]":3,"cafe":4,"##s":5}}})";
    std::ofstream(folder / "tokenizer_config.json") << R"({"model_max_length":128})";
    return folder;
}

}  // namespace

TEST_CASE("BertTokenizer reads tokenizer.json and refuses what it cannot do", "[basics]") {
    const auto folder = write_tokenizer_json(R"({"type":"BertNormalizer","lowercase":true,"strip_accents":null})");
    const auto tokenizer = infer::BertTokenizer::from_tokenizer_json(folder.string());
    CHECK(tokenizer.vocab_size() == 6);
    CHECK(tokenizer.lower_case());
    CHECK(tokenizer.max_length() == 128);
    CHECK(tokenizer.encode("CAFÉS").input_ids == std::vector<int64_t>{2, 4, 5, 3});
    CHECK_THROWS_AS(infer::BertTokenizer::from_tokenizer_json(
                        write_tokenizer_json(R"({"type":"BertNormalizer","lowercase":true,"strip_accents":false})").string()),
                    infer::Unsupported);
    CHECK_THROWS_AS(infer::BertTokenizer::from_tokenizer_json(write_tokenizer_json("null").string()), infer::Unsupported);
    CHECK_THROWS_AS(infer::BertTokenizer::from_tokenizer_json(
                        write_tokenizer_json(R"({"type":"BertNormalizer"})", "BPE").string()),
                    infer::Unsupported);
    CHECK_THROWS_AS(infer::BertTokenizer::from_tokenizer_json("/nonexistent/"), infer::ModelError);
    std::ofstream(folder / "tokenizer.json") << R"({"model":{"type":"WordPiece","max_input_chars_per_word":"100"}})";
    CHECK_THROWS_AS(infer::BertTokenizer::from_tokenizer_json(folder.string()), infer::ModelError);
    std::ofstream(folder / "tokenizer.json") << R"({"model":)";
    CHECK_THROWS_WITH(infer::BertTokenizer::from_tokenizer_json(folder.string()), Catch::Contains("not valid JSON"));
}

TEST_CASE("BertTokenizer gives HuggingFace's ids on the corpus", "[tokenizer]") {
    const auto folder = e2e::model_cache() / "all-MiniLM-L6-v2";
    std::ifstream file(folder / "tokenizer_corpus.json");
    REQUIRE(file);
    const nlohmann::json corpus = nlohmann::json::parse(file);
    // From vocab.txt with the corpus's casing, and from the model folder's tokenizer.json alone.
    const bool from_json = GENERATE(false, true);
    if (from_json && !std::filesystem::exists(folder / "hf" / "tokenizer.json")) {
        WARN("no " << (folder / "hf" / "tokenizer.json").string() << " (scripts/models/prepare.sh all-MiniLM-L6-v2)");
        return;
    }
    const auto tokenizer = from_json ? infer::BertTokenizer::from_tokenizer_json((folder / "hf").string())
                                     : infer::BertTokenizer::from_vocab_file((folder / "vocab.txt").string(),
                                                                             corpus["lower_case"].get<bool>());
    if (from_json) {
        CHECK(tokenizer.lower_case() == corpus["lower_case"].get<bool>());
        CHECK(tokenizer.max_length() == 256);  // sentence_bert_config.json's max_seq_length
    }
    size_t matched = 0, total = 0, slow_matched = 0, slow_total = 0;
    std::ostringstream mismatches;
    for (const auto& entry : corpus["cases"]) {
        const auto text = entry["text"].get<std::string>();
        const auto expected = entry["ids"].get<std::vector<int64_t>>();
        const auto expected_128 = entry["ids_128"].get<std::vector<int64_t>>();
        const auto ids = tokenizer.encode(text, 512).input_ids;
        const bool same = ids == expected && tokenizer.encode(text, 128).input_ids == expected_128;
        ++total;
        matched += same ? 1 : 0;
        if (entry.contains("slow_ids")) {
            ++slow_total;
            slow_matched += ids == entry["slow_ids"].get<std::vector<int64_t>>() ? 1 : 0;
        }
        if (!same && total - matched <= 5) {
            mismatches << "  text " << nlohmann::json(text).dump() << "\n    expected";
            for (int64_t id : expected) mismatches << " " << tokenizer.token(id);
            mismatches << "\n    got     ";
            for (int64_t id : ids) mismatches << " " << tokenizer.token(id);
            mismatches << "\n";
        }
    }
    std::cout << "e2e: tokenizer from " << (from_json ? "tokenizer.json" : "vocab.txt") << " matches " << corpus["tokenizer"].get<std::string>() << " on " << matched << "/"
              << total << " texts";
    if (slow_total > 0)
        std::cout << " (and " << corpus.value("slow_tokenizer", "the slow tokenizer") << " on " << slow_matched
                  << " of the " << slow_total << " where the two differ)";
    std::cout << "\n";
    INFO("first mismatches:\n" << mismatches.str());
    CHECK(total >= 500);
    CHECK(matched == total);
}
