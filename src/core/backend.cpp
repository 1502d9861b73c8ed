// Buffer, KernelContext, KernelRegistry, Backend's default methods, and the process-wide
// backend registry with the built-in backends.
#include "core/backend_registry.hpp"
#include "core/cpu_isa.hpp"
#include "core/half_convert.hpp"
#include "core/ops/op_schema.hpp"

#include <infer/backend.hpp>
#include <infer/error.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>

namespace infer {

Buffer::Buffer(void* data, size_t bytes, Device device, Deleter deleter, Flags flags)
    : data_(data), bytes_(bytes), device_(std::move(device)), deleter_(std::move(deleter)),
      flags_(flags) {}

Buffer::~Buffer() {
    if (deleter_) deleter_(data_);
}

KernelContext::KernelContext(const NodeSignature& node, const std::vector<Tensor>& inputs,
                             std::vector<Tensor>& outputs, Stream* stream, Device device,
                             std::function<void*(size_t)> workspace)
    : node_(node), inputs_(inputs), outputs_(outputs), stream_(stream), device_(std::move(device)),
      workspace_(std::move(workspace)) {}

const Tensor& KernelContext::input(size_t i) const {
    if (i >= inputs_.size())
        throw InvalidArgument("node '" + node_.name + "' (" + node_.op + "): no input " +
                              std::to_string(i));
    return inputs_[i];
}

Tensor& KernelContext::output(size_t i) {
    if (i >= outputs_.size())
        throw InvalidArgument("node '" + node_.name + "' (" + node_.op + "): no output " +
                              std::to_string(i));
    return outputs_[i];
}

CompileContext::CompileContext(const NodeSignature& node, Device device,
                               std::vector<const Tensor*> constants, PrepackCache prepack)
    : node_(node), device_(std::move(device)), constants_(std::move(constants)),
      prepack_(std::move(prepack)) {}

Tensor CompileContext::prepacked(size_t i, const std::string& layout, const Prepack& make) const {
    if (!constant(i))
        throw InvalidArgument("node '" + node_.name + "' (" + node_.op + "): input " + std::to_string(i) +
                              " is not a constant and cannot be prepacked");
    return prepack_ ? prepack_(i, layout, make) : make(*constant(i));
}

void KernelRegistry::add(const std::string& op, DType dtype, Kernel kernel) {
    add_compiled(op, dtype, [kernel = std::move(kernel)](const CompileContext&) {
        return std::make_unique<FunctionKernel>(kernel);
    });
}

void KernelRegistry::add_compiled(const std::string& op, DType dtype, KernelFactory factory) {
    // A kernel under a name the planner never asks for would be silently unused.
    if (!detail::find_op(op))
        throw InvalidArgument("a kernel is registered for op '" + op +
                              "', which infer's op table does not know (see infer::known_ops())");
    kernels_[{op, dtype}] = std::move(factory);
}

void KernelRegistry::add(const std::string& op, std::initializer_list<DType> dtypes,
                         const Kernel& kernel) {
    for (DType t : dtypes) add(op, t, kernel);
}

const KernelFactory* KernelRegistry::find(const std::string& op, DType dtype) const {
    auto it = kernels_.find({op, dtype});
    return it == kernels_.end() ? nullptr : &it->second;
}

std::vector<std::pair<std::string, DType>> KernelRegistry::entries() const {
    std::vector<std::pair<std::string, DType>> out;
    for (const auto& [key, kernel] : kernels_) out.push_back(key);
    return out;
}

std::shared_ptr<Buffer> Backend::allocate_pinned_host(size_t bytes, int) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (!p) throw OutOfMemory("host: cannot allocate " + std::to_string(bytes) + " bytes");
    return std::make_shared<Buffer>(p, bytes, Device::CPU, [](void* q) { std::free(q); },
                                    Buffer::Flags{true, false});
}

void Backend::copy_from_host(void* dst, const void* src, size_t bytes, int, Stream*) {
    if (bytes) std::memcpy(dst, src, bytes);
}
void Backend::copy_to_host(void* dst, const void* src, size_t bytes, int, Stream*) {
    if (bytes) std::memcpy(dst, src, bytes);
}
void Backend::copy_on_device(void* dst, const void* src, size_t bytes, int, Stream*) {
    if (bytes) std::memmove(dst, src, bytes);
}

std::unique_ptr<Stream> Backend::create_stream(int) { return std::make_unique<Stream>(); }

uint16_t Backend::largest_f16_magnitude(const void* data, size_t count, int index, Stream* stream) {
    // Through a bounded staging area: an output can be gigabytes.
    constexpr size_t kChunk = size_t{1} << 20;
    std::vector<uint16_t> staging(std::min(count, kChunk));
    const auto* values = static_cast<const uint16_t*>(data);
    uint16_t largest = 0;
    for (size_t done = 0; done < count; done += kChunk) {
        const size_t n = std::min(kChunk, count - done);
        copy_to_host(staging.data(), values + done, n * sizeof(uint16_t), index, stream);
        if (stream) stream->synchronize();
        largest = std::max(largest, detail::largest_f16_magnitude_bits(staging.data(), n));
    }
    return largest;
}

