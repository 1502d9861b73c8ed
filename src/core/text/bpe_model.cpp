#include "core/text/bpe_model.hpp"

#include "core/text/byte_level.hpp"

#include <infer/error.hpp>

#include <queue>

namespace infer::text {

BpeModel::BpeModel(const Vocabulary& vocabulary, const std::vector<std::pair<std::string, std::string>>& merges,
                   Options options, const std::string& source)
    : options_(options) {
    const auto& chars = byte_level_chars();
    for (size_t byte = 0; byte < 256; ++byte) byte_ids_[byte] = vocabulary.find(chars[byte]);
    merges_.reserve(merges.size());
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const auto& [left, right] = merges[rank];
        const auto left_id = vocabulary.find(left), right_id = vocabulary.find(right),
                   merged_id = vocabulary.find(left + right);
        if (!left_id || !right_id || !merged_id)
            throw ModelError(source + ": merge " + std::to_string(rank) + " ('" + left + "' '" + right + "') has '" +
                             (!left_id ? left : !right_id ? right : left + right) + "', which is not in the vocabulary");
        // A pair listed twice keeps its later rank, as in Hugging Face's map.
        merges_.insert_or_assign(pair_key(*left_id, *right_id), Merge{static_cast<uint32_t>(rank), *merged_id});
    }
}

const BpeModel::Merge* BpeModel::find_merge(int64_t left, int64_t right) const {
    const auto it = merges_.find(pair_key(left, right));
    return it == merges_.end() ? nullptr : &it->second;
}

void BpeModel::append_word(std::string_view bytes, const Vocabulary& vocabulary, std::vector<int64_t>& out) const {
    if (options_.ignore_merges) {
        std::string symbols;
        for (char byte : bytes) symbols += byte_level_chars()[static_cast<unsigned char>(byte)];
        if (const auto id = vocabulary.find(symbols)) {
            out.push_back(*id);
            return;
        }
    }
    // The symbols as a doubly linked list over an array, so that merging is O(1) and positions
    // stay stable for the queue.
    struct Symbol {
        int64_t id;
        int prev, next;  // -1 at the ends
        bool alive;
    };
    std::vector<Symbol> symbols;
    symbols.reserve(bytes.size());
    for (char byte : bytes) {
        std::optional<int64_t> id = byte_ids_[static_cast<unsigned char>(byte)];
        if (!id) {
            if (!options_.unk_id) continue;
            if (options_.fuse_unk && !symbols.empty() && symbols.back().id == *options_.unk_id) continue;
            id = options_.unk_id;
        }
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({*id, index - 1, index + 1, true});
    }
    if (symbols.empty()) return;
    symbols.back().next = -1;

    // Candidate merges, best rank first and then leftmost. An entry goes stale when either of
    // its symbols changes; it is recognised by its pair no longer giving the same token.
    struct Candidate {
        uint32_t rank;
        int position;
        int64_t merged_id;
        bool operator>(const Candidate& other) const {
            return rank != other.rank ? rank > other.rank : position > other.position;
        }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
    const auto consider = [&](int left) {
        const int right = symbols[left].next;
        if (right < 0) return;
        if (const Merge* merge = find_merge(symbols[left].id, symbols[right].id))
            queue.push({merge->rank, left, merge->merged_id});
    };
    for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);
    while (!queue.empty()) {
        const Candidate top = queue.top();
        queue.pop();
        Symbol& left = symbols[top.position];
        if (!left.alive || left.next < 0) continue;
        Symbol& right = symbols[left.next];
        const Merge* merge = find_merge(left.id, right.id);
        if (!merge || merge->merged_id != top.merged_id) continue;
        left.id = top.merged_id;
        right.alive = false;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = top.position;
        if (left.prev >= 0) consider(left.prev);
        consider(top.position);
    }
    for (const Symbol& symbol : symbols)
        if (symbol.alive) out.push_back(symbol.id);
}

}  // namespace infer::text
