#pragma once
// Node attributes: named ints, floats, strings, lists, tensors and graphs (the branches and
// bodies of control-flow ops), as ONNX defines them.
// Typed getters throw ModelError naming the attribute when it is missing or of another type.
#include <infer/tensor.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace infer {

class Graph;  // graph.hpp

using AttributeValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                                    std::vector<float>, std::vector<std::string>, Tensor,
                                    std::shared_ptr<const Graph>>;

class Attributes {
public:
    Attributes() = default;
    Attributes(std::initializer_list<std::pair<const std::string, AttributeValue>> values)
        : values_(values) {}

    void set(const std::string& name, AttributeValue value) { values_[name] = std::move(value); }
    bool has(const std::string& name) const { return values_.count(name) != 0; }
    const std::map<std::string, AttributeValue>& all() const { return values_; }

    int64_t get_int(const std::string& name) const;
    int64_t get_int(const std::string& name, int64_t fallback) const;
    float get_float(const std::string& name) const;
    float get_float(const std::string& name, float fallback) const;
    const std::string& get_string(const std::string& name) const;
    std::string get_string(const std::string& name, const std::string& fallback) const;
    const std::vector<int64_t>& get_ints(const std::string& name) const;
    std::vector<int64_t> get_ints(const std::string& name, std::vector<int64_t> fallback) const;
    const std::vector<float>& get_floats(const std::string& name) const;
    const Tensor& get_tensor(const std::string& name) const;
    const Graph& get_graph(const std::string& name) const;

private:
    template <class T>
    const T& get(const std::string& name, const char* type_name) const;
    std::map<std::string, AttributeValue> values_;
};

}  // namespace infer
