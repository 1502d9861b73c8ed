#pragma once
// GPT-2's byte-level alphabet: every byte stands for a printable character, so that any text,
// bytes of any script and emoji included, becomes vocabulary symbols without an unknown token.
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace infer::text {

// The character that stands for each byte, as UTF-8.
const std::array<std::string, 256>& byte_level_chars();
// The byte a character of the alphabet stands for; nullopt for characters outside it.
std::optional<unsigned char> byte_level_byte(char32_t c);
// The bytes a token of byte-level characters stands for, as Hugging Face's ByteLevel decoder
// reads a token: a token with any character outside the alphabet (an added token such as
// "a b") stands for its own UTF-8 bytes. Throws InvalidArgument when token is not valid UTF-8.
std::string byte_level_bytes(std::string_view token);

}  // namespace infer::text
