#pragma once
// ONNX TensorProto ↔ Tensor, including weights stored in external files beside the model.
#include <infer/tensor.hpp>

#include <onnx/onnx_pb.h>

#include <string>

namespace infer::detail {

// `base_dir` resolves external data locations; `what` names the tensor in error messages.
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir,
                         const std::string& what);
onnx::TensorProto tensor_to_proto(const Tensor& tensor, const std::string& name);
DType dtype_from_onnx_element(int element_type, const std::string& what);

}  // namespace infer::detail
