#include "infer_response.hpp"

#include "datatype.hpp"

#include <nlohmann/json.hpp>

namespace infer::serve {

namespace {

using json = nlohmann::json;

template <class T>
json elements_as_json(const Tensor& tensor) {
    json data = json::array();
    const T* values = static_cast<const T*>(tensor.raw_data());
    const int64_t count = tensor.numel();
    data.get_ref<json::array_t&>().reserve(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
        // half and bfloat16 have no JSON form of their own: their float value is exact.
        if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
            data.push_back(static_cast<float>(values[i]));
        else
            data.push_back(values[i]);
    }
    return data;
}

json data_as_json(const Tensor& tensor) {
    switch (tensor.dtype()) {
        case DType::f32: return elements_as_json<float>(tensor);
        case DType::f16: return elements_as_json<half>(tensor);
        case DType::bf16: return elements_as_json<bfloat16>(tensor);
        case DType::f64: return elements_as_json<double>(tensor);
        case DType::i8: return elements_as_json<int8_t>(tensor);
        case DType::u8: return elements_as_json<uint8_t>(tensor);
        case DType::i32: return elements_as_json<int32_t>(tensor);
        case DType::i64: return elements_as_json<int64_t>(tensor);
        case DType::boolean: return elements_as_json<bool>(tensor);
        case DType::i16: return elements_as_json<int16_t>(tensor);
        case DType::u16: return elements_as_json<uint16_t>(tensor);
        case DType::u32: return elements_as_json<uint32_t>(tensor);
        case DType::u64: return elements_as_json<uint64_t>(tensor);
    }
    return json::array();
}

}  // namespace

EncodedResponse encode_infer_response(const std::string& model_name, const InferRequest& request,
                                      const Batch& outputs, const std::vector<TensorInfo>& model_outputs) {
    std::vector<RequestedOutput> wanted = request.outputs;
    if (wanted.empty())
        for (const TensorInfo& info : model_outputs) wanted.push_back({info.name, false});

    json document = {{"model_name", model_name}, {"model_version", "1"}, {"outputs", json::array()}};
    if (!request.id.empty()) document["id"] = request.id;
    std::string binary;
    bool any_binary = false;  // a zero-size binary output still makes a binary response
    for (const RequestedOutput& output : wanted) {
        // Dense host memory, so that raw bytes and element reads are the row-major order.
        const Tensor tensor = outputs[output.name].to(Device::CPU).contiguous();
        json entry = {{"name", output.name},
                      {"datatype", protocol_datatype(tensor.dtype())},
                      {"shape", tensor.shape().dims()}};
        if (output.binary || request.binary_data_output) {
            entry["parameters"] = {{"binary_data_size", tensor.nbytes()}};
            any_binary = true;
            binary.append(static_cast<const char*>(tensor.raw_data()), tensor.nbytes());
        } else {
            entry["data"] = data_as_json(tensor);
        }
        document["outputs"].push_back(std::move(entry));
    }

    EncodedResponse response;
    response.body = document.dump();
    if (!any_binary) {
        response.content_type = "application/json";
        return response;
    }
    response.json_length = response.body.size();
    response.body += binary;
    response.content_type = "application/octet-stream";
    return response;
}

std::string error_body(const std::string& message) {
    // Messages may quote client bytes that are not UTF-8; replace them rather than throw.
    return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace infer::serve
