#pragma once
// Reading Hugging Face checkpoints in the safetensors format: tensors by name, each with its
// dtype and shape, the file memory-mapped rather than read.
//
//   infer::Safetensors weights = infer::Safetensors::open("all-MiniLM-L6-v2/");
//   for (const std::string& name : weights.names()) ...
//   infer::Tensor embeddings = weights.tensor("embeddings.word_embeddings.weight");
//
// open() takes a .safetensors file, a sharded checkpoint's index (model.safetensors.index.json,
// whose "weight_map" names the shard of every tensor), or a folder holding either. Tensors are
// host tensors that point into the mapping (no copy), which they keep alive: they stay valid
// after the Safetensors object is gone. The mapping is private copy-on-write, so writing to such
// a tensor changes neither the file nor other tensors read from it. A tensor whose bytes are not
// aligned to its element size is copied instead (the format does not promise alignment).
//
// Element types: F32, F16, BF16, F64, I64, I32, I8, U8, BOOL. Every file's header is checked when
// it is opened: a malformed or truncated file, offsets outside the file, overlapping or
// non-contiguous tensors, an unknown element type, or a shape whose size disagrees with its byte
// length is a ModelError naming the file and the tensor; an element type of the format that
// infer lacks (F8_E4M3, U16, ...) is Unsupported.
#include <infer/dtype.hpp>
#include <infer/shape.hpp>
#include <infer/tensor.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace infer {

class Safetensors {
public:
    struct Info {
        DType dtype;
        Shape shape;
        std::string file;  // the file that holds it (one of the shards, for sharded checkpoints)
    };

    // Opens and checks every file of the checkpoint. Throws ModelError when the path holds no
    // checkpoint, a file cannot be read, a header is malformed, or a shard lacks a tensor the
    // index gives it (or two shards hold the same name).
    static Safetensors open(const std::string& path);

    std::vector<std::string> names() const;  // sorted
    bool contains(const std::string& name) const;
    // Throws InvalidArgument naming the checkpoint when there is no such tensor.
    const Info& info(const std::string& name) const;
    // The tensor, on the CPU, sharing the file's mapping (see above).
    Tensor tensor(const std::string& name) const;
    // The "__metadata__" strings of the file (of the first shard, with the index's "metadata"
    // entries that are strings added, for sharded checkpoints).
    const std::map<std::string, std::string>& metadata() const;
    const std::string& path() const;

private:
    struct Impl;
    explicit Safetensors(std::shared_ptr<const Impl> impl);
    std::shared_ptr<const Impl> impl_;
};

}  // namespace infer
