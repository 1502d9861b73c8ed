// Making a plan for one input signature:
//  1. shape inference with concrete shapes, folding every node whose inputs are known on the
//     host (constants, Shape of a tensor whose shape is known, and whatever follows from them:
//     the Shape → Gather → Concat → Reshape chains exporters emit collapse here);
//  2. placement of the remaining nodes on the requested device, or the CPU where it has no
//     kernel (logged, reported, or an error in strict mode);
//  3. slots for every tensor, copies where a tensor crosses devices, weights uploaded once;
//  4. the arena layout (memory_plan.cpp);
//  5. segments: runs of nodes a backend claims to run as one unit (segments.cpp).
#include "core/backend_registry.hpp"
#include "core/log.hpp"
#include "core/ops/op_schema.hpp"
#include "core/planner/plan.hpp"
#include "core/shared_weights.hpp"

#include <infer/error.hpp>

#include <algorithm>
#include <chrono>
#include <deque>
#include <tuple>

namespace infer::detail {

size_t Plan::device_slot(const Device& device) const {
    auto it = std::find(devices.begin(), devices.end(), device);
    return static_cast<size_t>(it - devices.begin());
}

int Plan::storage_of(int slot) const {
    while (slots[slot].kind == SlotKind::alias) slot = slots[slot].alias_of;
    return slot;
}

Tensor WeightCache::on_device(int value_id, const Tensor& host, const Device& device) {
    std::lock_guard lock(mutex_);
    Tensor& cached = tensors_[{value_id, device.to_string()}];
    // Uploaded once per session, and not again while another session of the graph holds it.
    if (!cached.defined()) cached = SharedWeights::find_or_make(host, device.to_string(), [&] { return host.to(device); });
    return cached;
}

bool WeightCache::contains(int value_id, const Device& device) {
    std::lock_guard lock(mutex_);
    auto it = tensors_.find({value_id, device.to_string()});
    return it != tensors_.end() && it->second.defined();
}

Tensor WeightCache::prepacked(int value_id, const Device& device, const std::string& layout,
                              const CompileContext::Prepack& make, const Tensor& host, bool& made) {
    std::lock_guard lock(mutex_);
    Tensor& cached = prepacked_[{value_id, device.to_string(), layout}];
    made = !cached.defined();
    if (made) cached = make(host);
    return cached;
}

uint64_t WeightCache::prepacked_bytes(const Device& device) {
    std::lock_guard lock(mutex_);
    uint64_t bytes = 0;
    for (const auto& [key, tensor] : prepacked_)
        if (std::get<1>(key) == device.to_string()) bytes += tensor.nbytes();
    return bytes;
}

std::string InputSignature::key() const {
    std::string key;
    for (size_t i = 0; i < dtypes.size(); ++i) {
        key += std::string(dtype_name(dtypes[i])) + shapes[i].to_string() + "@" + devices[i].to_string();
        if (i < values.size() && values[i].defined())
            for (double v : values[i].to_vector<double>()) key += "," + std::to_string(v);
        key += ";";
    }
    for (int entry : structure) key += "|" + std::to_string(entry);
    return key;
}

std::vector<bool> shape_deciding_inputs(const GraphIR& graph) {
    std::vector<bool> needed(graph.values.size(), false);
    for (auto node = graph.nodes.rbegin(); node != graph.nodes.rend(); ++node) {
        const OpSchema& schema = op_schema(node->id);
        bool outputs_needed = false;
        for (int id : node->outputs) outputs_needed = outputs_needed || needed[id];
        bool host_decides = true;
        if (schema.traits.host_inputs_choose_work)
            host_decides = std::any_of(node->outputs.begin(), node->outputs.end(), [&](int id) {
                const TensorType& type = graph.values[id].type;
                return !type.is_plain_tensor() || !type.shape || !type.shape->is_static();
            });
        for (size_t i = 0; i < node->inputs.size(); ++i) {
            const int id = node->inputs[i];
            if (id >= 0 && ((schema.is_host_input(i) && host_decides) || (outputs_needed && !schema.traits.reads_shape_only)))
                needed[id] = true;
        }
    }
    std::vector<bool> result;
    for (int id : graph.inputs) result.push_back(needed[id]);
    return result;
}

namespace {

// The types validation gave every value; a plan replaces them with its concrete ones as it goes.
std::vector<TensorType> declared_types(const GraphIR& graph) {
    std::vector<TensorType> types;
    for (const ValueIR& value : graph.values) types.push_back(value.type);
    return types;
}

// Debug-level log of how long each phase of planning took.
class PhaseTimer {
public:
    explicit PhaseTimer(bool quiet) : on_(!quiet && logger().should_log(spdlog::level::debug)) {}
    void lap(const char* phase) {
        if (!on_) return;
        const auto now = std::chrono::steady_clock::now();
        logger().debug("planning: {} in {:.1f} ms", phase, std::chrono::duration<double, std::milli>(now - last_).count());
        last_ = now;
        node_last_ = now;
    }
    // Names a node that took 2 ms or more to plan (folding a large constant, prepacking).
    void lap_if_slow(const std::string& node) {
        if (!on_) return;
        const auto now = std::chrono::steady_clock::now();
        const double ms = std::chrono::duration<double, std::milli>(now - node_last_).count();
        if (ms >= 2.0) logger().debug("planning: node '{}' in {:.1f} ms", node, ms);
        node_last_ = now;
    }

private:
    bool on_;
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now(), node_last_ = last_;
};

class Planner final : public StructurePlanner {
public:
    Planner(const GraphIR& graph, const InputSignature& inputs, const SessionOptions& options,
            WeightCache& weights, bool estimate_only)
        : g_(graph), inputs_(inputs), options_(options), weights_(weights), estimate_only_(estimate_only),
          target_(backend_for(options.device)), cpu_(backend_for(Device::CPU)),
          types_(declared_types(graph)), known_(graph.values.size()),
          home_(graph.values.size(), Device::CPU), is_graph_output_(graph.values.size(), false) {
        for (int id : graph.outputs) is_graph_output_[id] = true;
    }

