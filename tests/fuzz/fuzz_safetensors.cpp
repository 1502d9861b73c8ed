// libFuzzer target: arbitrary bytes as a .safetensors file. The header parser must end in a
// checked header or an infer::Error, never a crash, hang or sanitizer report; and a header it
// accepts must keep every tensor inside the bytes, which reading each tensor's bytes checks
// (under ASan, a read past the buffer is a report).
#include "core/io/safetensors_header.hpp"

#include <infer/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // A copy of exactly `size` bytes, so that ASan sees the end of the "file".
    std::vector<uint8_t> file(data, data + size);
    try {
        const auto header = infer::detail::parse_safetensors_header(file.data(), file.size(), "fuzz.safetensors");
        volatile uint8_t sum = 0;
        for (const auto& entry : header.entries)
            for (size_t i = entry.begin; i < entry.end; ++i) sum = sum + file[header.data_offset + i];
    } catch (const infer::Error&) {
    }
    return 0;
}
