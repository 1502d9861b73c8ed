// BpeTokenizer and UnigramTokenizer against Hugging Face on the generation tokenizers that
// scripts/models/prepare.sh trains (gpt2-bpe-tokenizer, t5-unigram-tokenizer): the ids of 600+
// varied texts, their decodings with and without special tokens, and random id sequences
// decoded. Each tokenizer not prepared is skipped with a warning.
#include <catch2/catch.hpp>

#include <infer/generation_tokenizers.hpp>

#include "e2e.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

namespace {

std::optional<nlohmann::json> read_reference(const std::string& name) {
    const auto path = e2e::model_cache() / name / "tokenizer_corpus.json";
    std::ifstream file(path);
    if (!file) {
        WARN("no " << path.string() << " (scripts/models/prepare.sh " << name << ")");
        return std::nullopt;
    }
    return nlohmann::json::parse(file);
}

std::string quoted(const std::string& text) {
    return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<int64_t> optional_id(const nlohmann::json& reference, const char* key) {
    const nlohmann::json& value = reference[key];
    return value.is_null() ? std::nullopt : std::optional<int64_t>(value.get<int64_t>());
}

// Checks a tokenizer (BpeTokenizer or UnigramTokenizer) against the reference; `label` names it.
template <typename Tokenizer>
void check_against_reference(const Tokenizer& tokenizer, const nlohmann::json& reference, const std::string& label) {
    CHECK(tokenizer.vocab_size() == reference["vocab_size"].get<size_t>());
    for (const auto& [key, id] : {std::pair{"eos_id", tokenizer.eos_id()}, std::pair{"pad_id", tokenizer.pad_id()},
                                  std::pair{"bos_id", tokenizer.bos_id()}, std::pair{"unk_id", tokenizer.unk_id()}}) {
        INFO(key);
        CHECK(id == optional_id(reference, key));
    }
    size_t ids_matched = 0, decodes_matched = 0, total = 0;
    std::ostringstream mismatches;
    for (const auto& entry : reference["cases"]) {
        const auto text = entry["text"].get<std::string>();
        const auto expected = entry["ids"].get<std::vector<int64_t>>();
        const auto ids = tokenizer.encode(text);
        const bool same_ids = ids == expected;
        const bool same_decode = tokenizer.decode(expected) == entry["decoded"].get<std::string>() &&
                                 tokenizer.decode(expected, true) == entry["decoded_skip"].get<std::string>();
        ++total;
        ids_matched += same_ids;
        decodes_matched += same_decode;
        if ((!same_ids || !same_decode) && total - std::min(ids_matched, decodes_matched) <= 5) {
            mismatches << "  text " << quoted(text) << "\n";
            if (!same_ids) {
                mismatches << "    expected";
                for (int64_t id : expected) mismatches << " " << quoted(tokenizer.token(id));
                mismatches << "\n    got     ";
                for (int64_t id : ids) mismatches << " " << quoted(tokenizer.token(id));
                mismatches << "\n";
            }
            if (!same_decode)
                mismatches << "    decoded " << quoted(tokenizer.decode(expected)) << ", expected "
                           << quoted(entry["decoded"].get<std::string>()) << "\n";
        }
    }
    size_t sequences_matched = 0, sequences = 0;
    for (const auto& entry : reference["decodes"]) {
        const auto ids = entry["ids"].get<std::vector<int64_t>>();
        const bool same = tokenizer.decode(ids) == entry["decoded"].get<std::string>() &&
                          tokenizer.decode(ids, true) == entry["decoded_skip"].get<std::string>();
        ++sequences;
        sequences_matched += same;
        if (!same && sequences - sequences_matched <= 3)
            mismatches << "  ids " << nlohmann::json(ids).dump() << " decoded " << quoted(tokenizer.decode(ids))
                       << ", expected " << quoted(entry["decoded"].get<std::string>()) << "\n";
    }
    std::cout << "e2e: " << label << " matches " << reference["tokenizer"].get<std::string>() << ": ids on "
              << ids_matched << "/" << total << " texts, decode on " << decodes_matched << "/" << total
              << ", decode of random ids on " << sequences_matched << "/" << sequences << "\n";
    INFO("first mismatches:\n" << mismatches.str());
    CHECK(total >= 500);
    CHECK(ids_matched == total);
    CHECK(decodes_matched == total);
    CHECK(sequences_matched == sequences);
}

}  // namespace

TEST_CASE("BpeTokenizer gives Hugging Face's ids and decodings on the corpus", "[generation_tokenizers]") {
    const auto reference = read_reference("gpt2-bpe-tokenizer");
    if (!reference) return;
    const auto folder = e2e::model_cache() / "gpt2-bpe-tokenizer";
    const auto tokenizer = infer::BpeTokenizer::from_tokenizer_json(folder.string());
    check_against_reference(tokenizer, *reference, "BpeTokenizer (tokenizer.json)");

    // Byte-level BPE loses nothing: every text comes back.
    size_t round_trips = 0;
    for (const auto& entry : (*reference)["cases"])
        round_trips += tokenizer.decode(tokenizer.encode(entry["text"].get<std::string>())) ==
                       entry["text"].get<std::string>();
    CHECK(round_trips == (*reference)["cases"].size());

    // GPT-2's original files give the same ids.
    const auto from_files = infer::BpeTokenizer::from_vocab_merges((folder / "vocab.json").string(),
                                                                   (folder / "merges.txt").string());
    size_t same = 0;
    for (const auto& entry : (*reference)["cases"])
        same += from_files.encode(entry["text"].get<std::string>()) == entry["ids"].get<std::vector<int64_t>>();
    std::cout << "e2e: BpeTokenizer (vocab.json + merges.txt) gives the same ids on " << same << "/"
              << (*reference)["cases"].size() << " texts\n";
    CHECK(same == (*reference)["cases"].size());
    CHECK(from_files.eos_id() == tokenizer.eos_id());
}

TEST_CASE("UnigramTokenizer gives Hugging Face's ids and decodings on the corpus", "[generation_tokenizers]") {
    const auto reference = read_reference("t5-unigram-tokenizer");
    if (!reference) return;
    const auto tokenizer =
        infer::UnigramTokenizer::from_tokenizer_json((e2e::model_cache() / "t5-unigram-tokenizer").string());
    check_against_reference(tokenizer, *reference, "UnigramTokenizer");
}