    std::shared_ptr<Plan> run() {
        plan_ = std::make_shared<Plan>();
        plan_->report.requested = options_.device;
        for (const auto& [id, tensor] : g_.constants) {
            types_[id] = {tensor.dtype(), tensor.shape()};
            known_[id] = tensor;
        }
        size_t flat = 0;  // the next entry of the signature's tensors
        for (size_t i = 0; i < g_.inputs.size(); ++i) {
            const int id = g_.inputs[i];
            const TensorType& declared = g_.values[id].type;
            const int entry = i < inputs_.structure.size() ? inputs_.structure[i] : kTensorEntry;
            if (declared.is_plain_tensor()) {
                bind_input(id, flat++);
                continue;
            }
            ValueStructure structure{declared.kind, declared.optional, entry != kAbsentEntry, declared.dtype, {}};
            const int count = entry == kAbsentEntry ? 0 : entry == kTensorEntry ? 1 : entry;
            for (int e = 0; e < count; ++e) {
                const int element = new_value({inputs_.dtypes.at(flat), inputs_.shapes.at(flat)});
                bind_input(element, flat++);
                structure.elements.push_back(element);
            }
            set_structure(id, std::move(structure));
        }
        // Phases timed at debug level: planning is part of a session's cold start.
        PhaseTimer timer(estimate_only_);
        for (const NodeIR& node : g_.nodes) {
            plan_node(node);
            timer.lap_if_slow(node.name);
        }
        timer.lap("nodes placed, folded and compiled");
        bind_outputs();
        collect_devices();
        plan_memory(*plan_);
        if (!estimate_only_) claim_segments(*plan_, options_);
        estimate_memory();
        timer.lap("memory planned");
        if (!estimate_only_) upload_constants();
        timer.lap("constants uploaded");
        return plan_;
    }

private:
    // Graph input tensor `id` as entry `flat` of the signature's tensors.
    void bind_input(int id, size_t flat) {
        types_[id] = {inputs_.dtypes.at(flat), inputs_.shapes.at(flat)};
        if (flat < inputs_.values.size() && inputs_.values[flat].defined()) known_[id] = inputs_.values[flat];
        Slot slot{SlotKind::input, inputs_.dtypes[flat], inputs_.shapes[flat], inputs_.devices.at(flat)};
        slot.graph_input = flat;
        plan_->input_slots.push_back(add_slot(std::move(slot), id));
        home_[id] = inputs_.devices[flat];
    }

