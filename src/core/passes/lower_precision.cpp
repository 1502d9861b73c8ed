#include "core/passes/lower_precision.hpp"

#include "core/cpu_features.hpp"
#include "core/element_convert.hpp"
#include "core/ops/op_schema.hpp"
#include "core/ops/shape_functions.hpp"
#include "core/passes/pipeline.hpp"
#include "core/shared_weights.hpp"

#include <infer/error.hpp>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <map>
#include <thread>

namespace infer::detail {

namespace {

// Which ops run in which type comes from the op table's precision classes (OpTraits). Ops kept
// in f32 are those whose results can leave the low type's range or lose it in a sum, and
// LayerNormalization, whose f32 output keeps the residual stream (the Adds that follow) in f32;
// in bf16 that stream carries a third of the error otherwise. Softmax and Erf follow their inputs:
// every backend computes them in f32 inside the kernel, their inputs arrive in the low type
// anyway and their bounded results go on to low-type ops. Keeping them in f32 cost a Cast on
// each side of every attention and an f32 GELU (on an H200, DistilBERT at batch 256 spent more
// time in those casts and f32 elementwise ops than in MatMul).

// Largest finite value of the low type. Constants beyond it are clamped when converted: masks
// written as "the most negative f32" must stay finite, or a fully masked softmax row becomes
// inf - inf = NaN instead of a uniform row.
float largest_finite(DType low) { return low == DType::f16 ? 65504.0f : 3.38953139e38f; }

// Bit patterns of non-negative floats order as their values do, so the scans below work on
// integers, in fixed blocks of lanes the compiler vectorizes (every weight of a model passes
// through them when a session lowers it; as scalar float loops they were most of an f16
// DistilBERT session's start).
constexpr uint32_t kMagnitudeBits = 0x7fffffffu;
constexpr size_t kLanes = 16;

// Runs task(i) for i in [0, count) on up to 8 threads (the calling one included): a model's
// weights are hundreds of MiB, and on a GPU host's many cores the session's start should not
// wait for one of them to scan, convert and fault in every page alone.
template <class Task>
void run_tasks(size_t count, const Task& task) {
    const size_t threads = std::min<size_t>({count, 8, std::max(1u, std::thread::hardware_concurrency())});
    std::atomic<size_t> next{0};
    const auto work = [&] {
        for (size_t i = next++; i < count; i = next++) task(i);
    };
    std::vector<std::thread> helpers;
    for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
    work();
    for (std::thread& helper : helpers) helper.join();
}

constexpr size_t kChunk = size_t{1} << 20;  // values per task

// The largest magnitude below 1e30 among values[begin, end), as bits (in an AVX2 version where
// the CPU has it, below: the core is built for baseline x86-64, whose SSE2 has no unsigned
// 32-bit max).
__attribute__((always_inline)) inline uint32_t largest_value_bits_lanes(const uint32_t* values, size_t begin,
                                                                        size_t end) {
    const uint32_t sentinel = std::bit_cast<uint32_t>(1e30f);  // infinities and NaN lie above it too
    uint32_t lanes[kLanes] = {};
    size_t i = begin;
    for (; i + kLanes <= end; i += kLanes)
        for (size_t j = 0; j < kLanes; ++j) {
            const uint32_t magnitude = values[i + j] & kMagnitudeBits;
            lanes[j] = std::max(lanes[j], magnitude < sentinel ? magnitude : 0u);
        }
    uint32_t largest = 0;
    for (; i < end; ++i) {
        const uint32_t magnitude = values[i] & kMagnitudeBits;
        largest = std::max(largest, magnitude < sentinel ? magnitude : 0u);
    }
    for (const uint32_t lane : lanes) largest = std::max(largest, lane);
    return largest;
}

// out = in with finite magnitudes beyond `bound` (bits) clamped to it, signs, infinities and NaN
// kept (in an AVX2 version where the CPU has it, as above).
__attribute__((always_inline)) inline void clamp_magnitudes_lanes(const uint32_t* in, uint32_t* out, size_t n,
                                                                  uint32_t bound) {
    const uint32_t infinity = std::bit_cast<uint32_t>(INFINITY);
    const auto clamp = [&](uint32_t bits) {
        const uint32_t magnitude = bits & kMagnitudeBits;
        return magnitude > bound && magnitude < infinity ? (bits & ~kMagnitudeBits) | bound : bits;
    };
    size_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (size_t j = 0; j < kLanes; ++j) out[i + j] = clamp(in[i + j]);
    for (; i < n; ++i) out[i] = clamp(in[i]);
}

// The AVX2 and baseline versions of the two loops above, chosen per call (cpu_features.hpp
// says why not target_clones).
__attribute__((target("avx2"))) uint32_t largest_value_bits_avx2(const uint32_t* values, size_t begin, size_t end) {
    return largest_value_bits_lanes(values, begin, end);
}
uint32_t largest_value_bits(const uint32_t* values, size_t begin, size_t end) {
    return cpu_has_avx2() ? largest_value_bits_avx2(values, begin, end) : largest_value_bits_lanes(values, begin, end);
}
__attribute__((target("avx2"))) void clamp_magnitudes_avx2(const uint32_t* in, uint32_t* out, size_t n, uint32_t bound) {
    clamp_magnitudes_lanes(in, out, n, bound);
}
void clamp_magnitudes(const uint32_t* in, uint32_t* out, size_t n, uint32_t bound) {
    if (cpu_has_avx2()) clamp_magnitudes_avx2(in, out, n, bound);
    else clamp_magnitudes_lanes(in, out, n, bound);
}

// Whether f16 can hold each constant's values: weights all below f16's smallest normal (2^-14)
// lose their precision or become zeros, and genuine values beyond 65504 would be clamped.
// Sentinels of 1e30 and more (masks written as -FLT_MAX) are not values and may be clamped.
// All constants are scanned in one set of tasks: scanned one constant at a time, a 768 × 768
// weight was a single task, so DistilBERT's 265 MB of weights were read by one core while the
// rest of a GPU host's waited.
std::vector<bool> f16_can_hold(const std::vector<const Tensor*>& constants) {
    std::vector<std::pair<size_t, size_t>> tasks;  // (constant, first value)
    for (size_t c = 0; c < constants.size(); ++c)
        if (constants[c]->dtype() == DType::f32)
            for (size_t begin = 0; begin < static_cast<size_t>(constants[c]->numel()); begin += kChunk)
                tasks.emplace_back(c, begin);
    std::vector<uint32_t> largest_per_task(tasks.size(), 0);
    run_tasks(tasks.size(), [&](size_t t) {
        const Tensor& constant = *constants[tasks[t].first];
        const size_t begin = tasks[t].second, count = static_cast<size_t>(constant.numel());
        largest_per_task[t] =
            largest_value_bits(static_cast<const uint32_t*>(constant.raw_data()), begin, std::min(count, begin + kChunk));
    });
    std::vector<uint32_t> largest(constants.size(), 0);
    for (size_t t = 0; t < tasks.size(); ++t)
        largest[tasks[t].first] = std::max(largest[tasks[t].first], largest_per_task[t]);
    std::vector<bool> holds;
    for (const uint32_t l : largest)
        holds.push_back(l <= std::bit_cast<uint32_t>(65504.0f) && (l == 0 || l >= std::bit_cast<uint32_t>(6.103515625e-05f)));
    return holds;
}

class Lowering {
public:
    Lowering(const GraphIR& source, DType low, const std::set<std::string>& keep_f32)
        : src_(source), low_(low), keep_f32_(keep_f32) {}

