#pragma once
// Inputs for benchmarking any model: dim 0 is the batch, other unknown dims the sequence length.
// Values are plausible for the input's role, so that attention masks mask nothing and ids index
// an embedding table: *mask* → ones, *token_type* / *type_ids* → zeros, other integers → ids in
// [1000, 2000), floats → standard normal. The peers in bench/peers/ follow the same rules.
#include <infer/batch.hpp>
#include <infer/graph.hpp>

#include <cstdint>
#include <map>
#include <string>

namespace infer::bench {

// The concrete shape of every graph input at this batch and sequence length.
std::map<std::string, Shape> input_shapes(const Graph& graph, int64_t batch, int64_t sequence);

// Inputs of those shapes on the host; in page-locked memory (for `for_device`) when pinned.
Batch make_inputs(const Graph& graph, int64_t batch, int64_t sequence, bool pinned, const Device& for_device);

}  // namespace infer::bench