    void plan_node(const NodeIR& node) {
        const OpSchema* schema = &op_schema(node.id);
        std::vector<TensorType> in_types;
        std::vector<const Tensor*> in_values;
        bool all_known = true;
        for (int id : node.inputs) {
            in_types.push_back(id >= 0 ? types_[id] : TensorType{});
            in_values.push_back(id >= 0 && known_[id].defined() ? &known_[id] : nullptr);
            if (id >= 0 && !known_[id].defined()) all_known = false;
        }
        std::vector<TensorType> out_types;
        for (int id : node.outputs) out_types.push_back(types_[id]);
        if (is_structural(node, in_types, in_values, out_types)) {
            plan_structural_node(node, *this);
            return;
        }
        InferenceContext ctx(node, in_types, in_values);
        std::vector<Shape> shapes;
        try {
            shapes = schema->infer_shapes(ctx);
        } catch (const ShapeUnknown&) {
            throw Unsupported("node '" + node.name + "' (" + node.op +
                              "): its output shape depends on tensor values computed at run "
                              "time, which infer does not support yet");
        }
        for (const Shape& shape : shapes)
            if (!shape.is_static())
                throw Unsupported("node '" + node.name + "' (" + node.op + "): its output shape " +
                                  shape.to_string() + " depends on tensor values computed at run "
                                  "time, which infer does not support yet");
        std::vector<DType> out_dtypes;
        for (size_t i = 0; i < node.outputs.size(); ++i) {
            out_dtypes.push_back(schema->output_dtype(ctx, i));
            types_[node.outputs[i]] = {out_dtypes[i], shapes[i]};
        }
        NodeSignature signature;
        signature.op = node.op;
        signature.name = node.name;
        signature.kernel_dtype = in_types.at(static_cast<size_t>(schema->kernel_dtype_input)).dtype;
        for (int id : node.inputs) signature.inputs_present.push_back(id >= 0);
        for (const TensorType& t : in_types) {
            signature.input_dtypes.push_back(t.dtype);
            signature.input_shapes.push_back(t.shape.value_or(Shape{}));
        }
        signature.output_dtypes = out_dtypes;
        signature.attributes = &node.attributes;
        signature.allow_tf32 = options_.allow_tf32;
        signature.threads = options_.threads;

        if (schema->traits.reads_shape_only) {
            // The input's shape is known here, its data need not be: the kernel gets a view
            // of the right shape over a single element.
            for (size_t i = 0; i < node.inputs.size(); ++i)
                if (node.inputs[i] >= 0 && !in_values[i]) {
                    shape_only_.push_back(shape_only_view(in_types[i]));
                    in_values[i] = &shape_only_.back();
                }
            all_known = true;
        }
        if (all_known && schema->traits.foldable && cpu_->supports(signature)) {
            fold(node, signature, in_values, shapes, out_dtypes);
            return;
        }
        if (alias_view(node, *schema, shapes[0], out_dtypes[0])) return;
        place(node, *schema, std::move(signature), shapes, out_dtypes);
    }

    static Tensor shape_only_view(const TensorType& type) {
        const Tensor element = Tensor::empty(type.dtype, Shape{1});
        return Tensor(element.buffer(), type.dtype, *type.shape, 0,
                      std::vector<int64_t>(type.shape->rank(), 0));
    }

    void fold(const NodeIR& node, const NodeSignature& signature,
              const std::vector<const Tensor*>& in_values, const std::vector<Shape>& shapes,
              const std::vector<DType>& out_dtypes) {
        std::vector<Tensor> inputs;
        for (const Tensor* t : in_values) inputs.push_back(t ? *t : Tensor());
        std::vector<Tensor> outputs;
        for (size_t i = 0; i < shapes.size(); ++i)
            outputs.push_back(Tensor::empty(out_dtypes[i], shapes[i], Device::CPU));
        std::vector<unsigned char> scratch;
        KernelContext kctx(signature, inputs, outputs, nullptr, Device::CPU, [&](size_t bytes) {
            if (scratch.size() < bytes) scratch.resize(bytes);
            return static_cast<void*>(scratch.data());
        });
        // Folded once: nothing is worth prepacking. The kernel is kept until the next fold
        // replaces it: it holds the CPU's thread pool, which no kernel of a CUDA plan may hold
        // yet, and a pool made and joined for each fold cost 2-5 ms a fold on 16 cores (130 ms
        // of DistilBERT's 48 folds, a third of its CUDA session's start).
        fold_kernel_ = cpu_->compile(CompileContext(signature, Device::CPU, in_values, nullptr));
        fold_kernel_->run(kctx);
        for (size_t i = 0; i < node.outputs.size(); ++i) known_[node.outputs[i]] = outputs[i];
    }