    std::shared_ptr<GraphIR> run() {
        out_ = std::make_shared<GraphIR>();
        out_->name = src_.name;
        out_->values = src_.values;
        out_->constants = src_.constants;
        out_->inputs = src_.inputs;
        out_->output_names = src_.output_names;
        for (const ValueIR& v : src_.values) dtype_.push_back(v.type.dtype);
        if (low_ == DType::f16) scan_f16_ranges();
        for (const NodeIR& node : src_.nodes) lower(node);
        for (int id : src_.outputs)  // never forwarded (see lower)
            out_->outputs.push_back(src_.values[id].type.dtype == DType::f32 ? as(id, DType::f32) : id);
        convert_constants();
        validate(*out_);
        return out_;
    }

private:
    bool is_float(int id) const { return dtype_[id] == DType::f32 || dtype_[id] == low_; }
    bool is_constant(int id) const { return out_->constants.count(id) != 0; }
    // Whether f16 holds constant `id`: scan_f16_ranges answered for every constant a node reads
    // as data; a constant reached otherwise is judged here.
    bool f16_holds(int id) const {
        if (!f16_holds_.count(id)) judge_f16_ranges({id});
        return f16_holds_.at(id);
    }

    // f16_holds for every constant that a node reads as data, judged together.
    void scan_f16_ranges() const {
        std::vector<int> ids;
        for (const NodeIR& node : src_.nodes) {
            if (keep_f32_.count(node.name)) continue;
            const OpSchema& schema = op_schema(node.id);
            for (size_t i = 0; i < node.inputs.size(); ++i) {
                const int id = node.inputs[i];
                if (id >= 0 && !schema.is_host_input(i) && is_constant(id)) ids.push_back(id);
            }
        }
        judge_f16_ranges(ids);
    }

