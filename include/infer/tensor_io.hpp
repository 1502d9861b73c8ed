#pragma once
// Reading and writing tensors as files: ONNX TensorProto (".pb", as in the ONNX test data) and
// NumPy arrays (".npy"). Malformed files throw ModelError naming the file and the problem.
#include <infer/tensor.hpp>

#include <string>

namespace infer {

// Chooses the format by extension: ".npy" is NumPy, anything else an ONNX TensorProto.
Tensor load_tensor(const std::string& path);
void save_tensor(const Tensor& tensor, const std::string& path);

Tensor load_npy(const std::string& path);
void save_npy(const Tensor& tensor, const std::string& path);
Tensor load_tensor_proto(const std::string& path);
void save_tensor_proto(const Tensor& tensor, const std::string& path, const std::string& name = "");

}  // namespace infer
