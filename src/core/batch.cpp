// Batch and the helpers that assemble and take apart batches on the host.
#include "core/element_convert.hpp"

#include <infer/batch.hpp>
#include <infer/error.hpp>

#include <algorithm>
#include <cstring>

namespace infer {

namespace {
// Tensors and sequences are each a list of (name, value) kept in insertion order.
template <class Value>
void set_named(std::vector<std::pair<std::string, Value>>& entries, const std::string& name, Value value) {
    for (auto& entry : entries)
        if (entry.first == name) {
            entry.second = std::move(value);
            return;
        }
    entries.emplace_back(name, std::move(value));
}

template <class Value>
bool has_named(const std::vector<std::pair<std::string, Value>>& entries, const std::string& name) {
    return std::any_of(entries.begin(), entries.end(), [&](const auto& e) { return e.first == name; });
}

template <class Value>
std::vector<std::string> names_of(const std::vector<std::pair<std::string, Value>>& entries) {
    std::vector<std::string> names;
    for (const auto& entry : entries) names.push_back(entry.first);
    return names;
}

// Throws InvalidArgument naming `name` and the names held (`what`: "tensor", "sequence").
template <class Value>
const Value& find_named(const std::vector<std::pair<std::string, Value>>& entries, const std::string& name,
                        const std::string& what, const std::string& none) {
    for (const auto& entry : entries)
        if (entry.first == name) return entry.second;
    std::string held;
    for (const auto& entry : entries) held += (held.empty() ? "" : ", ") + entry.first;
    throw InvalidArgument("no " + what + " named '" + name + "' in the batch (it holds: " + (held.empty() ? none : held) +
                          ")");
}
}  // namespace

Batch::Batch(std::initializer_list<std::pair<std::string, Tensor>> named) {
    for (const auto& [name, tensor] : named) set(name, tensor);
}

void Batch::set(const std::string& name, Tensor tensor) { set_named(entries_, name, std::move(tensor)); }
bool Batch::contains(const std::string& name) const { return has_named(entries_, name); }
const Tensor& Batch::operator[](const std::string& name) const { return find_named(entries_, name, "tensor", "nothing"); }
std::vector<std::string> Batch::names() const { return names_of(entries_); }

void Batch::set_sequence(const std::string& name, std::vector<Tensor> elements) {
    set_named(sequences_, name, std::move(elements));
}
bool Batch::contains_sequence(const std::string& name) const { return has_named(sequences_, name); }
const std::vector<Tensor>& Batch::sequence(const std::string& name) const {
    return find_named(sequences_, name, "sequence", "none");
}
std::vector<std::string> Batch::sequence_names() const { return names_of(sequences_); }

Tensor stack(const std::vector<Tensor>& items) {
    if (items.empty()) throw InvalidArgument("stack: no tensors given");
    const Tensor& first = items.front();
    std::vector<int64_t> dims{static_cast<int64_t>(items.size())};
    dims.insert(dims.end(), first.shape().begin(), first.shape().end());
    Tensor out = Tensor::empty(first.dtype(), Shape(dims));
    auto* dst = static_cast<unsigned char*>(out.raw_data());
    for (size_t i = 0; i < items.size(); ++i) {
        if (items[i].dtype() != first.dtype() || items[i].shape() != first.shape())
            throw InvalidArgument("stack: item " + std::to_string(i) + " is " + items[i].describe() +
                                  ", item 0 is " + first.describe());
        const Tensor host = items[i].to(Device::CPU).contiguous();
        std::memcpy(dst + i * first.nbytes(), host.raw_data(), first.nbytes());
    }
    return out;
}

std::vector<Tensor> split(const Tensor& tensor, const std::vector<int64_t>& sizes) {
    if (tensor.rank() == 0) throw InvalidArgument("split: cannot split a scalar");
    int64_t total = 0;
    for (int64_t s : sizes) {
        if (s < 0) throw InvalidArgument("split: negative size " + std::to_string(s));
        total += s;
    }
    if (total != tensor.shape()[0])
        throw InvalidArgument("split: sizes add up to " + std::to_string(total) + " but " +
                              tensor.describe() + " has " + std::to_string(tensor.shape()[0]) +
                              " along axis 0");
    std::vector<Tensor> pieces;
    int64_t start = 0;
    for (int64_t s : sizes) {
        pieces.push_back(tensor.slice(0, start, start + s));
        start += s;
    }
    return pieces;
}

Tensor pad(const Tensor& tensor, int64_t axis, int64_t length, double value) {
    const size_t a = tensor.shape().normalize_axis(axis, "pad axis");
    if (length < tensor.shape()[a])
        throw InvalidArgument("pad: length " + std::to_string(length) + " is shorter than " +
                              tensor.describe() + " along axis " + std::to_string(axis));
    Shape shape = tensor.shape();
    shape[a] = length;
    Tensor out = Tensor::empty(tensor.dtype(), shape);
    detail::fill_elements(out.raw_data(), out.dtype(), value, static_cast<size_t>(out.numel()));
    const Tensor host = tensor.to(Device::CPU).contiguous();
    // Copy row blocks: everything before `a` is an outer loop, `a` and after is one block.
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < a; ++d) outer *= shape[d];
    for (size_t d = a + 1; d < shape.rank(); ++d) inner *= shape[d];
    const size_t element = dtype_size(tensor.dtype());
    const size_t src_block = static_cast<size_t>(tensor.shape()[a] * inner) * element;
    const size_t dst_block = static_cast<size_t>(length * inner) * element;
    for (int64_t o = 0; o < outer; ++o)
        std::memcpy(static_cast<unsigned char*>(out.raw_data()) + o * dst_block,
                    static_cast<const unsigned char*>(host.raw_data()) + o * src_block, src_block);
    return out;
}

