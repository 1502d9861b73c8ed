#pragma once
// sentence-transformers' modules after the encoder, read from the folder's modules.json: Pooling
// (1_Pooling/config.json: the mean of the token vectors over the attention mask, or the first
// token's) and Normalize (to unit length). They become graph ops, so the graph's
// "sentence_embedding" is what SentenceTransformer.encode() returns.
#include <infer/graph.hpp>

#include <filesystem>
#include <optional>

namespace infer::detail {

// The sentence embedding of `hidden` [batch, sequence, width], or nothing when the folder has
// no modules.json (a plain transformers checkpoint). Throws Unsupported for modules or pooling
// modes other than those above (Dense, max pooling, ...), ModelError for malformed files.
std::optional<Value> add_sentence_pooling(GraphBuilder& builder, const std::filesystem::path& folder, Value hidden,
                                          Value attention_mask);

}  // namespace infer::detail