    // A view op's output as an alias of its input's memory: no step, no copy. Graph outputs
    // stay copies, since the caller keeps them while the input's memory is reused.
    bool alias_view(const NodeIR& node, const OpSchema& schema, const Shape& shape, DType dtype) {
        if (schema.traits.view_of < 0 || is_graph_output_[node.outputs[0]]) return false;
        const int input = node.inputs[static_cast<size_t>(schema.traits.view_of)];
        if (input < 0 || known_[input].defined()) return false;
        auto it = slot_of_.find({input, options_.device.to_string()});
        if (it == slot_of_.end()) it = slot_of_.find({input, home_[input].to_string()});
        const int source = it->second;
        const Device device = plan_->slots[source].device;
        Slot slot{SlotKind::alias, dtype, shape, device};
        slot.alias_of = source;
        add_slot(std::move(slot), node.outputs[0]);
        home_[node.outputs[0]] = device;
        plan_->report.nodes.push_back({node.name, node.op, device, ""});
        return true;
    }

    // StructurePlanner (value_structures.hpp)
    const TensorType& type_of(int value) const override { return types_.at(static_cast<size_t>(value)); }
    const Tensor* known(int value) const override {
        return known_.at(static_cast<size_t>(value)).defined() ? &known_[static_cast<size_t>(value)] : nullptr;
    }
    const ValueStructure& structure_of(int value) const override {
        auto it = structures_.find(value);
        if (it == structures_.end())
            throw ModelError("tensor '" + value_name(value) + "' is used as a sequence or optional value");
        return it->second;
    }
    void set_structure(int value, ValueStructure structure) override {
        types_[value] = {structure.dtype, std::nullopt, structure.kind == ValueKind::sequence ? ValueKind::sequence
                                                                                             : ValueKind::tensor,
                         structure.optional};
        if (!structure.optional && structure.kind == ValueKind::tensor)
            throw std::logic_error("a plain tensor is planned as itself, not as a structure");
        structures_[value] = std::move(structure);
    }
    void set_known(int value, Tensor tensor) override {
        types_[value] = {tensor.dtype(), tensor.shape()};
        known_[value] = std::move(tensor);
    }
    void declare(int value, const TensorType& type) override { types_[value] = type; }
    int new_value(const TensorType& type) override {
        types_.push_back(type);
        known_.emplace_back();
        home_.push_back(Device::CPU);
        is_graph_output_.push_back(false);
        return static_cast<int>(types_.size()) - 1;
    }
    void same_as(int value, int source) override {
        types_[value] = types_[source];
        home_[value] = home_[source];
        if (known_[source].defined()) known_[value] = known_[source];
        std::vector<std::pair<std::string, int>> slots;
        for (const auto& [key, slot] : slot_of_)
            if (key.first == source) slots.emplace_back(key.second, slot);
        for (const auto& [device, slot] : slots) slot_of_[{value, device}] = slot;
    }
    int reshaped(int source, const Shape& shape) override {
        const int value = new_value({types_[source].dtype, shape});
        if (known_[source].defined()) {
            known_[value] = known_[source].reshape(shape);
            return value;
        }
        const int from = slot_of_.at({source, home_[source].to_string()});
        Slot slot{SlotKind::alias, types_[source].dtype, shape, plan_->slots[from].device};
        slot.alias_of = from;
        add_slot(std::move(slot), value);
        home_[value] = home_[source];
        return value;
    }
    void place_kernel(const NodeIR& node, const std::string& op, const std::string& name, const std::vector<int>& inputs,
                      const std::vector<int>& outputs) override {
        const OpSchema& schema = op_schema(op_id(op));
        const NodeIR flat{op, name, inputs, outputs, {}, schema.id};
        NodeSignature signature;
        signature.op = op;
        signature.name = name;
        signature.kernel_dtype = types_.at(inputs.at(static_cast<size_t>(schema.kernel_dtype_input))).dtype;
        std::vector<Shape> shapes;
        std::vector<DType> out_dtypes;
        for (int id : inputs) {
            signature.inputs_present.push_back(true);
            signature.input_dtypes.push_back(types_[id].dtype);
            signature.input_shapes.push_back(types_[id].shape.value());
        }
        for (int id : outputs) {
            shapes.push_back(types_[id].shape.value());
            out_dtypes.push_back(types_[id].dtype);
        }
        signature.output_dtypes = out_dtypes;
        signature.attributes = &node.attributes;  // the graph's node outlives the plan's steps
        signature.allow_tf32 = options_.allow_tf32;
        signature.threads = options_.threads;
        place(flat, schema, std::move(signature), shapes, out_dtypes);
    }

