// Tensors as files: ONNX TensorProto (.pb) and NumPy (.npy, format versions 1 to 3), and
// ONNX's SequenceProto and OptionalProto for sequences and optional values.
#include "core/onnx/tensor_proto.hpp"

#include <onnx/onnx-data.pb.h>

#include <infer/error.hpp>
#include <infer/tensor_io.hpp>

#include <cstring>
#include <fstream>
#include <sstream>

namespace infer {

namespace {
std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InvalidArgument("cannot open '" + path + "'");
    std::ostringstream content;
    content << in.rdbuf();
    return content.str();
}

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    if (!out || !out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())))
        throw InvalidArgument("cannot write '" + path + "'");
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

struct NpyType {
    DType dtype;
    const char* descr;
};
constexpr NpyType kNpyTypes[] = {{DType::f32, "<f4"}, {DType::f64, "<f8"}, {DType::f16, "<f2"},
                                 {DType::i8, "|i1"},  {DType::u8, "|u1"},  {DType::i32, "<i4"},
                                 {DType::i64, "<i8"}, {DType::boolean, "|b1"}, {DType::i16, "<i2"},
                                 {DType::u16, "<u2"}, {DType::u32, "<u4"},  {DType::u64, "<u8"}};

// The value of `key` in the header's Python dict literal, e.g. 'descr': '<f4'.
std::string header_value(const std::string& header, const std::string& key, const std::string& path) {
    const size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) throw ModelError(path + ": .npy header lacks '" + key + "'");
    size_t start = header.find(':', k) + 1;
    while (start < header.size() && header[start] == ' ') ++start;
    size_t end = start;
    if (header[start] == '(') end = header.find(')', start) + 1;
    else if (header[start] == '\'') end = header.find('\'', start + 1) + 1;
    else end = header.find_first_of(",}", start);
    if (end == std::string::npos || end <= start) throw ModelError(path + ": malformed .npy header");
    return header.substr(start, end - start);
}
}  // namespace

Tensor load_npy(const std::string& path) {
    const std::string bytes = read_file(path);
    if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
        throw ModelError(path + ": not a .npy file (bad magic)");
    const int major = static_cast<unsigned char>(bytes[6]);
    size_t header_len = 0, header_start = 0;
    if (major == 1) {
        header_len = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
        header_start = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) throw ModelError(path + ": truncated .npy header");
        for (int i = 0; i < 4; ++i) header_len |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
        header_start = 12;
    } else {
        throw ModelError(path + ": .npy format version " + std::to_string(major) + " is not supported");
    }
    if (header_start + header_len > bytes.size()) throw ModelError(path + ": truncated .npy header");
    const std::string header = bytes.substr(header_start, header_len);
    const std::string descr = header_value(header, "descr", path);
    if (header_value(header, "fortran_order", path) != "False")
        throw Unsupported(path + ": Fortran-ordered arrays are not supported");
    DType dtype = DType::f32;
    bool found = false;
    for (const auto& t : kNpyTypes)
        if (descr == "'" + std::string(t.descr) + "'") dtype = t.dtype, found = true;
    if (!found) throw Unsupported(path + ": .npy element type " + descr + " is not supported");
    std::vector<int64_t> dims;
    std::stringstream shape_text(header_value(header, "shape", path).substr(1));
    std::string item;
    while (std::getline(shape_text, item, ',')) {
        if (item.find_first_of("0123456789") == std::string::npos) continue;
        dims.push_back(std::stoll(item));
    }
    Tensor out = Tensor::empty(dtype, Shape(dims));
    const size_t data_start = header_start + header_len;
    if (bytes.size() - data_start != out.nbytes())
        throw ModelError(path + ": holds " + std::to_string(bytes.size() - data_start) +
                         " data bytes; shape " + out.shape().to_string() + " needs " +
                         std::to_string(out.nbytes()));
    std::memcpy(out.raw_data(), bytes.data() + data_start, out.nbytes());
    return out;
}

void save_npy(const Tensor& tensor, const std::string& path) {
    const char* descr = nullptr;
    for (const auto& t : kNpyTypes)
        if (t.dtype == tensor.dtype()) descr = t.descr;
    if (!descr) throw Unsupported("save_npy: dtype " + std::string(dtype_name(tensor.dtype())) +
                                  " has no .npy equivalent");
    std::string shape = "(";
    for (int64_t d : tensor.shape()) shape += std::to_string(d) + ",";
    if (tensor.rank() > 1) shape.pop_back();
    shape += ")";
    std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " +
                         shape + ", }";
    // Pad so the data starts on a 64-byte boundary, ending the header with a newline.
    const size_t total = 10 + header.size() + 1;
    header += std::string((64 - total % 64) % 64, ' ') + "\n";
    std::string bytes = "\x93NUMPY";
    bytes += '\x01';
    bytes += '\x00';
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header;
    const Tensor host = tensor.to(Device::CPU).contiguous();
    bytes.append(static_cast<const char*>(host.raw_data()), host.nbytes());
    write_file(path, bytes);
}

