#pragma once
// Reading and writing tensors as files: ONNX TensorProto (".pb", as in the ONNX test data) and
// NumPy arrays (".npy"). Malformed files throw ModelError naming the file and the problem.
#include <infer/tensor.hpp>

#include <string>
#include <vector>

namespace infer {

// Chooses the format by extension: ".npy" is NumPy, anything else an ONNX TensorProto.
Tensor load_tensor(const std::string& path);
void save_tensor(const Tensor& tensor, const std::string& path);

Tensor load_npy(const std::string& path);
void save_npy(const Tensor& tensor, const std::string& path);
Tensor load_tensor_proto(const std::string& path);
void save_tensor_proto(const Tensor& tensor, const std::string& path, const std::string& name = "");

// Sequences and optional values as the ONNX test data stores them: SequenceProto (a list of
// tensors) and OptionalProto (nothing, a tensor, or a sequence).
std::vector<Tensor> load_sequence_proto(const std::string& path);
void save_sequence_proto(const std::vector<Tensor>& elements, const std::string& path, const std::string& name = "");
struct OptionalContents {
    bool present = false;
    bool sequence = false;        // what it holds: a sequence, else one tensor
    std::vector<Tensor> elements;  // the tensor, or the sequence's elements
};
OptionalContents load_optional_proto(const std::string& path);
void save_optional_proto(const OptionalContents& contents, const std::string& path, const std::string& name = "");

}  // namespace infer