    std::vector<int> plan_inline(std::shared_ptr<const GraphIR> graph, const std::vector<int>& inputs,
                                 const std::string& prefix) override {
        if (inputs.size() != graph->inputs.size())
            throw ModelError("subgraph '" + graph->name + "' takes " + std::to_string(graph->inputs.size()) +
                             " inputs, its node gives " + std::to_string(inputs.size()));
        std::vector<int> value_of(graph->values.size(), -1);  // the subgraph's ids → this plan's
        for (size_t i = 0; i < inputs.size(); ++i) value_of[graph->inputs[i]] = inputs[i];
        for (const auto& [id, tensor] : graph->constants) {
            // Every iteration's typed body shares its weights' buffers: one value (one upload
            // per device) for all of them.
            const auto key = std::make_tuple(tensor.raw_data(), tensor.dtype(), tensor.shape().to_string());
            auto same = inlined_constants_.find(key);
            if (same != inlined_constants_.end()) {
                value_of[id] = same->second;
                continue;
            }
            value_of[id] = new_value({tensor.dtype(), tensor.shape()});
            set_known(value_of[id], tensor);
            inlined_constants_.emplace(key, value_of[id]);
        }
        for (const NodeIR& node : graph->nodes) {
            NodeIR copy = node;
            copy.name = prefix + node.name;
            for (int& id : copy.inputs)
                if (id >= 0) id = value_of[id];
            for (int& id : copy.outputs) id = value_of[id] = new_value(graph->values[id].type);
            // Steps point at their node's attributes: the plan keeps the copies.
            plan_->inlined_nodes.push_back(std::move(copy));
            plan_node(plan_->inlined_nodes.back());
        }
        plan_->inlined_graphs.push_back(graph);
        std::vector<int> outputs;
        for (int id : graph->outputs) outputs.push_back(value_of[id]);
        return outputs;
    }

    std::string value_name(int value) const {
        return static_cast<size_t>(value) < g_.values.size() ? g_.values[value].name : "#" + std::to_string(value);
    }

    void place(const NodeIR& node, const OpSchema& schema, NodeSignature signature,
               const std::vector<Shape>& shapes, const std::vector<DType>& out_dtypes) {
        Device device = options_.device;
        std::shared_ptr<Backend> backend = target_;
        std::string reason;
        if (!target_->supports(signature)) {
            reason = target_->kernels().find(node.op, signature.kernel_dtype)
                         ? options_.device.to_string() + " declined this " + node.op + " (" +
                               std::string(dtype_name(signature.kernel_dtype)) + ", these shapes/attributes)"
                         : "no " + node.op + " kernel for " + std::string(dtype_name(signature.kernel_dtype)) +
                               " on " + options_.device.to_string();
            if (options_.strict)
                throw Unsupported("node '" + node.name + "' (" + node.op + ", " +
                                  std::string(dtype_name(signature.kernel_dtype)) + ") cannot run on " +
                                  options_.device.to_string() + ": " + reason +
                                  "; strict mode forbids falling back to the CPU");
            if (!cpu_->supports(signature))
                throw Unsupported("node '" + node.name + "' (" + node.op + "): no backend has a kernel for " +
                                  std::string(dtype_name(signature.kernel_dtype)));
            device = Device::CPU;
            backend = cpu_;
            logger().info("node '{}' ({}) runs on cpu: {}", node.name, node.op, reason);
        }
        KernelStep step;
        step.kernel = compile(node, *backend, signature, device);
        step.backend = backend;
        step.device = device;
        for (size_t i = 0; i < node.inputs.size(); ++i) {
            const int id = node.inputs[i];
            step.inputs.push_back(id < 0 ? -1 : slot_for(id, schema.is_host_input(i) ? Device::CPU : device));
        }
        for (size_t i = 0; i < node.outputs.size(); ++i) {
            const int id = node.outputs[i];
            step.outputs.push_back(add_slot({SlotKind::arena, out_dtypes[i], shapes[i], device}, id));
            home_[id] = device;
        }
        step.in_place_inputs = schema.traits.in_place;
        step.signature = std::move(signature);
        plan_->steps.emplace_back(std::move(step));
        plan_->report.nodes.push_back({node.name, node.op, device, reason});
    }