size_t Backend::stream_workspace_bytes(int) const { return 0; }

namespace {
struct HostClockMark final : TimingMark {
    std::chrono::steady_clock::time_point at = std::chrono::steady_clock::now();
};
}  // namespace

std::unique_ptr<TimingMark> Stream::mark() { return std::make_unique<HostClockMark>(); }

double Stream::elapsed_ms(const TimingMark& from, const TimingMark& to) {
    const auto* a = dynamic_cast<const HostClockMark*>(&from);
    const auto* b = dynamic_cast<const HostClockMark*>(&to);
    if (!a || !b) throw InvalidArgument("Stream::elapsed_ms: marks made by another kind of stream");
    return std::chrono::duration<double, std::milli>(b->at - a->at).count();
}

bool Backend::supports(const NodeSignature& node) const {
    return kernels_.find(node.op, node.kernel_dtype) != nullptr;
}

std::vector<SegmentClaim> Backend::compile_segments(const SegmentOffer&) const { return {}; }

std::unique_ptr<CompiledKernel> Backend::compile(const CompileContext& ctx) const {
    const NodeSignature& node = ctx.node();
    const KernelFactory* factory = kernels_.find(node.op, node.kernel_dtype);
    if (!factory)
        throw Unsupported("backend '" + name() + "' has no " + node.op + " kernel for " +
                          std::string(dtype_name(node.kernel_dtype)) + " (node '" + node.name + "')");
    return (*factory)(ctx);
}

namespace {
struct Registry {
    std::mutex mutex;
    std::map<std::string, std::shared_ptr<Backend>> backends;
};

// The CPU backend's kernels are compiled for INFER_CPU_ISA_LEVEL (CMake's INFER_CPU_ISA); this
// file is not, so it can refuse a CPU below that level before any of them runs (cpu_isa.hpp).
void require_cpu_isa_level() {
#ifdef INFER_CPU_ISA_LEVEL
    __builtin_cpu_init();
#if defined(__clang__)  // clang before 16 knows no level names; AVX2 and FMA are what v3 adds that matters
    const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    const bool supported = __builtin_cpu_supports(INFER_CPU_ISA_LEVEL);
#endif
    detail::require_cpu_isa(INFER_CPU_ISA_LEVEL, supported);
#endif
}

Registry& registry() {
    static Registry* instance = [] {
        require_cpu_isa_level();
        auto* r = new Registry;  // never destroyed: backends may be used during static teardown
        for (auto& backend : detail::builtin_backends()) r->backends[backend->name()] = std::move(backend);
        return r;
    }();
    return *instance;
}

std::string registered_list(const Registry& r) {
    std::string names;
    for (const auto& [name, backend] : r.backends) names += (names.empty() ? "" : ", ") + name;
    return names;
}
}  // namespace

void register_backend(std::shared_ptr<Backend> backend) {
    if (!backend) throw InvalidArgument("register_backend: backend is null");
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    const std::string name = backend->name();
    Device{name, 0};  // validates the name's characters
    if (r.backends.count(name))
        throw InvalidArgument("a backend named '" + name + "' is already registered");
    r.backends[name] = std::move(backend);
}

void unregister_backend(const std::string& name) {
    if (name == "cpu") throw InvalidArgument("the cpu backend cannot be unregistered");
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.backends.erase(name);
}

std::vector<std::string> registered_backends() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    std::vector<std::string> names;
    for (const auto& [name, backend] : r.backends) names.push_back(name);
    return names;
}

std::shared_ptr<Backend> backend_for(const Device& device) {
    Registry& r = registry();
    std::shared_ptr<Backend> backend;
    {
        std::lock_guard lock(r.mutex);
        auto it = r.backends.find(device.type);
        if (it == r.backends.end()) {
            if (device.type == "cuda")
                throw DeviceError("device '" + device.to_string() +
                                  "': infer was built without CUDA (nvcc was not found when it "
                                  "was configured)");
            throw DeviceError("unknown device '" + device.to_string() +
                              "': registered backends are " + registered_list(r));
        }
        backend = it->second;
    }
    const int count = backend->device_count();
    if (device.index >= count) {
        if (count == 0)
            throw DeviceError("device '" + device.to_string() + "': no " + device.type +
                              " device is present on this machine");
        throw DeviceError("device '" + device.to_string() + "': only " + std::to_string(count) +
                          " " + device.type + " device(s) present");
    }
    return backend;
}

std::shared_ptr<Backend> find_backend(const std::string& name) { return detail::backend_named(name); }

std::vector<std::string> known_ops() {
    std::vector<std::string> names;
    for (const auto& schema : detail::all_ops()) names.emplace_back(schema.name);
    return names;
}

namespace detail {
std::shared_ptr<Backend> backend_named(const std::string& name) {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.backends.find(name);
    return it == r.backends.end() ? nullptr : it->second;
}
}  // namespace detail

}  // namespace infer