    // Fills f16_holds_ for `ids` not judged yet, the f32 ones' scans in one set of parallel tasks.
    // A form in f16 that a live session made answers without a scan: only constants that f16
    // holds are converted to it.
    void judge_f16_ranges(const std::vector<int>& ids) const {
        std::vector<int> scanned;
        std::vector<const Tensor*> constants;
        for (const int id : ids) {
            if (f16_holds_.count(id)) continue;
            const Tensor& constant = out_->constants.at(id);
            f16_holds_[id] = true;
            if (constant.dtype() != DType::f32 || SharedWeights::find(constant, "f16").defined()) continue;
            scanned.push_back(id);
            constants.push_back(&constant);
        }
        const std::vector<bool> holds = f16_can_hold(constants);
        for (size_t i = 0; i < scanned.size(); ++i) f16_holds_[scanned[i]] = holds[i];
    }

    // Value `id` as `type`: itself, a converted constant, or the output of an inserted Cast.
    int as(int id, DType type) {
        if (dtype_[id] == type) return id;
        auto cached = casts_.find({id, type});
        if (cached != casts_.end()) return cached->second;
        const std::string name = out_->values[id].name + "@" + std::string(dtype_name(type));
        out_->values.push_back({name, {}});
        const int cast = static_cast<int>(out_->values.size()) - 1;
        dtype_.push_back(type);
        if (is_constant(id)) {
            // Another live session of the graph may have converted it already.
            const Tensor& host = out_->constants.at(id);
            Tensor converted = SharedWeights::find(host, std::string(dtype_name(type)));
            if (!converted.defined()) {
                converted = Tensor::empty(type, host.shape());
                conversions_.push_back({host, converted});  // filled in by convert_constants()
            }
            out_->constants[cast] = converted;
        } else {
            out_->nodes.push_back({"Cast", name, {id}, {cast}, {{"to", dtype_to_onnx(type)}}});
        }
        casts_[{id, type}] = cast;
        return cast;
    }

    // Fills every converted constant, in chunks on several threads. f32 values narrowed to the
    // low type are clamped to its finite range (infinities and NaN kept) a block at a time
    // through a small buffer: the weights are read once, with no clamped copy of them all
    // (DistilBERT's f16 session spent most of its 0.7 s start converting one value at a time).
    void convert_constants() {
        std::vector<std::pair<size_t, size_t>> tasks;  // (conversion, first value)
        for (size_t c = 0; c < conversions_.size(); ++c)
            for (size_t begin = 0; begin < static_cast<size_t>(conversions_[c].first.numel()); begin += kChunk)
                tasks.emplace_back(c, begin);
        run_tasks(tasks.size(), [&](size_t t) {
            auto& [from, to] = conversions_[tasks[t].first];
            const size_t begin = tasks[t].second, n = std::min(kChunk, static_cast<size_t>(from.numel()) - begin);
            const char* source = static_cast<const char*>(from.raw_data()) + begin * dtype_size(from.dtype());
            char* target = static_cast<char*>(to.raw_data()) + begin * dtype_size(to.dtype());
            if (from.dtype() == DType::f32 && to.dtype() == low_)
                narrow_clamped(reinterpret_cast<const uint32_t*>(source), target, n);
            else
                convert_elements(source, from.dtype(), target, to.dtype(), n);
        });
        for (const auto& [from, to] : conversions_) SharedWeights::add(from, std::string(dtype_name(to.dtype())), to);
    }

    void narrow_clamped(const uint32_t* in, char* out, size_t count) const {
        constexpr size_t kBlock = 4096;  // a multiple of kLanes
        uint32_t block[kBlock];
        const uint32_t bound = std::bit_cast<uint32_t>(largest_finite(low_));
        for (size_t begin = 0; begin < count; begin += kBlock) {
            const size_t n = std::min(kBlock, count - begin);
            clamp_magnitudes(in + begin, block, n, bound);
            convert_elements(block, DType::f32, out + begin * dtype_size(low_), low_, n);
        }
    }

    DType choose(const NodeIR& node, const OpSchema& schema) const {
        if (keep_f32_.count(node.name)) return DType::f32;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
            const int id = node.inputs[i];
            if (low_ == DType::f16 && id >= 0 && !schema.is_host_input(i) && is_constant(id) && !f16_holds(id))
                return DType::f32;
        }
        if (schema.traits.precision == PrecisionClass::low) return low_;
        if (schema.traits.precision == PrecisionClass::keeps_f32) return DType::f32;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
            const int id = node.inputs[i];
            if (id >= 0 && !schema.is_host_input(i) && !is_constant(id) && dtype_[id] == DType::f32)
                return DType::f32;
        }
        return low_;
    }

