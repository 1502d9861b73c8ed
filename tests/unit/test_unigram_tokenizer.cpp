// UnigramTokenizer on a small hand-made T5-style tokenizer.json (ids worked out by hand), its
// errors, and the grapheme clusters its normalizer walks by. The comparison with Hugging Face on
// a real SentencePiece model and corpus is the e2e test e2e_generation_tokenizers.
#include <catch2/catch.hpp>

#include <infer/error.hpp>
#include <infer/generation_tokenizers.hpp>

#include "core/text/graphemes.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Ids = std::vector<int64_t>;

json special(int64_t id, const std::string& content) {
    return {{"id", id}, {"content", content}, {"special", true}, {"normalized", false}};
}

// T5's pipeline without a charsmap: WhitespaceSplit + Metaspace, "</s>" appended.
json small_unigram() {
    const json pieces = json::array({json::array({"<pad>", 0.0}), json::array({"</s>", 0.0}),
                                     json::array({"<unk>", 0.0}), json::array({"▁", -2.0}),
                                     json::array({"▁he", -3.0}), json::array({"llo", -3.0}),
                                     json::array({"▁hello", -4.5}), json::array({"h", -5.0}),
                                     json::array({"e", -5.0}), json::array({"l", -5.0}), json::array({"o", -5.0}),
                                     json::array({"▁w", -4.0}), json::array({"orld", -4.0}),
                                     json::array({"▁world", -7.0}), json::array({"<extra_id_0>", 0.0})});
    const json metaspace = {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "always"}, {"split", true}};
    return {
        {"added_tokens", {special(0, "<pad>"), special(1, "</s>"), special(2, "<unk>"), special(14, "<extra_id_0>")}},
        {"normalizer", nullptr},
        {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", {{{"type", "WhitespaceSplit"}}, metaspace}}}},
        {"post_processor",
         {{"type", "TemplateProcessing"},
          {"single", {{{"Sequence", {{"id", "A"}, {"type_id", 0}}}}, {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}}}},
          {"special_tokens", {{"</s>", {{"id", "</s>"}, {"ids", {1}}, {"tokens", {"</s>"}}}}}}}},
        {"decoder", metaspace},
        {"model", {{"type", "Unigram"}, {"unk_id", 2}, {"vocab", pieces}, {"byte_fallback", false}}},
    };
}

fs::path write_folder(const std::string& name, const json& tokenizer) {
    const fs::path folder = fs::temp_directory_path() / ("infer_unigram_test_" + name);
    fs::remove_all(folder);
    fs::create_directories(folder);
    std::ofstream(folder / "tokenizer.json") << tokenizer.dump();
    return folder;
}

infer::UnigramTokenizer load(const std::string& name, const json& tokenizer) {
    return infer::UnigramTokenizer::from_tokenizer_json(write_folder(name, tokenizer).string());
}

size_t cluster_end(std::u32string_view text, size_t start = 0) { return infer::text::grapheme_end(text, start); }

}  // namespace

TEST_CASE("Grapheme clusters follow UAX #29", "[unigram_tokenizer]") {
    CHECK(cluster_end(U"e\u0301x") == 2);                          // a combining accent joins
    CHECK(cluster_end(U"\r\nx") == 2);                             // CR LF is one
    CHECK(cluster_end(U"\n\u0301") == 1);                          // nothing joins a control
    CHECK(cluster_end(U"\U0001F1EB\U0001F1F7\U0001F1EF") == 2);    // flags pair regional indicators
    CHECK(cluster_end(U"\U0001F468\u200D\U0001F469x") == 3);       // emoji ZWJ sequence
    CHECK(cluster_end(U"\uAC00\u11A8x") == 2);                     // Hangul LV + T
    CHECK(cluster_end(U"\u0600" U"1x") == 2);                      // a prepended mark
    CHECK(cluster_end(U"ab", 1) == 2);
}

