#pragma once
// A SentencePiece unigram model: pieces with log-probability scores; a word is split into the
// pieces whose scores sum highest (Viterbi over a byte trie of the pieces). A character no piece
// starts with becomes the unknown piece, scored 10 below the lowest piece, and a run of such
// characters one unknown piece. This is Hugging Face's Unigram::encode (its "optimized" path,
// the default), tie-breaking included: of equal scores, the path found first wins.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace infer::text {

class UnigramModel {
public:
    // pieces: (piece, score) in id order. unk_id: the unknown piece. fuse_unk: join runs of
    // unknown characters (Hugging Face's default). Throws ModelError naming `source` for an
    // unk_id outside the pieces.
    UnigramModel(const std::vector<std::pair<std::string, double>>& pieces, int64_t unk_id, bool fuse_unk,
                 const std::string& source);

    // Appends the ids of one pre-tokenized word (valid UTF-8).
    void append_word(std::string_view word, std::vector<int64_t>& out) const;

private:
    // The trie over the pieces' bytes: node 0 is the root; an edge is (node << 8 | byte) → node.
    std::unordered_map<uint64_t, uint32_t> edges_;
    std::vector<int64_t> node_piece_;  // by node: the piece ending there, or -1
    std::vector<double> scores_;       // by id
    int64_t unk_id_;
    bool fuse_unk_;
    double unk_score_;
};

}  // namespace infer::text
