#pragma once
// The token table of a generation tokenizer: tokens by id (the model's vocabulary and the added
// tokens in one id space), which of them are special, and the roles some of them play.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace infer::text {

struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

// Token → id, looked up by string_view without a copy.
using TokenIds = std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>>;

class Vocabulary {
public:
    // `owner` starts the messages of lookup errors ("BpeTokenizer").
    explicit Vocabulary(std::string owner) : owner_(std::move(owner)) {}

    // Gives token the id. A token given twice keeps its later id for lookups, as Hugging Face's
    // maps do; an id given two different tokens is a ModelError naming `source`.
    void add(const std::string& token, int64_t id, const std::string& source);
    // Checks that every id from 0 to the largest has a token (ModelError naming `source`).
    void check_dense(const std::string& source) const;
    void mark_special(int64_t id) { special_.at(static_cast<size_t>(id)) = true; }

    std::optional<int64_t> find(std::string_view token) const;
    // The same, throwing InvalidArgument when the token is not there.
    int64_t id_of(std::string_view token) const;
    // Throws InvalidArgument for an id outside the vocabulary.
    const std::string& token(int64_t id) const;
    bool is_special(int64_t id) const;
    size_t size() const { return tokens_.size(); }
    const std::string& owner() const { return owner_; }

    std::optional<int64_t> eos, bos, pad, unk;

private:
    std::string owner_;
    std::vector<std::string> tokens_;
    std::vector<bool> special_;
    std::vector<bool> present_;
    TokenIds ids_;
};

}  // namespace infer::text
