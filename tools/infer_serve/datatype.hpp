#pragma once
// The tensor datatype names of the KServe v2 / Open Inference Protocol ("FP32", "INT64", ...)
// and infer's DTypes. The protocol has more types than infer (BYTES, INT16, UINT16/32/64);
// those are refused with a message rather than converted, since a model never takes them.
#include <infer/dtype.hpp>

#include <string>
#include <string_view>

namespace infer::serve {

std::string_view protocol_datatype(DType type);  // f32 → "FP32"
// "FP32" → f32; throws RequestError (400) naming the datatype and the supported ones.
DType parse_protocol_datatype(std::string_view name);

}  // namespace infer::serve
