#pragma once
// Extended grapheme clusters (UAX #29), which SentencePiece's precompiled normalizer, as Hugging
// Face runs it, looks characters up by.
#include <cstddef>
#include <string_view>

namespace infer::text {

// The end of the grapheme cluster that starts at `start` (< text.size()). All rules but GB9c
// (Indic conjuncts), whose clusters are longer than anything the normalizer treats as a whole.
size_t grapheme_end(std::u32string_view text, size_t start);

}  // namespace infer::text
