#include "core/text/vocabulary.hpp"

#include <infer/error.hpp>

namespace infer::text {

namespace {

// Larger vocabularies are not real ones; the bound keeps a hostile id from allocating gigabytes.
constexpr int64_t kMaxVocabulary = 10'000'000;

}  // namespace

void Vocabulary::add(const std::string& token, int64_t id, const std::string& source) {
    if (id < 0 || id >= kMaxVocabulary)
        throw ModelError(source + ": token '" + token + "' has the id " + std::to_string(id) + ", outside 0.." +
                         std::to_string(kMaxVocabulary - 1));
    const auto index = static_cast<size_t>(id);
    if (index >= tokens_.size()) {
        tokens_.resize(index + 1);
        special_.resize(index + 1, false);
        present_.resize(index + 1, false);
    }
    if (present_[index] && tokens_[index] != token)
        throw ModelError(source + ": id " + std::to_string(id) + " is both '" + tokens_[index] + "' and '" + token + "'");
    tokens_[index] = token;
    present_[index] = true;
    ids_[token] = id;
}

void Vocabulary::check_dense(const std::string& source) const {
    if (tokens_.empty()) throw ModelError(source + ": the vocabulary is empty");
    for (size_t id = 0; id < present_.size(); ++id)
        if (!present_[id])
            throw ModelError(source + ": no token has the id " + std::to_string(id) + " (the ids must be 0.." +
                             std::to_string(tokens_.size() - 1) + ")");
}

std::optional<int64_t> Vocabulary::find(std::string_view token) const {
    const auto it = ids_.find(token);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
}

int64_t Vocabulary::id_of(std::string_view token) const {
    if (const auto id = find(token)) return *id;
    throw InvalidArgument(owner_ + ": '" + std::string(token) + "' is not in the vocabulary");
}

const std::string& Vocabulary::token(int64_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= tokens_.size())
        throw InvalidArgument(owner_ + ": token id " + std::to_string(id) + " is outside the vocabulary of " +
                              std::to_string(tokens_.size()) + " tokens");
    return tokens_[static_cast<size_t>(id)];
}

bool Vocabulary::is_special(int64_t id) const {
    return id >= 0 && static_cast<size_t>(id) < special_.size() && special_[static_cast<size_t>(id)];
}

}  // namespace infer::text
