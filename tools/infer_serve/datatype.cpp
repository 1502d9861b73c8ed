#include "datatype.hpp"

#include "request_error.hpp"

#include <array>
#include <utility>

namespace infer::serve {

namespace {

constexpr std::array<std::pair<DType, std::string_view>, 13> kNames{{
    {DType::boolean, "BOOL"},
    {DType::u8, "UINT8"},
    {DType::i8, "INT8"},
    {DType::u16, "UINT16"},
    {DType::i16, "INT16"},
    {DType::u32, "UINT32"},
    {DType::u64, "UINT64"},
    {DType::i32, "INT32"},
    {DType::i64, "INT64"},
    {DType::f16, "FP16"},
    {DType::bf16, "BF16"},  // Triton's extension of the protocol's list
    {DType::f32, "FP32"},
    {DType::f64, "FP64"},
}};

}  // namespace

std::string_view protocol_datatype(DType type) {
    for (const auto& [dtype, name] : kNames)
        if (dtype == type) return name;
    // Every DType is in the table; a new one must be added there.
    throw Unsupported("kserve: no protocol datatype for " + std::string(dtype_name(type)));
}

DType parse_protocol_datatype(std::string_view name) {
    for (const auto& [dtype, protocol_name] : kNames)
        if (protocol_name == name) return dtype;
    std::string supported;
    for (const auto& entry : kNames) supported += (supported.empty() ? "" : ", ") + std::string(entry.second);
    throw RequestError(400, "datatype '" + std::string(name) + "' is not supported (supported: " + supported + ")");
}

}  // namespace infer::serve
