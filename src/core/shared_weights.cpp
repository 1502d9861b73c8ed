#include "core/shared_weights.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace infer::detail {

namespace {

// A constant is known by its buffer, where in it it starts, and its type and shape; the weak
// reference to the buffer tells a living constant from a new one at a reused address.
using Key = std::tuple<const Buffer*, size_t, DType, std::string, std::string>;

struct Entry {
    std::weak_ptr<Buffer> source;
    std::weak_ptr<Buffer> buffer;  // the derived form's storage
    DType dtype;
    Shape shape;
    size_t byte_offset;
    std::vector<int64_t> strides;
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
            it = it->second.buffer.expired() || it->second.source.expired() ? entries.erase(it) : std::next(it);
        pruned_at = entries.size();
    }
};

Registry& registry() {
    static Registry r;
    return r;
}

Key key_of(const Tensor& source, const std::string& form) {
    return {source.buffer().get(), source.byte_offset(), source.dtype(), source.shape().to_string(), form};
}

}  // namespace

Tensor SharedWeights::find(const Tensor& source, const std::string& form) {
    if (!source.defined()) return {};
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.entries.find(key_of(source, form));
    if (it == r.entries.end()) return {};
    const Entry& e = it->second;
    std::shared_ptr<Buffer> buffer = e.buffer.lock();
    if (!buffer || e.source.lock() != source.buffer()) return {};
    return Tensor(std::move(buffer), e.dtype, e.shape, e.byte_offset, e.strides);
}

void SharedWeights::add(const Tensor& source, const std::string& form, const Tensor& derived) {
    if (!source.defined() || !derived.defined()) return;
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.entries[key_of(source, form)] =
        Entry{source.buffer(), derived.buffer(), derived.dtype(), derived.shape(), derived.byte_offset(), derived.strides()};
    r.prune();
}

Tensor SharedWeights::find_or_make(const Tensor& source, const std::string& form, const std::function<Tensor()>& make) {
    Tensor found = find(source, form);
    if (found.defined()) return found;
    Tensor made = make();
    add(source, form, made);
    return made;
}

size_t SharedWeights::live_forms() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    size_t live = 0;
    for (const auto& [key, e] : r.entries) live += !e.buffer.expired() && !e.source.expired();
    return live;
}

}  // namespace infer::detail
