#include "core/text/byte_level.hpp"

#include "core/text/unicode.hpp"

namespace infer::text {

namespace {

// Printable Latin-1 bytes stand for themselves; the other 68 (controls, space, DEL, NBSP, the
// soft hyphen) take the code points from U+0100 on, in byte order.
bool stands_for_itself(unsigned byte) {
    return (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
}

struct Alphabet {
    std::array<char32_t, 256> char_of{};
    std::array<std::string, 256> utf8_of;

    Alphabet() {
        char32_t next_substitute = 0x100;
        for (unsigned byte = 0; byte < 256; ++byte) {
            char_of[byte] = stands_for_itself(byte) ? char32_t(byte) : next_substitute++;
            append_utf8(utf8_of[byte], char_of[byte]);
        }
    }
};

const Alphabet& alphabet() {
    static const Alphabet instance;
    return instance;
}

}  // namespace

const std::array<std::string, 256>& byte_level_chars() { return alphabet().utf8_of; }

std::optional<unsigned char> byte_level_byte(char32_t c) {
    if (c < 0x100) {
        if (stands_for_itself(c)) return static_cast<unsigned char>(c);
        return std::nullopt;
    }
    const auto& chars = alphabet().char_of;
    for (unsigned byte = 0; byte < 256; ++byte)
        if (chars[byte] == c) return static_cast<unsigned char>(byte);
    return std::nullopt;
}

std::string byte_level_bytes(std::string_view token) {
    std::string bytes;
    for (char32_t c : decode_utf8(token)) {
        const auto byte = byte_level_byte(c);
        if (!byte) return std::string(token);
        bytes.push_back(static_cast<char>(*byte));
    }
    return bytes;
}

}  // namespace infer::text
