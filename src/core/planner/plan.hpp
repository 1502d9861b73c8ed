#pragma once
// A Plan is what a Session runs for one set of input shapes, dtypes and devices: a linear list
// of steps (kernels and copies) over numbered tensor slots, with every intermediate tensor
// given an offset in a per-device arena.
#include "core/ir/graph_ir.hpp"
#include "core/planner/value_structures.hpp"

#include <infer/backend.hpp>
#include <infer/memory.hpp>
#include <infer/session.hpp>

#include <deque>
#include <map>
#include <tuple>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

namespace infer::detail {

// Where a slot's tensor comes from at run time.
enum class SlotKind {
    constant,  // a weight or a value folded at plan time; bound once
    input,     // the caller's tensor for a graph input
    arena,     // an intermediate, a view into the device's arena
    output,    // a graph output: the caller's tensor when bound, else freshly allocated each run
    alias,     // the memory of slot `alias_of` under this slot's shape: a view op's output, or
               // an output computed in place over an input that dies at that step
};

struct Slot {
    SlotKind kind;
    DType dtype;
    Shape shape;
    Device device;
    Tensor constant;          // kind == constant
    size_t graph_input = 0;   // kind == input
    size_t arena_offset = 0;  // kind == arena
    int alias_of = -1;        // kind == alias: the slot whose memory this one shares
    size_t bytes() const { return static_cast<size_t>(shape.numel()) * dtype_size(dtype); }
};

struct KernelStep {
    NodeSignature signature;
    std::shared_ptr<Backend> backend;
    std::shared_ptr<const CompiledKernel> kernel;
    Device device;
    std::vector<int> inputs;   // slot ids, -1 for an absent optional input
    std::vector<int> outputs;  // slot ids
    uint8_t in_place_inputs = 0;  // OpTraits::in_place: inputs output 0 may overwrite
};

struct CopyStep {
    int source;
    int target;
};

using Step = std::variant<KernelStep, CopyStep>;

// Kernel steps [first, last) of a plan that their backend runs as one unit (segments.cpp).
struct PlanSegment {
    size_t first = 0, last = 0;
    std::shared_ptr<const CompiledSegment> segment;
};

struct Plan {
    std::vector<Slot> slots;
    std::vector<Step> steps;
    std::vector<PlanSegment> segments;     // in step order, not overlapping
    std::vector<Device> devices;           // every device the plan touches
    std::vector<size_t> arena_bytes;       // per entry of `devices`
    // Per tensor of the flat lists of inputs and outputs: a graph input or output that is a
    // sequence takes one place per element, an absent optional none (output_structure).
    std::vector<int> output_slots;
    std::vector<int> input_slots;
    std::vector<int> output_structure;     // per graph output: kTensorEntry, kAbsentEntry or a length
    PlacementReport report;
    MemoryEstimate memory;                 // on the requested device
    std::shared_ptr<const GraphIR> graph;  // what it was made from: steps point into its nodes
    // Branches and loop bodies planned inline (value_structures.cpp), and their nodes as this
    // plan numbers their values: steps point into those too.
    std::vector<std::shared_ptr<const GraphIR>> inlined_graphs;
    std::deque<NodeIR> inlined_nodes;

    size_t device_slot(const Device& device) const;  // index into `devices`
    // The slot that owns the memory `slot` uses: itself, or what its aliases lead to.
    int storage_of(int slot) const;
};

// Tensors of constants uploaded to devices, and the forms kernels prepacked them into, shared
// by all the plans of a session so weights move and convert once per session and device. The
// uploads are shared across sessions too (core/shared_weights.hpp) while one of them lives.
class WeightCache {
public:
    Tensor on_device(int value_id, const Tensor& host, const Device& device);
    bool contains(int value_id, const Device& device);
    // The prepacked form `layout` of constant `value_id` for `device`, made by `make` on first
    // use; `made` is set when this call made it.
    Tensor prepacked(int value_id, const Device& device, const std::string& layout,
                     const CompileContext::Prepack& make, const Tensor& host, bool& made);
    // Bytes of every prepacked tensor on `device`.
    uint64_t prepacked_bytes(const Device& device);

private:
    std::mutex mutex_;
    std::map<std::pair<int, std::string>, Tensor> tensors_;
    std::map<std::tuple<int, std::string, std::string>, Tensor> prepacked_;
};

// What a plan is made for: the dtype, shape and device of each input tensor, and the values of
// the inputs whose values decide shapes (a target shape or axes fed as a graph input). The
// tensors are the graph inputs in order, a sequence input giving its elements in its place
// (`structure` says how many; empty when every input is a tensor).
struct InputSignature {
    std::vector<DType> dtypes;
    std::vector<Shape> shapes;
    std::vector<Device> devices;
    std::vector<Tensor> values;  // per tensor; undefined unless it decides shapes
    std::vector<int> structure;  // per graph input: kTensorEntry, kAbsentEntry or a length
    std::string key() const;
};

// Which graph inputs' values decide shapes: those that reach an op's host input (axes, target
// shapes, slice bounds) through nodes other than Shape, which reads only shapes. An If's
// condition and a Loop's trip count count only where the node's outputs have no static shape
// without them (OpTraits::host_inputs_choose_work).
std::vector<bool> shape_deciding_inputs(const GraphIR& graph);

// With `estimate_only`, the plan is made up to its memory estimate and nothing is uploaded: it
// must not be run. Otherwise constants are uploaded last, after the estimate says they fit
// (OutOfMemory with the estimate when not).
// The plan keeps `graph` alive: its steps point into the graph's nodes, and a session may
// replace the graph it plans from while an older plan still runs.
std::shared_ptr<const Plan> make_plan(std::shared_ptr<const GraphIR> graph, const InputSignature& inputs,
                                      const SessionOptions& options, WeightCache& weights,
                                      bool estimate_only = false);

// Offers each backend the maximal runs of consecutive kernel steps on one of its devices and
// records the segments it claims in Plan::segments.
void claim_segments(Plan& plan, const SessionOptions& options);

// Turns outputs of ops that may run in place into aliases of an input that dies at that step,
// then gives each arena slot an offset so that slots alive at the same step (through any of
// their aliases) never overlap; fills Slot::arena_offset and Plan::arena_bytes.
void plan_memory(Plan& plan);

}  // namespace infer::detail
