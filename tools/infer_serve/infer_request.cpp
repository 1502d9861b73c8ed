#include "infer_request.hpp"

#include "datatype.hpp"
#include "request_error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>

namespace infer::serve {

namespace {

using json = nlohmann::json;

[[noreturn]] void bad_request(const std::string& message) { throw RequestError(400, message); }

// The elements of "data" in row-major order, whether the client sent them flat or nested.
void flatten(const json& value, std::vector<const json*>& out) {
    if (value.is_array())
        for (const json& element : value) flatten(element, out);
    else
        out.push_back(&value);
}

// One JSON element as T, refusing what would change its value silently (a fraction or an
// out-of-range number for an integer type, a string anywhere).
template <class T>
T element_as(const json& value, const std::string& input, size_t index) {
    const auto where = [&] { return "input '" + input + "': element " + std::to_string(index) + " (" + value.dump() + ")"; };
    if constexpr (std::is_same_v<T, bool>) {
        if (!value.is_boolean()) bad_request(where() + " is not true or false");
        return value.get<bool>();
    } else if constexpr (std::is_integral_v<T>) {
        if (value.is_number_unsigned()) {
            const uint64_t v = value.get<uint64_t>();
            if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) bad_request(where() + " is out of range");
            return static_cast<T>(v);
        }
        if (!value.is_number_integer()) bad_request(where() + " is not an integer");
        const int64_t v = value.get<int64_t>();
        if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
            (v > 0 && static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
            bad_request(where() + " is out of range");
        return static_cast<T>(v);
    } else {
        if (!value.is_number()) bad_request(where() + " is not a number");
        if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
            return T(value.get<float>());
        else
            return value.get<T>();
    }
}

template <class T>
void fill(Tensor& tensor, const std::vector<const json*>& elements, const std::string& input) {
    T* out = static_cast<T*>(tensor.raw_data());
    for (size_t i = 0; i < elements.size(); ++i) out[i] = element_as<T>(*elements[i], input, i);
}

Tensor tensor_from_json(const json& data, DType dtype, const Shape& shape, const std::string& input) {
    std::vector<const json*> elements;
    flatten(data, elements);
    if (elements.size() != static_cast<size_t>(shape.numel()))
        bad_request("input '" + input + "': " + std::to_string(elements.size()) + " data elements for shape " +
                    shape.to_string() + " (" + std::to_string(shape.numel()) + " elements)");
    Tensor tensor = Tensor::empty(dtype, shape);
    switch (dtype) {
        case DType::f32: fill<float>(tensor, elements, input); break;
        case DType::f16: fill<half>(tensor, elements, input); break;
        case DType::bf16: fill<bfloat16>(tensor, elements, input); break;
        case DType::f64: fill<double>(tensor, elements, input); break;
        case DType::i8: fill<int8_t>(tensor, elements, input); break;
        case DType::u8: fill<uint8_t>(tensor, elements, input); break;
        case DType::i32: fill<int32_t>(tensor, elements, input); break;
        case DType::i64: fill<int64_t>(tensor, elements, input); break;
        case DType::boolean: fill<bool>(tensor, elements, input); break;
        case DType::i16: fill<int16_t>(tensor, elements, input); break;
        case DType::u16: fill<uint16_t>(tensor, elements, input); break;
        case DType::u32: fill<uint32_t>(tensor, elements, input); break;
        case DType::u64: fill<uint64_t>(tensor, elements, input); break;
    }
    return tensor;
}

// "shape" as a Shape, checked against the model's declared one (rank, fixed dimensions).
Shape request_shape(const json& value, const TensorInfo& declared) {
    if (!value.is_array()) bad_request("input '" + declared.name + "': \"shape\" must be an array of sizes");
    std::vector<int64_t> dims;
    int64_t elements = 1;
    for (const json& d : value) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0)
            bad_request("input '" + declared.name + "': shape " + value.dump() + " holds " + d.dump() +
                        ", not a size");
        dims.push_back(d.get<int64_t>());
        // Refused before anything is allocated: a shape that claims more elements than any
        // body this server accepts could hold.
        if (__builtin_mul_overflow(elements, dims.back(), &elements) || elements > (int64_t{1} << 40))
            bad_request("input '" + declared.name + "': shape " + value.dump() + " is too large");
    }
    Shape shape(dims);
    if (!shape.matches(declared.shape))
        bad_request("input '" + declared.name + "': shape " + shape.to_string() + " does not match the model's " +
                    declared.shape.to_string() + " (-1 or ? is any size)");
    if (shape.rank() == 0 || shape[0] == 0)
        bad_request("input '" + declared.name + "': shape " + shape.to_string() + " has no rows (axis 0 is the batch)");
    return shape;
}

