#include <infer/attributes.hpp>
#include <infer/error.hpp>

namespace infer {

template <class T>
const T& Attributes::get(const std::string& name, const char* type_name) const {
    auto it = values_.find(name);
    if (it == values_.end()) throw ModelError("attribute '" + name + "' is missing");
    const T* value = std::get_if<T>(&it->second);
    if (!value) throw ModelError("attribute '" + name + "' is not " + type_name);
    return *value;
}

int64_t Attributes::get_int(const std::string& name) const { return get<int64_t>(name, "an int"); }
int64_t Attributes::get_int(const std::string& name, int64_t fallback) const {
    return has(name) ? get_int(name) : fallback;
}
float Attributes::get_float(const std::string& name) const {
    auto it = values_.find(name);
    if (it != values_.end())
        if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<float>(*i);
    return get<float>(name, "a float");
}
float Attributes::get_float(const std::string& name, float fallback) const {
    return has(name) ? get_float(name) : fallback;
}
const std::string& Attributes::get_string(const std::string& name) const {
    return get<std::string>(name, "a string");
}
std::string Attributes::get_string(const std::string& name, const std::string& fallback) const {
    return has(name) ? get_string(name) : fallback;
}
const std::vector<int64_t>& Attributes::get_ints(const std::string& name) const {
    return get<std::vector<int64_t>>(name, "a list of ints");
}
std::vector<int64_t> Attributes::get_ints(const std::string& name, std::vector<int64_t> fallback) const {
    return has(name) ? get_ints(name) : fallback;
}
const std::vector<float>& Attributes::get_floats(const std::string& name) const {
    return get<std::vector<float>>(name, "a list of floats");
}
const Graph& Attributes::get_graph(const std::string& name) const {
    const auto& graph = get<std::shared_ptr<const Graph>>(name, "a graph");
    if (!graph) throw ModelError("attribute '" + name + "' is an empty graph");
    return *graph;
}
const Tensor& Attributes::get_tensor(const std::string& name) const {
    return get<Tensor>(name, "a tensor");
}

}  // namespace infer