Tensor pad_and_stack(const std::vector<Tensor>& sequences, double value) {
    if (sequences.empty()) throw InvalidArgument("pad_and_stack: no tensors given");
    int64_t longest = 0;
    for (const Tensor& s : sequences) {
        if (s.rank() == 0) throw InvalidArgument("pad_and_stack: " + s.describe() + " is a scalar");
        longest = std::max(longest, s.shape()[0]);
    }
    return stack_padded(sequences, longest, value);
}

Tensor stack_padded(const std::vector<Tensor>& sequences, int64_t length, double value) {
    if (sequences.empty()) throw InvalidArgument("stack_padded: no tensors given");
    const Tensor& first = sequences.front();
    if (first.rank() == 0) throw InvalidArgument("stack_padded: " + first.describe() + " is a scalar");
    std::vector<int64_t> dims{static_cast<int64_t>(sequences.size()), length};
    dims.insert(dims.end(), first.shape().begin() + 1, first.shape().end());
    Tensor out = Tensor::empty(first.dtype(), Shape(dims));
    const size_t row = dtype_size(first.dtype()) * static_cast<size_t>(first.numel() / std::max<int64_t>(first.shape()[0], 1));
    auto* dst = static_cast<unsigned char*>(out.raw_data());
    for (size_t i = 0; i < sequences.size(); ++i) {
        const Tensor& s = sequences[i];
        bool same_rows = s.dtype() == first.dtype() && s.rank() == first.rank();
        for (size_t d = 1; same_rows && d < s.rank(); ++d) same_rows = s.shape()[d] == first.shape()[d];
        if (!same_rows)
            throw InvalidArgument("stack_padded: item " + std::to_string(i) + " is " + s.describe() + ", item 0 is " +
                                  first.describe() + " (they may differ only along axis 0)");
        if (s.shape()[0] > length)
            throw InvalidArgument("stack_padded: item " + std::to_string(i) + " is " + s.describe() +
                                  ", longer than the length " + std::to_string(length));
        const Tensor host = s.to(Device::CPU).contiguous();
        unsigned char* item = dst + i * row * static_cast<size_t>(length);
        const size_t filled = row * static_cast<size_t>(s.shape()[0]);
        if (filled > 0) std::memcpy(item, host.raw_data(), filled);
        // The tail in elements: row / element size per row, (length - rows) rows.
        const size_t tail = (row / dtype_size(first.dtype())) * static_cast<size_t>(length - s.shape()[0]);
        detail::fill_elements(item + filled, first.dtype(), value, tail);
    }
    return out;
}

Batch stack(const std::vector<Batch>& batches) {
    if (batches.empty()) throw InvalidArgument("stack: no batches given");
    Batch out;
    for (const std::string& name : batches.front().names()) {
        std::vector<Tensor> items;
        for (const Batch& b : batches) items.push_back(b[name]);
        out.set(name, stack(items));
    }
    return out;
}

std::vector<Batch> split(const Batch& batch, const std::vector<int64_t>& sizes) {
    std::vector<Batch> out(sizes.size());
    for (const auto& [name, tensor] : batch) {
        std::vector<Tensor> pieces = split(tensor, sizes);
        for (size_t i = 0; i < pieces.size(); ++i) out[i].set(name, pieces[i]);
    }
    return out;
}

}  // namespace infer