TEST_CASE("UnigramTokenizer picks the best-scoring split and appends </s>", "[unigram_tokenizer]") {
    const auto tokenizer = load("viterbi", small_unigram());
    CHECK(tokenizer.encode("hello world") == Ids{6, 13, 1});          // "▁hello" beats "▁he" + "llo"
    CHECK(tokenizer.tokenize("hello world") == std::vector<std::string>{"▁hello", "▁world"});
    CHECK(tokenizer.encode("  hello\tworld \n") == Ids{6, 13, 1});    // whitespace only separates
    CHECK(tokenizer.encode("hellq") == Ids{4, 9, 9, 2, 1});           // "q": no piece, unknown
    CHECK(tokenizer.encode("qq") == Ids{3, 2, 1});                    // a run of unknowns is one
    CHECK(tokenizer.encode("hello</s>") == Ids{6, 1, 1});
    CHECK(tokenizer.encode("hello<extra_id_0> world") == Ids{6, 14, 13, 1});
    CHECK(tokenizer.encode("") == Ids{1});

    CHECK(tokenizer.decode(Ids{6, 13, 1}) == "hello world</s>");
    CHECK(tokenizer.decode(Ids{6, 13, 1}, true) == "hello world");
    CHECK(tokenizer.decode(Ids{3, 6}) == " hello");  // only the first token's "▁" is dropped
    CHECK(tokenizer.decode(Ids{1, 6}, true) == "hello");

    CHECK(tokenizer.vocab_size() == 15);
    CHECK(tokenizer.token_id("▁world") == 13);
    CHECK(tokenizer.token(14) == "<extra_id_0>");
    CHECK(tokenizer.is_special(14));
    CHECK(tokenizer.eos_id() == 1);
    CHECK(tokenizer.pad_id() == 0);
    CHECK(tokenizer.unk_id() == 2);
    CHECK_FALSE(tokenizer.bos_id());

    const infer::Batch batch = tokenizer.encode_batch({"hello world", "hello"});
    CHECK(batch["input_ids"].to_vector<int64_t>() == Ids{6, 13, 1, 6, 1, 0});
    CHECK(batch["attention_mask"].to_vector<int64_t>() == Ids{1, 1, 1, 1, 1, 0});
    const infer::Batch left = tokenizer.encode_batch({"hello world", "hello"}, infer::PaddingSide::left);
    CHECK(left["input_ids"].to_vector<int64_t>() == Ids{6, 13, 1, 0, 6, 1});
}

TEST_CASE("UnigramTokenizer rejects bad input and what it does not support", "[unigram_tokenizer]") {
    const auto tokenizer = load("errors", small_unigram());
    CHECK_THROWS_AS(tokenizer.encode("\xE2\x96"), infer::InvalidArgument);
    CHECK_THROWS_AS(tokenizer.decode(Ids{15}), infer::InvalidArgument);
    CHECK_THROWS_AS(tokenizer.token_id("nope"), infer::InvalidArgument);

    const auto changed = [](const std::string& name, const std::function<void(json&)>& change) {
        json tokenizer = small_unigram();
        change(tokenizer);
        return write_folder(name, tokenizer).string();
    };
    const auto load_changed = [&](const std::string& name, const std::function<void(json&)>& change) {
        return infer::UnigramTokenizer::from_tokenizer_json(changed(name, change));
    };
    CHECK_THROWS_AS(load_changed("bpe", [](json& t) { t["model"]["type"] = "BPE"; }), infer::Unsupported);
    CHECK_THROWS_AS(load_changed("fallback", [](json& t) { t["model"]["byte_fallback"] = true; }),
                    infer::Unsupported);
    CHECK_THROWS_AS(load_changed("no_unk", [](json& t) { t["model"].erase("unk_id"); }), infer::Unsupported);
    CHECK_THROWS_AS(load_changed("first", [](json& t) {
                        t["pre_tokenizer"]["pretokenizers"][1]["prepend_scheme"] = "first";
                    }),
                    infer::Unsupported);
    CHECK_THROWS_AS(load_changed("nfkc", [](json& t) { t["normalizer"] = {{"type", "NFKC"}}; }), infer::Unsupported);
    CHECK_THROWS_AS(load_changed("bytelevel_decoder", [](json& t) { t["decoder"] = {{"type", "ByteLevel"}}; }),
                    infer::Unsupported);
    CHECK_THROWS_WITH(load_changed("unk_range", [](json& t) { t["model"]["unk_id"] = 99; }),
                      Catch::Contains("unk_id 99"));
    CHECK_THROWS_WITH(load_changed("entry", [](json& t) { t["model"]["vocab"][3] = "▁"; }),
                      Catch::Contains("entry 3"));
    CHECK_THROWS_WITH(load_changed("base64", [](json& t) {
                          t["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "AA*A"}};
                      }),
                      Catch::Contains("not base64"));
    CHECK_THROWS_WITH(load_changed("charsmap", [](json& t) {
                          t["normalizer"] = {{"type", "Precompiled"}, {"precompiled_charsmap", "/wAAAAAA"}};
                      }),
                      Catch::Contains("trie size"));
    CHECK_THROWS_AS(infer::UnigramTokenizer::from_tokenizer_json("/nonexistent/tokenizer.json"), infer::ModelError);
}
