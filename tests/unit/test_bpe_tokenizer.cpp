// BpeTokenizer on a small hand-made byte-level BPE (ids worked out by hand), its errors, and the
// pieces under it: GPT-2's word splitting and the lossy UTF-8 of its decoder. The comparison with
// Hugging Face on a real corpus is the e2e test e2e_generation_tokenizers.
#include <catch2/catch.hpp>

#include <infer/error.hpp>
#include <infer/generation_tokenizers.hpp>

#include "core/text/gpt2_pre_tokenizer.hpp"
#include "core/text/unicode.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// "Ġ" is the byte-level character for a space; "Ã" "©" are the two bytes of "é".
json small_bpe() {
    const std::vector<std::string> tokens{"<|endoftext|>", "h", "e", "l", "o", "Ġ", "w", "r", "d", "!", "'", "s",
                                          "he", "ll", "llo", "hello", "Ġw", "or", "Ġwor", "ld", "Ġworld", "Ã", "©",
                                          "Ã©"};
    json vocab = json::object();
    for (size_t id = 0; id < tokens.size(); ++id) vocab[tokens[id]] = id;
    return {
        {"added_tokens", {{{"id", 0}, {"content", "<|endoftext|>"}, {"special", true}, {"normalized", false}}}},
        {"normalizer", nullptr},
        {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
        {"post_processor", {{"type", "ByteLevel"}}},
        {"decoder", {{"type", "ByteLevel"}}},
        {"model",
         {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"vocab", vocab},
          {"merges", {"h e", "l l", "ll o", "he llo", "Ġ w", "o r", "Ġw or", json::array({"l", "d"}),
                      "Ġwor ld", "Ã ©"}}}},
    };
}

// A folder of its own per test case (ctest may run them at once) holding tokenizer.json.
fs::path write_folder(const std::string& name, const json& tokenizer) {
    const fs::path folder = fs::temp_directory_path() / ("infer_bpe_test_" + name);
    fs::remove_all(folder);
    fs::create_directories(folder);
    std::ofstream(folder / "tokenizer.json") << tokenizer.dump();
    return folder;
}

infer::BpeTokenizer load(const std::string& name, const json& tokenizer) {
    return infer::BpeTokenizer::from_tokenizer_json(write_folder(name, tokenizer).string());
}

std::vector<std::string> words(std::string_view utf8) {
    const std::u32string text = infer::text::decode_utf8(utf8);
    std::vector<std::string> out;
    for (const auto& [begin, end] : infer::text::split_gpt2_words(text))
        out.push_back(infer::text::encode_utf8(std::u32string_view(text).substr(begin, end - begin)));
    return out;
}

using Words = std::vector<std::string>;
using Ids = std::vector<int64_t>;

}  // namespace

TEST_CASE("GPT-2's regex splits words as Hugging Face's ByteLevel pre-tokenizer", "[bpe_tokenizer]") {
    CHECK(words("Hello world!") == Words{"Hello", " world", "!"});
    CHECK(words("it's they'll I'M") == Words{"it", "'s", " they", "'ll", " I", "'", "M"});
    CHECK(words("a   b") == Words{"a", "  ", " b"});  // the last space goes with the word
    CHECK(words("a\n\nb") == Words{"a", "\n", "\n", "b"});
    CHECK(words("a\tb") == Words{"a", "\t", "b"});
    CHECK(words("end   ") == Words{"end", "   "});
    CHECK(words("x 123 !? ...") == Words{"x", " 123", " !?", " ..."});
    CHECK(words("abc123") == Words{"abc", "123"});
    CHECK(words("naïve 日本語 ٣") == Words{"naïve", " 日本語", " ٣"});
    CHECK(words("a\u00a0b") == Words{"a", "\u00a0", "b"});  // NBSP is \s, but not the optional " "
    CHECK(words("").empty());
}

