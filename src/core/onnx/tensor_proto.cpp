#include "core/onnx/tensor_proto.hpp"

#include <infer/error.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace infer::detail {

namespace {
template <class Field>
void copy_field(const Field& field, Tensor& out, const std::string& what) {
    using Element = typename Field::value_type;
    if (static_cast<int64_t>(field.size()) != out.numel())
        throw ModelError(what + ": holds " + std::to_string(field.size()) + " values for shape " +
                         out.shape().to_string());
    // Narrow each stored value into the tensor's element type.
    auto* dst = static_cast<unsigned char*>(out.raw_data());
    const size_t size = dtype_size(out.dtype());
    for (int i = 0; i < field.size(); ++i) {
        const Element v = field.Get(i);
        switch (out.dtype()) {
            case DType::f32: { float f = static_cast<float>(v); std::memcpy(dst + i * size, &f, size); break; }
            case DType::f64: { double d = static_cast<double>(v); std::memcpy(dst + i * size, &d, size); break; }
            case DType::i64: { int64_t x = static_cast<int64_t>(v); std::memcpy(dst + i * size, &x, size); break; }
            case DType::i32: { int32_t x = static_cast<int32_t>(v); std::memcpy(dst + i * size, &x, size); break; }
            case DType::f16:
            case DType::bf16: { uint16_t x = static_cast<uint16_t>(v); std::memcpy(dst + i * size, &x, size); break; }
            case DType::i8: { int8_t x = static_cast<int8_t>(v); std::memcpy(dst + i * size, &x, size); break; }
            case DType::i16: { int16_t x = static_cast<int16_t>(v); std::memcpy(dst + i * size, &x, size); break; }
            case DType::u16: { uint16_t x = static_cast<uint16_t>(v); std::memcpy(dst + i * size, &x, size); break; }
            case DType::u32: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(dst + i * size, &x, size); break; }
            case DType::u64: { uint64_t x = static_cast<uint64_t>(v); std::memcpy(dst + i * size, &x, size); break; }
            case DType::u8:
            case DType::boolean: { uint8_t x = static_cast<uint8_t>(v); std::memcpy(dst + i * size, &x, size); break; }
        }
    }
}

std::string read_external(const onnx::TensorProto& proto, const std::string& base_dir,
                          const std::string& what, size_t expected) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& entry : proto.external_data()) {
        if (entry.key() == "location") location = entry.value();
        else if (entry.key() == "offset") offset = std::stoll(entry.value());
        else if (entry.key() == "length") length = std::stoll(entry.value());
    }
    namespace fs = std::filesystem;
    if (location.empty()) throw ModelError(what + ": external data has no location");
    const fs::path relative(location);
    if (relative.is_absolute() || relative.lexically_normal().string().rfind("..", 0) == 0)
        throw ModelError(what + ": external data location '" + location +
                         "' leaves the model's folder");
    const fs::path file = fs::path(base_dir) / relative;
    std::ifstream in(file, std::ios::binary);
    if (!in) throw ModelError(what + ": cannot open external data file " + file.string());
    if (length < 0) length = static_cast<int64_t>(expected);
    if (offset < 0 || static_cast<size_t>(length) != expected)
        throw ModelError(what + ": external data length " + std::to_string(length) + " differs from the " +
                         std::to_string(expected) + " bytes its shape needs");
    std::error_code size_error;
    const auto file_size = fs::file_size(file, size_error);
    if (size_error || static_cast<uint64_t>(offset) + static_cast<uint64_t>(length) > file_size)
        throw ModelError(what + ": external data file " + file.string() + " ends before offset " +
                         std::to_string(offset + length));
    std::string bytes(static_cast<size_t>(length), '\0');
    in.seekg(offset);
    in.read(bytes.data(), length);
    if (in.gcount() != length)
        throw ModelError(what + ": external data file " + file.string() + " ends before offset " +
                         std::to_string(offset + length));
    return bytes;
}
}  // namespace

