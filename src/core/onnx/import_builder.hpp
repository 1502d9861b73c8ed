#pragma once
// The graph under construction during ONNX import: values by ONNX name, nodes, constants.
#include "core/ir/graph_ir.hpp"

#include <infer/error.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace infer::detail {

class ImportBuilder {
public:
    explicit ImportBuilder(std::string what) : what_(std::move(what)) {}

    GraphIR& graph() { return ir_; }
    const std::string& what() const { return what_; }

    // The id of an existing ONNX tensor name; throws ModelError naming `user` when absent.
    int value(const std::string& name, const std::string& user) const {
        auto it = ids_.find(name);
        if (it == ids_.end())
            throw ModelError(what_ + ": " + user + " uses tensor '" + name +
                             "', which no input, initializer or node produces");
        return it->second;
    }
    bool has_value(const std::string& name) const { return ids_.count(name) != 0; }

    int new_value(const std::string& name) {
        if (ids_.count(name)) throw ModelError(what_ + ": tensor '" + name + "' is produced twice");
        ir_.values.push_back({name, {}});
        const int id = static_cast<int>(ir_.values.size()) - 1;
        ids_[name] = id;
        return id;
    }
    // A value private to the importer (adapter intermediates); its name cannot clash.
    int internal_value(const std::string& hint) { return new_value(hint + "#" + std::to_string(counter_++)); }

    int constant(const Tensor& tensor, const std::string& name) {
        const int id = new_value(name);
        ir_.constants[id] = tensor;
        return id;
    }
    int constant_i64(const std::vector<int64_t>& values, const std::string& hint) {
        return constant(Tensor::from_vector(values, Shape({static_cast<int64_t>(values.size())})),
                        hint + "#" + std::to_string(counter_++));
    }

    void add_node(const std::string& op, const std::string& name, std::vector<int> inputs,
                  std::vector<int> outputs, Attributes attributes) {
        std::string unique = name;
        while (!node_names_.insert(unique).second) unique = name + "#" + std::to_string(counter_++);
        ir_.nodes.push_back({op, unique, std::move(inputs), std::move(outputs), std::move(attributes)});
    }

private:
    std::string what_;
    GraphIR ir_;
    std::map<std::string, int> ids_;
    std::set<std::string> node_names_;
    size_t counter_ = 0;
};

}  // namespace infer::detail