TEST_CASE("Lossy UTF-8 replaces each maximal ill-formed subsequence once", "[bpe_tokenizer]") {
    using infer::text::utf8_lossy;
    const std::string fffd = "\xEF\xBF\xBD";
    CHECK(utf8_lossy("plain é") == "plain é");
    CHECK(utf8_lossy("\xE2\x82" "a") == fffd + "a");            // a cut 3-byte sequence
    CHECK(utf8_lossy("\xF0\x9F\x98") == fffd);                  // a cut 4-byte sequence at the end
    CHECK(utf8_lossy("\xC0\xAF") == fffd + fffd);               // overlong: neither byte starts anything
    CHECK(utf8_lossy("\xED\xA0\x80") == fffd + fffd + fffd);    // a surrogate
    CHECK(utf8_lossy("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // beyond U+10FFFF
    CHECK(utf8_lossy("\x80\xBF") == fffd + fffd);
}

TEST_CASE("BpeTokenizer merges by rank and decodes bytes", "[bpe_tokenizer]") {
    const auto tokenizer = load("merges", small_bpe());
    CHECK(tokenizer.encode("hello world!") == Ids{15, 20, 9});
    CHECK(tokenizer.tokenize("hello world!") == Words{"hello", "Ġworld", "!"});
    CHECK(tokenizer.encode("he's") == Ids{12, 10, 11});
    CHECK(tokenizer.encode("hello  world") == Ids{15, 5, 20});
    CHECK(tokenizer.encode("é") == Ids{23});
    CHECK(tokenizer.encode("hello<|endoftext|>") == Ids{15, 0});  // the special token written in the text
    CHECK(tokenizer.encode("").empty());
    CHECK(tokenizer.encode("q").empty());  // a byte the vocabulary lacks, with no unk_token, is dropped

    CHECK(tokenizer.decode(Ids{15, 20, 9}) == "hello world!");
    CHECK(tokenizer.decode(Ids{0, 15}) == "<|endoftext|>hello");
    CHECK(tokenizer.decode(Ids{0, 15}, true) == "hello");
    CHECK(tokenizer.decode(Ids{21, 22}) == "é");        // a character cut between two tokens
    CHECK(tokenizer.decode(Ids{21}) == "\xEF\xBF\xBD");  // half of it
    CHECK(tokenizer.decode(Ids{}).empty());

    CHECK(tokenizer.vocab_size() == 24);
    CHECK(tokenizer.token_id("Ġworld") == 20);
    CHECK(tokenizer.token(15) == "hello");
    CHECK(tokenizer.is_special(0));
    CHECK_FALSE(tokenizer.is_special(15));
    CHECK_FALSE(tokenizer.is_special(1000));
    // No tokenizer_config.json: GPT-2's defaults.
    CHECK(tokenizer.eos_id() == 0);
    CHECK(tokenizer.bos_id() == 0);
    CHECK(tokenizer.unk_id() == 0);
    CHECK_FALSE(tokenizer.pad_id());
}

TEST_CASE("BpeTokenizer pads batches on the side asked for", "[bpe_tokenizer]") {
    const auto tokenizer = load("batch", small_bpe());
    const infer::Batch left = tokenizer.encode_batch({"hello world!", "hello"});
    CHECK(left["input_ids"].shape() == infer::Shape{2, 3});
    CHECK(left["input_ids"].to_vector<int64_t>() == Ids{15, 20, 9, 0, 0, 15});  // eos pads: no pad token
    CHECK(left["attention_mask"].to_vector<int64_t>() == Ids{1, 1, 1, 0, 0, 1});
    const infer::Batch right = tokenizer.encode_batch({"hello world!", "hello"}, infer::PaddingSide::right);
    CHECK(right["input_ids"].to_vector<int64_t>() == Ids{15, 20, 9, 15, 0, 0});
    CHECK(right["attention_mask"].to_vector<int64_t>() == Ids{1, 1, 1, 1, 0, 0});

    // tokenizer_config.json names the roles, a pad token among them.
    const fs::path folder = write_folder("batch_config", small_bpe());
    std::ofstream(folder / "tokenizer_config.json") << R"({"eos_token": "!", "pad_token": {"content": "Ġ"}})";
    const auto configured = infer::BpeTokenizer::from_tokenizer_json((folder / "tokenizer.json").string());
    CHECK(configured.eos_id() == 9);
    CHECK(configured.pad_id() == 5);
    CHECK_FALSE(configured.bos_id());
    CHECK(configured.encode_batch({"hello world", "hello"})["input_ids"].to_vector<int64_t>() == Ids{15, 20, 5, 15});
}

TEST_CASE("BpeTokenizer reads vocab.json and merges.txt", "[bpe_tokenizer]") {
    const json tokenizer = small_bpe();
    const fs::path folder = write_folder("files", tokenizer);
    std::ofstream(folder / "vocab.json") << tokenizer["model"]["vocab"].dump();
    std::ofstream(folder / "merges.txt") << "#version: 0.2\nh e\nl l\nll o\nhe llo\nĠ w\no r\nĠw or\nl d\nĠwor ld\nÃ ©\n";
    const auto from_files = infer::BpeTokenizer::from_vocab_merges((folder / "vocab.json").string(),
                                                                   (folder / "merges.txt").string());
    CHECK(from_files.encode("hello world!<|endoftext|>") == Ids{15, 20, 9, 0});
    CHECK(from_files.eos_id() == 0);
    CHECK(from_files.is_special(0));

    std::ofstream(folder / "bad_merges.txt") << "h e\nl l x\n";
    CHECK_THROWS_WITH(infer::BpeTokenizer::from_vocab_merges((folder / "vocab.json").string(),
                                                             (folder / "bad_merges.txt").string()),
                      Catch::Contains("bad_merges.txt: line 2"));
    CHECK_THROWS_AS(infer::BpeTokenizer::from_vocab_merges((folder / "vocab.json").string(),
                                                           (folder / "missing.txt").string()),
                    infer::ModelError);
}

TEST_CASE("BpeTokenizer rejects bad input and what it does not support", "[bpe_tokenizer]") {
    const auto tokenizer = load("errors", small_bpe());
    CHECK_THROWS_AS(tokenizer.encode("bad \xFF byte"), infer::InvalidArgument);
    CHECK_THROWS_WITH(tokenizer.encode_batch({"hello", "\xC3"}), Catch::Contains("text 1"));
    CHECK_THROWS_AS(tokenizer.encode_batch({}), infer::InvalidArgument);
    CHECK_THROWS_AS(tokenizer.decode(Ids{15, 24}), infer::InvalidArgument);
    CHECK_THROWS_AS(tokenizer.decode(Ids{-1}), infer::InvalidArgument);
    CHECK_THROWS_AS(tokenizer.token_id("zzz"), infer::InvalidArgument);
    CHECK_THROWS_AS(tokenizer.token(24), infer::InvalidArgument);

    CHECK_THROWS_AS(infer::BpeTokenizer::from_tokenizer_json("/nonexistent/folder/"), infer::ModelError);
    const auto refused = [](const std::string& name, const std::function<void(json&)>& change) {
        json tokenizer = small_bpe();
        change(tokenizer);
        return write_folder(name, tokenizer).string();
    };
    CHECK_THROWS_AS(infer::BpeTokenizer::from_tokenizer_json(
                        refused("wordpiece", [](json& t) { t["model"]["type"] = "WordPiece"; })),
                    infer::Unsupported);
    CHECK_THROWS_AS(infer::BpeTokenizer::from_tokenizer_json(
                        refused("nfc", [](json& t) { t["normalizer"] = {{"type", "NFC"}}; })),
                    infer::Unsupported);
    CHECK_THROWS_AS(infer::BpeTokenizer::from_tokenizer_json(
                        refused("dropout", [](json& t) { t["model"]["dropout"] = 0.1; })),
                    infer::Unsupported);
    CHECK_THROWS_AS(infer::BpeTokenizer::from_tokenizer_json(refused("single_word", [](json& t) {
                        t["added_tokens"][0]["single_word"] = true;
                    })),
                    infer::Unsupported);
    CHECK_THROWS_AS(infer::BpeTokenizer::from_tokenizer_json(
                        refused("roberta", [](json& t) { t["post_processor"] = {{"type", "RobertaProcessing"}}; })),
                    infer::Unsupported);
    CHECK_THROWS_WITH(infer::BpeTokenizer::from_tokenizer_json(
                          refused("bad_merge", [](json& t) { t["model"]["merges"].push_back("h zz"); })),
                      Catch::Contains("merge 10") && Catch::Contains("'zz'"));
    CHECK_THROWS_WITH(infer::BpeTokenizer::from_tokenizer_json(
                          refused("hole", [](json& t) { t["model"]["vocab"]["far"] = 40; })),
                      Catch::Contains("no token has the id 24"));
    CHECK_THROWS_AS(infer::BpeTokenizer::from_tokenizer_json(
                        refused("vocab_type", [](json& t) { t["model"]["vocab"]["h"] = "one"; })),
                    infer::ModelError);
    const fs::path folder = write_folder("truncated", small_bpe());
    std::ofstream(folder / "tokenizer.json") << R"({"model":)";
    CHECK_THROWS_AS(infer::BpeTokenizer::from_tokenizer_json(folder.string()), infer::ModelError);
    std::ofstream(folder / "tokenizer.json") << small_bpe().dump();
    std::ofstream(folder / "tokenizer_config.json") << R"({"eos_token": "<|nope|>"})";
    CHECK_THROWS_WITH(infer::BpeTokenizer::from_tokenizer_json(folder.string()),
                      Catch::Contains("tokenizer_config.json") && Catch::Contains("<|nope|>"));
}