DType dtype_from_onnx_element(int element_type, const std::string& what) {
    switch (element_type) {
        case onnx::TensorProto_DataType_FLOAT: return DType::f32;
        case onnx::TensorProto_DataType_DOUBLE: return DType::f64;
        case onnx::TensorProto_DataType_FLOAT16: return DType::f16;
        case onnx::TensorProto_DataType_BFLOAT16: return DType::bf16;
        case onnx::TensorProto_DataType_INT8: return DType::i8;
        case onnx::TensorProto_DataType_UINT8: return DType::u8;
        case onnx::TensorProto_DataType_INT32: return DType::i32;
        case onnx::TensorProto_DataType_INT64: return DType::i64;
        case onnx::TensorProto_DataType_BOOL: return DType::boolean;
        case onnx::TensorProto_DataType_INT16: return DType::i16;
        case onnx::TensorProto_DataType_UINT16: return DType::u16;
        case onnx::TensorProto_DataType_UINT32: return DType::u32;
        case onnx::TensorProto_DataType_UINT64: return DType::u64;
        default: {
            const std::string name = onnx::TensorProto_DataType_IsValid(element_type)
                                         ? onnx::TensorProto_DataType_Name(element_type)
                                         : "#" + std::to_string(element_type);
            throw Unsupported(what + ": element type " + name + " is not supported");
        }
    }
}

Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir,
                         const std::string& what) {
    const DType dtype = dtype_from_onnx_element(proto.data_type(), what);
    std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
    for (int64_t d : dims)
        if (d < 0) throw ModelError(what + ": negative dimension " + std::to_string(d));
    Shape shape(dims);
    int64_t count = 1;
    for (int64_t d : dims) {
        if (d != 0 && count > (int64_t{1} << 40) / d)
            throw ModelError(what + ": shape " + shape.to_string() + " is implausibly large");
        count *= d;
    }
    const size_t bytes = static_cast<size_t>(count) * dtype_size(dtype);
    // Sizes are checked against the data present before anything is allocated, so a hostile
    // header cannot make us reserve memory its file does not back.
    const auto typed_count = [&]() -> int64_t {
        switch (dtype) {
            case DType::f32: return proto.float_data_size();
            case DType::f64: return proto.double_data_size();
            case DType::i64: return proto.int64_data_size();
            case DType::u32:
            case DType::u64: return proto.uint64_data_size();
            default: return proto.int32_data_size();
        }
    };
    const bool external = proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL;
    std::string external_bytes;
    if (external) {
        external_bytes = read_external(proto, base_dir, what, bytes);
    } else if (proto.has_raw_data()) {
        if (proto.raw_data().size() != bytes)
            throw ModelError(what + ": raw data has " + std::to_string(proto.raw_data().size()) +
                             " bytes; shape " + shape.to_string() + " of " +
                             std::string(dtype_name(dtype)) + " needs " + std::to_string(bytes));
    } else if (typed_count() != count) {
        throw ModelError(what + ": holds " + std::to_string(typed_count()) + " values for shape " +
                         shape.to_string());
    }
    Tensor out = Tensor::empty(dtype, shape);
    if (external) {
        std::memcpy(out.raw_data(), external_bytes.data(), bytes);
    } else if (proto.has_raw_data()) {
        std::memcpy(out.raw_data(), proto.raw_data().data(), bytes);
    } else if (dtype == DType::f32) {
        copy_field(proto.float_data(), out, what);
    } else if (dtype == DType::f64) {
        copy_field(proto.double_data(), out, what);
    } else if (dtype == DType::i64) {
        copy_field(proto.int64_data(), out, what);
    } else if (dtype == DType::u32 || dtype == DType::u64) {
        copy_field(proto.uint64_data(), out, what);
    } else {
        copy_field(proto.int32_data(), out, what);
    }
    return out;
}

onnx::TensorProto tensor_to_proto(const Tensor& tensor, const std::string& name) {
    onnx::TensorProto proto;
    proto.set_name(name);
    static const std::pair<DType, int> kTypes[] = {
        {DType::f32, onnx::TensorProto_DataType_FLOAT},   {DType::f64, onnx::TensorProto_DataType_DOUBLE},
        {DType::f16, onnx::TensorProto_DataType_FLOAT16}, {DType::bf16, onnx::TensorProto_DataType_BFLOAT16},
        {DType::i8, onnx::TensorProto_DataType_INT8},     {DType::u8, onnx::TensorProto_DataType_UINT8},
        {DType::i32, onnx::TensorProto_DataType_INT32},   {DType::i64, onnx::TensorProto_DataType_INT64},
        {DType::boolean, onnx::TensorProto_DataType_BOOL}, {DType::i16, onnx::TensorProto_DataType_INT16},
        {DType::u16, onnx::TensorProto_DataType_UINT16},  {DType::u32, onnx::TensorProto_DataType_UINT32},
        {DType::u64, onnx::TensorProto_DataType_UINT64}};
    for (const auto& [dtype, onnx_type] : kTypes)
        if (dtype == tensor.dtype()) proto.set_data_type(onnx_type);
    for (int64_t d : tensor.shape()) proto.add_dims(d);
    const Tensor host = tensor.to(Device::CPU).contiguous();
    proto.set_raw_data(host.raw_data(), host.nbytes());
    return proto;
}

}  // namespace infer::detail
