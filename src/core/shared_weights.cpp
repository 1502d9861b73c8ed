#include "core/shared_weights.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace infer::detail {

namespace {

// A constant is known by its buffer, where in it it starts, and its type and shape; the weak
// reference to the buffer tells a living constant from a new one at a reused address.
using Key = std::tuple<const Buffer*, size_t, DType, std::string, std::string>;

struct Entry {
    std::vector<std::weak_ptr<Buffer>> sources;  // the first is the key's
    std::weak_ptr<Buffer> buffer;  // the derived form's storage
    DType dtype;
    Shape shape;
    size_t byte_offset;
    std::vector<int64_t> strides;

    bool expired() const {
        if (buffer.expired()) return true;
        for (const auto& source : sources)
            if (source.expired()) return true;
        return false;
    }
    // Whether `parts` are the living constants this form was made from.
    bool made_from(const std::vector<Tensor>& parts) const {
        if (parts.size() != sources.size()) return false;
        for (size_t i = 0; i < parts.size(); ++i)
            if (sources[i].lock() != parts[i].buffer()) return false;
        return true;
    }
};

struct Registry {
    std::mutex mutex;
    std::map<Key, Entry> entries;
    size_t pruned_at = 0;  // size after the last pruning

    // Drops forms nobody holds any more, whenever the map has doubled since the last time, so
    // its size stays within twice the forms alive.
    void prune() {
        if (entries.size() < 2 * pruned_at + 16) return;
        for (auto it = entries.begin(); it != entries.end();)
            it = it->second.expired() ? entries.erase(it) : std::next(it);
        pruned_at = entries.size();
    }
};

Registry& registry() {
    static Registry r;
    return r;
}

// The first source names the entry; the others join the form's name by where they lie (their
// weak references in the entry then tell living constants from new ones at reused addresses).
Key key_of(const std::vector<Tensor>& sources, const std::string& form) {
    const Tensor& first = sources.front();
    std::string name = form;
    for (size_t i = 1; i < sources.size(); ++i) {
        const Tensor& part = sources[i];
        name += "|" + std::to_string(reinterpret_cast<uintptr_t>(part.buffer().get())) + "+" +
                std::to_string(part.byte_offset()) + ":" + std::string(dtype_name(part.dtype())) + part.shape().to_string();
    }
    return {first.buffer().get(), first.byte_offset(), first.dtype(), first.shape().to_string(), name};
}

bool all_defined(const std::vector<Tensor>& tensors) {
    if (tensors.empty()) return false;
    for (const Tensor& t : tensors)
        if (!t.defined()) return false;
    return true;
}

Tensor find_form(const std::vector<Tensor>& sources, const std::string& form) {
    if (!all_defined(sources)) return {};
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.entries.find(key_of(sources, form));
    if (it == r.entries.end()) return {};
    const Entry& e = it->second;
    std::shared_ptr<Buffer> buffer = e.buffer.lock();
    if (!buffer || !e.made_from(sources)) return {};
    return Tensor(std::move(buffer), e.dtype, e.shape, e.byte_offset, e.strides);
}

void add_form(const std::vector<Tensor>& sources, const std::string& form, const Tensor& derived) {
    if (!all_defined(sources) || !derived.defined()) return;
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    Entry entry{{}, derived.buffer(), derived.dtype(), derived.shape(), derived.byte_offset(), derived.strides()};
    for (const Tensor& source : sources) entry.sources.push_back(source.buffer());
    r.entries[key_of(sources, form)] = std::move(entry);
    r.prune();
}

}  // namespace

Tensor SharedWeights::find(const Tensor& source, const std::string& form) { return find_form({source}, form); }

void SharedWeights::add(const Tensor& source, const std::string& form, const Tensor& derived) {
    add_form({source}, form, derived);
}

Tensor SharedWeights::find_or_make(const Tensor& source, const std::string& form, const std::function<Tensor()>& make) {
    return find_or_make(std::vector<Tensor>{source}, form, make);
}

Tensor SharedWeights::find_or_make(const std::vector<Tensor>& sources, const std::string& form,
                                   const std::function<Tensor()>& make) {
    Tensor found = find_form(sources, form);
    if (found.defined()) return found;
    Tensor made = make();
    add_form(sources, form, made);
    return made;
}

size_t SharedWeights::live_forms() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    size_t live = 0;
    for (const auto& [key, e] : r.entries) live += !e.expired();
    return live;
}

}  // namespace infer::detail