Tensor load_tensor_proto(const std::string& path) {
    onnx::TensorProto proto;
    const std::string bytes = read_file(path);
    if (!proto.ParseFromString(bytes)) throw ModelError(path + ": not a valid ONNX TensorProto");
    const std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
    return detail::tensor_from_proto(proto, dir, path);
}

void save_tensor_proto(const Tensor& tensor, const std::string& path, const std::string& name) {
    std::string bytes;
    detail::tensor_to_proto(tensor, name).SerializeToString(&bytes);
    write_file(path, bytes);
}

namespace {
std::string folder_of(const std::string& path) {
    return path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
}

std::vector<Tensor> sequence_from_proto(const onnx::SequenceProto& proto, const std::string& path) {
    if (proto.elem_type() != onnx::SequenceProto_DataType_TENSOR && proto.tensor_values_size() == 0 &&
        proto.elem_type() != onnx::SequenceProto_DataType_UNDEFINED)
        throw Unsupported(path + ": a sequence of other than tensors");
    std::vector<Tensor> elements;
    for (int i = 0; i < proto.tensor_values_size(); ++i)
        elements.push_back(detail::tensor_from_proto(proto.tensor_values(i), folder_of(path),
                                                     path + ": element " + std::to_string(i)));
    return elements;
}

void fill_sequence(onnx::SequenceProto& proto, const std::vector<Tensor>& elements, const std::string& name) {
    proto.set_name(name);
    proto.set_elem_type(onnx::SequenceProto_DataType_TENSOR);
    for (const Tensor& element : elements) *proto.add_tensor_values() = detail::tensor_to_proto(element, "");
}
}  // namespace

std::vector<Tensor> load_sequence_proto(const std::string& path) {
    onnx::SequenceProto proto;
    if (!proto.ParseFromString(read_file(path))) throw ModelError(path + ": not a valid ONNX SequenceProto");
    return sequence_from_proto(proto, path);
}

void save_sequence_proto(const std::vector<Tensor>& elements, const std::string& path, const std::string& name) {
    onnx::SequenceProto proto;
    fill_sequence(proto, elements, name);
    std::string bytes;
    proto.SerializeToString(&bytes);
    write_file(path, bytes);
}

OptionalContents load_optional_proto(const std::string& path) {
    onnx::OptionalProto proto;
    if (!proto.ParseFromString(read_file(path))) throw ModelError(path + ": not a valid ONNX OptionalProto");
    OptionalContents contents;
    if (proto.has_tensor_value()) {
        contents.present = true;
        contents.elements.push_back(detail::tensor_from_proto(proto.tensor_value(), folder_of(path), path));
    } else if (proto.has_sequence_value()) {
        contents.present = true;
        contents.sequence = true;
        contents.elements = sequence_from_proto(proto.sequence_value(), path);
    } else if (proto.elem_type() != onnx::OptionalProto_DataType_UNDEFINED &&
               proto.elem_type() != onnx::OptionalProto_DataType_TENSOR &&
               proto.elem_type() != onnx::OptionalProto_DataType_SEQUENCE) {
        throw Unsupported(path + ": an optional of other than a tensor or a sequence");
    }
    return contents;
}

void save_optional_proto(const OptionalContents& contents, const std::string& path, const std::string& name) {
    onnx::OptionalProto proto;
    proto.set_name(name);
    if (contents.sequence) {
        proto.set_elem_type(onnx::OptionalProto_DataType_SEQUENCE);
        if (contents.present) fill_sequence(*proto.mutable_sequence_value(), contents.elements, "");
    } else {
        proto.set_elem_type(onnx::OptionalProto_DataType_TENSOR);
        if (contents.present) {
            if (contents.elements.size() != 1)
                throw InvalidArgument("save_optional_proto: an optional tensor holds one tensor, not " +
                                      std::to_string(contents.elements.size()));
            *proto.mutable_tensor_value() = detail::tensor_to_proto(contents.elements[0], "");
        }
    }
    std::string bytes;
    proto.SerializeToString(&bytes);
    write_file(path, bytes);
}

Tensor load_tensor(const std::string& path) {
    return ends_with(path, ".npy") ? load_npy(path) : load_tensor_proto(path);
}

void save_tensor(const Tensor& tensor, const std::string& path) {
    if (ends_with(path, ".npy")) save_npy(tensor, path);
    else save_tensor_proto(tensor, path);
}

}  // namespace infer
