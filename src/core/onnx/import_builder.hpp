#pragma once
// The graph under construction during ONNX import: values by ONNX name, nodes, constants.
#include "core/ir/graph_ir.hpp"

#include <infer/error.hpp>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace infer::detail {

class ImportBuilder {
public:
    // Says whether an enclosing graph defines a name; absent for a top-level graph.
    using OuterScope = std::function<bool(const std::string& name)>;
    explicit ImportBuilder(std::string what, OuterScope outer = nullptr)
        : what_(std::move(what)), outer_(std::move(outer)) {}

    GraphIR& graph() { return ir_; }
    const OuterScope& outer() const { return outer_; }
    const std::string& what() const { return what_; }

    // The id of an existing ONNX tensor name; throws ModelError naming `user` when absent.
    // In a subgraph (a branch or a loop body), a name of an enclosing graph becomes an
    // implicit input of the subgraph, after its own inputs (see outer_names()).
    int value(const std::string& name, const std::string& user) {
        auto it = ids_.find(name);
        if (it != ids_.end()) return it->second;
        if (!outer_ || !outer_(name))
            throw ModelError(what_ + ": " + user + " uses tensor '" + name +
                             "', which no input, initializer or node produces");
        const int id = new_value(name);
        ir_.inputs.push_back(id);
        outer_names_.push_back(name);
        return id;
    }
    bool has_value(const std::string& name) const { return ids_.count(name) != 0; }
    // Names of enclosing graphs this subgraph reads, in the order of its implicit inputs.
    const std::vector<std::string>& outer_names() const { return outer_names_; }

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
    OuterScope outer_;
    std::vector<std::string> outer_names_;
    GraphIR ir_;
    std::map<std::string, int> ids_;
    std::set<std::string> node_names_;
    size_t counter_ = 0;
};

}  // namespace infer::detail
