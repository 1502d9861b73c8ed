#pragma once
// Hugging Face's added tokens: strings ("<|endoftext|>", "</s>", "<extra_id_0>") found in the text
// before the model sees it and encoded as their own ids. Those marked `normalized` are looked for
// in the normalized text, the others in the text as given.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace infer::text {

struct AddedToken {
    std::string content;
    int64_t id = 0;
    bool special = false;     // skipped by decode(skip_special_tokens)
    bool normalized = false;  // matched after normalization (content normalized too)
    bool lstrip = false;      // the match swallows the whitespace on its left
    bool rstrip = false;      // ... and on its right
};

// A stretch of text: either an added token (id) or plain text for the model.
struct TextPiece {
    std::string_view text;
    std::optional<int64_t> id;
};

// Finds added tokens in text, leftmost first and, of those starting at one place, the longest,
// as Hugging Face's matcher does.
class AddedTokenMatcher {
public:
    AddedTokenMatcher() = default;
    explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

    // text cut into plain pieces and tokens, in order; no empty plain piece. The pieces view text.
    std::vector<TextPiece> split(std::string_view text) const;
    bool empty() const { return tokens_.empty(); }

private:
    std::vector<AddedToken> tokens_;  // longest first, so the first that matches is the longest
    bool starts_[256] = {};           // first bytes of the tokens, to skip most positions at once
};

}  // namespace infer::text