    void lower(const NodeIR& source) {
        NodeIR node = source;
        for (int& id : node.inputs)
            if (id >= 0 && forwarded_.count(id)) id = forwarded_.at(id);
        const OpSchema* schema = &op_schema(node.id);
        const DType type = choose(node, *schema);
        NodeIR lowered = node;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
            const int id = node.inputs[i];
            if (id >= 0 && !schema->is_host_input(i) && is_float(id)) lowered.inputs[i] = as(id, type);
        }
        // Ops that create floats from nothing (their dtype rule reads an attribute) make them in
        // the node's type.
        if (schema->output_dtype == dtype_from_to_attribute &&
            dtype_from_onnx(node.attributes.get_int("to")) == DType::f32)
            lowered.attributes.set("to", dtype_to_onnx(type));
        if (schema->output_dtype == dtype_from_value_attribute && node.attributes.has("value") &&
            node.attributes.get_tensor("value").dtype() == DType::f32) {
            const Tensor& value = node.attributes.get_tensor("value");
            Tensor converted = Tensor::empty(type, value.shape());
            convert_elements(value.raw_data(), DType::f32, converted.raw_data(), type, 1);
            lowered.attributes.set("value", converted);
        }
        std::vector<TensorType> input_types;
        for (int id : lowered.inputs) {
            TensorType type;  // the kind (tensor, sequence, optional) as the source has it
            if (id >= 0) type = out_->values[id].type;
            type.dtype = id >= 0 ? dtype_[id] : DType::f32;
            type.shape = std::nullopt;
            input_types.push_back(type);
        }
        const std::vector<const Tensor*> no_values(lowered.inputs.size(), nullptr);
        const InferenceContext ctx(lowered, input_types, no_values);
        for (size_t i = 0; i < lowered.outputs.size(); ++i) dtype_[lowered.outputs[i]] = schema->output_dtype(ctx, i);
        // A Cast the lowering made a no-op (the model's own casts to f32 around values that are
        // now f16, or a key/value cache kept in f16 that the f32 graph cast) is dropped, its
        // readers reading its input: otherwise every run copies the whole value.
        const int result = lowered.outputs[0];
        if (node.id == cast_ && dtype_[lowered.inputs[0]] == dtype_[result] &&
            std::find(src_.outputs.begin(), src_.outputs.end(), result) == src_.outputs.end()) {
            forwarded_[result] = lowered.inputs[0];
            return;
        }
        out_->nodes.push_back(std::move(lowered));
    }

    const GraphIR& src_;
    DType low_;
    const std::set<std::string>& keep_f32_;
    std::shared_ptr<GraphIR> out_;
    std::vector<DType> dtype_;  // the type each value has in the lowered graph
    std::map<std::pair<int, DType>, int> casts_;
    std::vector<std::pair<Tensor, Tensor>> conversions_;  // (constant, its converted copy to fill)
    mutable std::map<int, bool> f16_holds_;  // f16_can_hold per constant, scanned once
    std::map<int, int> forwarded_;  // outputs of dropped no-op Casts → the values they cast
    const OpId cast_ = op_id("Cast");
};

}  // namespace

std::shared_ptr<GraphIR> lower_precision(const GraphIR& graph, DType low, const std::set<std::string>& keep_f32) {
    if (low != DType::f16 && low != DType::bf16)
        throw InvalidArgument("lower_precision: target must be f16 or bf16");
    return Lowering(graph, low, keep_f32).run();
}

std::set<std::string> nodes_from(const GraphIR& graph, const std::set<std::string>& names) {
    std::set<std::string> reached;
    std::vector<bool> tainted(graph.values.size(), false);
    for (const NodeIR& node : graph.nodes) {
        bool hit = names.count(node.name) != 0;
        for (int id : node.inputs) hit = hit || (id >= 0 && tainted[id]);
        if (!hit) continue;
        reached.insert(node.name);
        for (int id : node.outputs) tainted[id] = true;
    }
    return reached;
}

void lower_precision_pass(Rewriter& rewriter, const PassContext& context) {
    const DType low = context.activation_dtype();
    if (low == DType::f32) return;
    rewriter.replace_graph(lower_precision(rewriter.graph(), low, context.keep_f32));
}

}  // namespace infer::detail