    std::shared_ptr<const CompiledKernel> compile(const NodeIR& node, const Backend& backend,
                                                  const NodeSignature& signature, const Device& device) {
        std::vector<const Tensor*> constants;
        for (int id : node.inputs) constants.push_back(id >= 0 && known_[id].defined() ? &known_[id] : nullptr);
        // Only the graph's own constants are shared between plans; values folded for this
        // input signature are prepacked for this plan alone.
        const auto prepack = [&](size_t i, const std::string& layout, const CompileContext::Prepack& make) {
            const int id = node.inputs[i];
            if (!g_.constants.count(id)) {
                // Once per plan: the iterations of an inlined loop share their body's weights.
                Tensor& packed = plan_prepacked_[{id, device.to_string(), layout}];
                if (!packed.defined()) {
                    packed = make(known_[id]);
                    if (packed.device() == options_.device) new_prepacked_bytes_ += packed.nbytes();
                }
                return packed;
            }
            bool made = false;
            Tensor packed = weights_.prepacked(id, device, layout, make, known_[id], made);
            if (made && device == options_.device) new_prepacked_bytes_ += packed.nbytes();
            return packed;
        };
        return backend.compile(CompileContext(signature, device, std::move(constants), prepack));
    }

    int add_slot(Slot slot, int value_id) {
        plan_->slots.push_back(std::move(slot));
        const int s = static_cast<int>(plan_->slots.size()) - 1;
        slot_of_[{value_id, plan_->slots[s].device.to_string()}] = s;
        return s;
    }

    // The slot holding value `id` on `device`, adding an upload or a copy step when needed.
    int slot_for(int id, const Device& device) {
        auto it = slot_of_.find({id, device.to_string()});
        if (it != slot_of_.end()) return it->second;
        if (known_[id].defined()) {
            // The host value for now: uploads wait until the memory estimate says they fit.
            Slot slot{SlotKind::constant, known_[id].dtype(), known_[id].shape(), device};
            slot.constant = known_[id];
            const int s = add_slot(std::move(slot), id);
            if (!device.is_cpu()) uploads_.push_back({s, id});
            return s;
        }
        const int source = slot_of_.at({id, home_[id].to_string()});
        const Slot& from = plan_->slots[source];
        const int target = add_slot({SlotKind::arena, from.dtype, from.shape, device}, id);
        plan_->steps.emplace_back(CopyStep{source, target});
        ++plan_->report.copies;
        return target;
    }

    void bind_outputs() {
        for (size_t i = 0; i < g_.outputs.size(); ++i) {
            const int id = g_.outputs[i];
            auto structure = structures_.find(id);
            if (structure == structures_.end()) {
                plan_->output_structure.push_back(kTensorEntry);
                bind_output(id, g_.output_names[i]);
                continue;
            }
            const ValueStructure& s = structure->second;
            plan_->output_structure.push_back(!s.present                      ? kAbsentEntry
                                              : s.kind == ValueKind::sequence ? static_cast<int>(s.elements.size())
                                                                              : kTensorEntry);
            for (size_t e = 0; e < s.elements.size(); ++e)
                bind_output(s.elements[e], g_.output_names[i] + "[" + std::to_string(e) + "]");
        }
    }

    // The slot of graph output tensor `id`: its own arena slot made an output, or, where the
    // tensor is a graph input, a view or another output's (sequence elements can be any of
    // those), a copy into a slot of its own, so the caller never holds memory a later run reuses.
    void bind_output(int id, const std::string& name) {
        if (known_[id].defined()) {
            plan_->output_slots.push_back(slot_for(id, Device::CPU));
            return;
        }
        int s = slot_of_.at({id, home_[id].to_string()});
        const SlotKind kind = plan_->slots[s].kind;
        if (kind == SlotKind::input || kind == SlotKind::alias) {
            static const NodeIR kCopy{"Identity", "", {}, {}, {}, kUnknownOp};  // attributes outlive plans
            const int value = new_value(types_[id]);
            place_kernel(kCopy, "Identity", name, {id}, {value});
            s = slot_of_.at({value, home_[value].to_string()});
        }
        if (plan_->slots[s].kind == SlotKind::arena) plan_->slots[s].kind = SlotKind::output;
        plan_->output_slots.push_back(s);
    }