const json* parameter(const json& object, const char* name) {
    const auto parameters = object.find("parameters");
    if (parameters == object.end()) return nullptr;
    if (!parameters->is_object()) bad_request("\"parameters\" must be an object");
    const auto value = parameters->find(name);
    return value == parameters->end() ? nullptr : &*value;
}

bool bool_parameter(const json& object, const char* name, const std::string& where) {
    const json* value = parameter(object, name);
    if (!value) return false;
    if (!value->is_boolean()) bad_request(where + "parameters." + name + " must be true or false");
    return value->get<bool>();
}

std::string names_of(const std::vector<TensorInfo>& infos) {
    std::string names;
    for (const TensorInfo& info : infos) names += (names.empty() ? "" : ", ") + info.name;
    return names;
}

}  // namespace

size_t parse_json_length(std::string_view header_value) {
    size_t value = 0;
    const auto [end, error] = std::from_chars(header_value.data(), header_value.data() + header_value.size(), value);
    if (error != std::errc() || end != header_value.data() + header_value.size())
        bad_request("Inference-Header-Content-Length '" + std::string(header_value) + "' is not a byte count");
    return value;
}

InferRequest parse_infer_request(std::string_view body, std::optional<size_t> json_length,
                                 const std::vector<TensorInfo>& model_inputs,
                                 const std::vector<TensorInfo>& model_outputs) {
    if (json_length && *json_length > body.size())
        bad_request("Inference-Header-Content-Length " + std::to_string(*json_length) + " is beyond the body's " +
                    std::to_string(body.size()) + " bytes");
    const std::string_view header = json_length ? body.substr(0, *json_length) : body;
    const std::string_view binary = json_length ? body.substr(*json_length) : std::string_view{};

    json document;
    try {
        document = json::parse(header);
    } catch (const json::parse_error& e) {
        bad_request(std::string("malformed JSON: ") + e.what());
    }
    if (!document.is_object()) bad_request("the request must be a JSON object");

    InferRequest request;
    if (const auto id = document.find("id"); id != document.end()) {
        if (!id->is_string()) bad_request("\"id\" must be a string");
        request.id = id->get<std::string>();
    }
    request.binary_data_output = bool_parameter(document, "binary_data_output", "");
    if (const json* timeout = parameter(document, "timeout")) {
        if (!timeout->is_number_integer() || timeout->get<int64_t>() < 0)
            bad_request("parameters.timeout must be a non-negative number of microseconds");
        request.timeout = std::chrono::microseconds(timeout->get<int64_t>());
    }
    if (const json* priority = parameter(document, "priority")) {
        if (!priority->is_number_integer()) bad_request("parameters.priority must be an integer");
        request.priority = static_cast<int>(std::clamp<int64_t>(priority->get<int64_t>(), -1000000, 1000000));
    }

    const auto inputs = document.find("inputs");
    if (inputs == document.end() || !inputs->is_array() || inputs->empty())
        bad_request("\"inputs\" must be a non-empty array of tensors");
    std::map<std::string, Tensor> given;
    size_t binary_offset = 0;
    for (const json& input : *inputs) {
        if (!input.is_object()) bad_request("every element of \"inputs\" must be an object");
        const auto name = input.find("name");
        if (name == input.end() || !name->is_string()) bad_request("an input has no \"name\" string");
        const std::string input_name = name->get<std::string>();
        const auto declared = std::find_if(model_inputs.begin(), model_inputs.end(),
                                           [&](const TensorInfo& info) { return info.name == input_name; });
        if (declared == model_inputs.end())
            bad_request("unknown input '" + input_name + "' (the model takes " + names_of(model_inputs) + ")");
        if (given.count(input_name)) bad_request("input '" + input_name + "' is given twice");
        const auto datatype = input.find("datatype");
        if (datatype == input.end() || !datatype->is_string())
            bad_request("input '" + input_name + "' has no \"datatype\" string");
        const DType dtype = parse_protocol_datatype(datatype->get<std::string>());
        if (dtype != declared->dtype)
            bad_request("input '" + input_name + "': datatype " + datatype->get<std::string>() + ", the model takes " +
                        std::string(protocol_datatype(declared->dtype)));
        const auto shape_value = input.find("shape");
        if (shape_value == input.end()) bad_request("input '" + input_name + "' has no \"shape\"");
        const Shape shape = request_shape(*shape_value, *declared);

        const json* binary_size = parameter(input, "binary_data_size");
        const auto data = input.find("data");
        if (binary_size && data != input.end())
            bad_request("input '" + input_name + "' has both \"data\" and parameters.binary_data_size");
        if (binary_size) {
            if (!json_length)
                bad_request("input '" + input_name +
                            "' has parameters.binary_data_size but the request has no Inference-Header-Content-Length");
            if (!binary_size->is_number_unsigned())
                bad_request("input '" + input_name + "': parameters.binary_data_size must be a byte count");
            const size_t size = binary_size->get<size_t>();
            const size_t expected = static_cast<size_t>(shape.numel()) * dtype_size(dtype);
            if (size != expected)
                bad_request("input '" + input_name + "': binary_data_size " + std::to_string(size) + " for " +
                            std::string(protocol_datatype(dtype)) + shape.to_string() + " (" +
                            std::to_string(expected) + " bytes)");
            if (size > binary.size() - binary_offset)
                bad_request("input '" + input_name + "': binary data at bytes " + std::to_string(binary_offset) + "+" +
                            std::to_string(size) + " runs past the " + std::to_string(binary.size()) +
                            " bytes after the JSON header");
            const std::string_view bytes = binary.substr(binary_offset, size);
            // A bool is one byte, 0 or 1; other values would be neither true nor false to a kernel.
            if (dtype == DType::boolean && bytes.find_first_not_of(std::string_view("\0\1", 2)) != std::string_view::npos)
                bad_request("input '" + input_name + "': BOOL binary data holds a byte other than 0 or 1");
            given[input_name] = Tensor::from_host(bytes.data(), dtype, shape);
            binary_offset += size;
        } else {
            if (data == input.end())
                bad_request("input '" + input_name + "' has neither \"data\" nor parameters.binary_data_size");
            given[input_name] = tensor_from_json(*data, dtype, shape, input_name);
        }
    }
    if (binary_offset != binary.size())
        bad_request(std::to_string(binary.size() - binary_offset) +
                    " bytes after the JSON header belong to no input (binary_data_size adds up to " +
                    std::to_string(binary_offset) + ")");

    for (const TensorInfo& declared : model_inputs) {
        const auto it = given.find(declared.name);
        if (it == given.end()) bad_request("missing input '" + declared.name + "' (the model takes " + names_of(model_inputs) + ")");
        const int64_t rows = it->second.shape()[0];
        if (request.rows == 0) request.rows = rows;
        if (rows != request.rows)
            bad_request("input '" + declared.name + "' has " + std::to_string(rows) + " rows and '" +
                        model_inputs.front().name + "' " + std::to_string(request.rows) +
                        " (axis 0, the batch, must agree)");
        request.inputs.set(declared.name, it->second);
    }

    if (const auto outputs = document.find("outputs"); outputs != document.end()) {
        if (!outputs->is_array()) bad_request("\"outputs\" must be an array");
        for (const json& output : *outputs) {
            if (!output.is_object() || !output.contains("name") || !output["name"].is_string())
                bad_request("every element of \"outputs\" must be an object with a \"name\"");
            RequestedOutput requested{output["name"].get<std::string>()};
            if (std::none_of(model_outputs.begin(), model_outputs.end(),
                             [&](const TensorInfo& info) { return info.name == requested.name; }))
                bad_request("unknown output '" + requested.name + "' (the model gives " + names_of(model_outputs) + ")");
            requested.binary = bool_parameter(output, "binary_data", "output '" + requested.name + "': ");
            request.outputs.push_back(std::move(requested));
        }
    }
    return request;
}

}  // namespace infer::serve
