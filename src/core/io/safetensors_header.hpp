#pragma once
// The header of a .safetensors file, parsed and checked against the bytes that follow it.
//
// The format: 8 bytes, a little-endian u64 N; N bytes of JSON, an object mapping each tensor's
// name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative to the data section
// that starts at 8 + N), plus an optional "__metadata__" object of strings; then the data.
// The checks are those of the reference implementation (huggingface/safetensors): every tensor's
// byte length is its shape times its element size, and the tensors, sorted by offset, tile the
// data section exactly, with no gap, no overlap and nothing past its end. A file that passes may
// be read through pointers without further checks.
//
// Kept apart from the memory mapping and from Tensor so that the fuzz target can feed it
// arbitrary bytes on its own.
#include <infer/dtype.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace infer::detail {

struct SafetensorsEntry {
    std::string name;
    DType dtype = DType::f32;
    std::vector<int64_t> shape;
    size_t begin = 0;  // byte offsets within the data section
    size_t end = 0;
};

struct SafetensorsHeader {
    size_t data_offset = 0;               // where the data section starts in the file
    std::vector<SafetensorsEntry> entries;  // sorted by begin
    std::map<std::string, std::string> metadata;
};

// Parses the first `size` bytes of a file (all of it: the data section is checked against the
// file's length). `file` names it in messages. Throws ModelError for anything malformed and
// Unsupported for an element type infer has no DType for (F8, U16, ...), naming the tensor.
SafetensorsHeader parse_safetensors_header(const uint8_t* bytes, size_t size, const std::string& file);

}  // namespace infer::detail
