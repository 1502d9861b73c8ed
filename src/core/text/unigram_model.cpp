#include "core/text/unigram_model.hpp"

#include <infer/error.hpp>

#include <algorithm>
#include <limits>
#include <optional>

namespace infer::text {

namespace {

// How far below the lowest piece an unknown character scores (SentencePiece's kUnkPenalty).
constexpr double kUnkPenalty = 10.0;

size_t char_length(unsigned char lead) { return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4; }

}  // namespace

UnigramModel::UnigramModel(const std::vector<std::pair<std::string, double>>& pieces, int64_t unk_id, bool fuse_unk,
                           const std::string& source)
    : unk_id_(unk_id), fuse_unk_(fuse_unk) {
    if (unk_id < 0 || static_cast<size_t>(unk_id) >= pieces.size())
        throw ModelError(source + ": the Unigram unk_id " + std::to_string(unk_id) + " is outside its " +
                         std::to_string(pieces.size()) + " pieces");
    node_piece_.push_back(-1);
    double lowest = std::numeric_limits<double>::infinity();
    scores_.reserve(pieces.size());
    for (size_t id = 0; id < pieces.size(); ++id) {
        const auto& [piece, score] = pieces[id];
        scores_.push_back(score);
        lowest = std::min(lowest, score);
        uint32_t node = 0;
        for (char byte : piece) {
            const uint64_t key = (uint64_t{node} << 8) | static_cast<unsigned char>(byte);
            const auto [it, added] = edges_.try_emplace(key, static_cast<uint32_t>(node_piece_.size()));
            if (added) node_piece_.push_back(-1);
            node = it->second;
        }
        // A piece listed twice is found as its later id, as in Hugging Face's token map.
        if (node != 0) node_piece_[node] = static_cast<int64_t>(id);
    }
    unk_score_ = lowest - kUnkPenalty;
}

void UnigramModel::append_word(std::string_view word, std::vector<int64_t>& out) const {
    if (word.empty()) return;
    // best[end]: the best split of word[0, end): its score, where its last piece starts, which piece.
    struct Best {
        double score = 0;
        std::optional<size_t> start;
        int64_t id = -1;
    };
    std::vector<Best> best(word.size() + 1);
    const auto offer = [&](size_t start, size_t end, int64_t id, double score) {
        Best& target = best[end];
        const double total = best[start].score + score;
        if (!target.start || total > target.score) target = {total, start, id};
    };
    for (size_t start = 0; start < word.size();) {
        const size_t length = char_length(static_cast<unsigned char>(word[start]));
        bool single_character_piece = false;
        uint32_t node = 0;
        for (size_t end = start; end < word.size(); ++end) {
            const auto it = edges_.find((uint64_t{node} << 8) | static_cast<unsigned char>(word[end]));
            if (it == edges_.end()) break;
            node = it->second;
            if (const int64_t id = node_piece_[node]; id >= 0) {
                offer(start, end + 1, id, scores_[static_cast<size_t>(id)]);
                if (end + 1 - start == length) single_character_piece = true;
            }
        }
        if (!single_character_piece) offer(start, start + length, unk_id_, unk_score_);
        start += length;
    }
    // Walk back from the end; a run of unknown characters is one unknown piece when fusing.
    std::vector<int64_t> ids;
    for (size_t end = word.size(); end > 0; end = *best[end].start) {
        const int64_t id = best[end].id;
        if (fuse_unk_ && id == unk_id_ && !ids.empty() && ids.back() == unk_id_) continue;
        ids.push_back(id);
    }
    out.insert(out.end(), ids.rbegin(), ids.rend());
}

}  // namespace infer::text