    // Weights (constant slots), activations (arena, inputs copied in, outputs) and scratch on
    // the requested device, against what it has free.
    void estimate_memory() {
        const Device& device = options_.device;
        MemoryEstimate& m = plan_->memory;
        m.device = device;
        uint64_t new_weights = 0;
        for (const Slot& slot : plan_->slots) {
            if (slot.device != device) continue;
            if (slot.kind == SlotKind::constant) m.weights_bytes += slot.bytes();
            if (slot.kind == SlotKind::output) m.activations_bytes += slot.bytes();
        }
        for (const auto& [s, id] : uploads_)
            if (plan_->slots[s].device == device && !(g_.constants.count(id) && weights_.contains(id, device)))
                new_weights += plan_->slots[s].bytes();
        if (const size_t d = plan_->device_slot(device); d < plan_->arena_bytes.size())
            m.activations_bytes += plan_->arena_bytes[d];
        m.weights_bytes += weights_.prepacked_bytes(device);
        new_weights += new_prepacked_bytes_;
        size_t kernel_scratch = 0;
        for (const Step& step : plan_->steps)
            if (const auto* k = std::get_if<KernelStep>(&step); k && k->device == device)
                kernel_scratch = std::max(kernel_scratch, k->kernel->workspace_bytes());
        m.workspace_bytes = target_->stream_workspace_bytes(device.index) + kernel_scratch;
        const DeviceProperties properties = target_->properties(device.index);
        m.device_total_bytes = properties.total_memory_bytes;
        m.device_free_bytes = properties.free_memory_bytes;
        if (estimate_only_ || properties.host_accessible) return;
        const uint64_t needed = new_weights + m.activations_bytes + m.workspace_bytes;
        if (needed > m.device_free_bytes)
            throw OutOfMemory("the model does not fit " + device.to_string() + " at these input shapes: " +
                              m.to_string() + (new_weights != m.weights_bytes
                                                   ? " (of the weights, " + std::to_string(new_weights) +
                                                         " bytes are not uploaded yet)"
                                                   : ""));
    }

    void upload_constants() {
        for (const auto& [s, id] : uploads_) {
            Slot& slot = plan_->slots[s];
            slot.constant = g_.constants.count(id) ? weights_.on_device(id, known_[id], slot.device)
                                                   : known_[id].to(slot.device);
        }
    }

    void collect_devices() {
        const auto add = [&](const Device& d) {
            if (std::find(plan_->devices.begin(), plan_->devices.end(), d) == plan_->devices.end())
                plan_->devices.push_back(d);
        };
        add(Device::CPU);
        for (const Slot& s : plan_->slots) add(s.device);
    }

    const GraphIR& g_;
    const InputSignature& inputs_;
    const SessionOptions& options_;
    WeightCache& weights_;
    bool estimate_only_;
    std::shared_ptr<Backend> target_, cpu_;
    std::unique_ptr<CompiledKernel> fold_kernel_;  // the last fold's (see fold())
    std::vector<std::pair<int, int>> uploads_;  // (constant slot, value id) bound for accelerators
    uint64_t new_prepacked_bytes_ = 0;  // prepacked by this plan's kernels on the requested device
    std::vector<TensorType> types_;
    std::vector<Tensor> known_;  // host values known at plan time
    std::deque<Tensor> shape_only_;  // stand-ins for inputs whose data shape-reading ops never read
    std::vector<Device> home_;   // where each computed value is produced
    std::vector<bool> is_graph_output_;
    std::map<std::pair<int, std::string>, int> slot_of_;
    std::map<int, ValueStructure> structures_;  // sequence and optional values
    // Constants of inlined branches and bodies by their data, so that each is one value.
    std::map<std::tuple<const void*, DType, std::string>, int> inlined_constants_;
    // Prepacked forms of values that are not the graph's own constants, made once per plan.
    std::map<std::tuple<int, std::string, std::string>, Tensor> plan_prepacked_;
    std::shared_ptr<Plan> plan_;
};

}  // namespace

std::shared_ptr<const Plan> make_plan(std::shared_ptr<const GraphIR> graph, const InputSignature& inputs,
                                      const SessionOptions& options, WeightCache& weights,
                                      bool estimate_only) {
    auto plan = Planner(*graph, inputs, options, weights, estimate_only).run();
    plan->graph = std::move(graph);
    return plan;
}

}  // namespace infer::detail
