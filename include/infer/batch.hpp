#pragma once
// A Batch is a set of named tensors: the inputs of a run, or its outputs. The helpers build
// batches from single examples (stack, pad) and take them apart again (split). A graph whose
// inputs or outputs are sequences (ONNX sequence type) takes and gives them as named lists of
// tensors beside the tensors; iterating a batch visits its tensors only.
#include <infer/tensor.hpp>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace infer {

class Batch {
public:
    Batch() = default;
    Batch(std::initializer_list<std::pair<std::string, Tensor>> named);

    // Adds or replaces the tensor called `name`.
    void set(const std::string& name, Tensor tensor);
    bool contains(const std::string& name) const;
    // Throws InvalidArgument naming `name` and the names the batch holds.
    const Tensor& operator[](const std::string& name) const;
    const Tensor& at(const std::string& name) const { return (*this)[name]; }
    std::vector<std::string> names() const;
    size_t size() const { return entries_.size(); }
    bool empty() const { return entries_.empty(); }
    auto begin() const { return entries_.begin(); }
    auto end() const { return entries_.end(); }

    // Sequences: adds or replaces the list called `name` (it may be empty).
    void set_sequence(const std::string& name, std::vector<Tensor> elements);
    bool contains_sequence(const std::string& name) const;
    // Throws InvalidArgument naming `name` and the sequences the batch holds.
    const std::vector<Tensor>& sequence(const std::string& name) const;
    std::vector<std::string> sequence_names() const;

private:
    std::vector<std::pair<std::string, Tensor>> entries_;
    std::vector<std::pair<std::string, std::vector<Tensor>>> sequences_;
};

// Stacks equally shaped tensors along a new leading axis: n × [d...] → [n, d...]. On the CPU.
Tensor stack(const std::vector<Tensor>& items);
// Splits along axis 0 into pieces of the given sizes (they must add up); the pieces are views.
std::vector<Tensor> split(const Tensor& tensor, const std::vector<int64_t>& sizes);
// Pads `axis` at its end up to `length` with `value` (converted to the tensor's dtype).
Tensor pad(const Tensor& tensor, int64_t axis, int64_t length, double value = 0.0);
// Pads each tensor's axis 0 to the longest and stacks them: sequences of token ids → [n, max].
Tensor pad_and_stack(const std::vector<Tensor>& sequences, double value = 0.0);
// The same to a given length (at least the longest): [n, length, d...], each item's rows
// copied once and only the rows past its end filled with `value`.
Tensor stack_padded(const std::vector<Tensor>& sequences, int64_t length, double value = 0.0);

// The same for whole batches: every name stacked or split together.
Batch stack(const std::vector<Batch>& batches);
std::vector<Batch> split(const Batch& batch, const std::vector<int64_t>& sizes);

}  // namespace infer
