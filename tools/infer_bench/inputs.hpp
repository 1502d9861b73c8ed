#pragma once
// Inputs for benchmarking any model: dim 0 is the batch, other unknown dims the sequence length.
// Values are plausible for the input's role, so that attention masks mask nothing and ids index
// an embedding table: *mask* → ones, *token_type* / *type_ids* → zeros, other integers → ids in
// [1000, 2000) (below a smaller vocabulary: see TokenIds), floats → standard normal. The peers
// in bench/peers/ follow the same rules.
#include <infer/batch.hpp>
#include <infer/graph.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace infer::bench {

// The token ids drawn: [1000, 2000), or for a vocabulary of fewer than 2 000 ids the upper half
// of it (a tiny test model's 1 000 ids: [500, 1000)); a vocabulary of 0 is unknown.
struct TokenIds {
    int64_t low = 1000, high = 2000;  // [low, high)
    static TokenIds below(int64_t vocabulary);
};

// The vocabulary named by the config.json (vocab_size) of a Hugging Face folder, or of the folder
// holding a model file; 0 when there is none.
int64_t folder_vocabulary(const std::string& path);

// The concrete shape of every graph input at this batch and sequence length.
std::map<std::string, Shape> input_shapes(const Graph& graph, int64_t batch, int64_t sequence);

// Inputs of those shapes on the host; in page-locked memory (for `for_device`) when pinned.
Batch make_inputs(const Graph& graph, int64_t batch, int64_t sequence, bool pinned, const Device& for_device,
                  TokenIds ids = {});

}  // namespace infer::bench
