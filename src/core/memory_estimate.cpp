// Memory estimates: a plan made up to its memory layout, with nothing uploaded or run.
#include "core/passes/pipeline.hpp"
#include "core/planner/plan.hpp"

#include <infer/error.hpp>
#include <infer/graph.hpp>
#include <infer/memory.hpp>
#include <infer/session.hpp>

#include <cstdio>

namespace infer {

namespace {
std::string mib(uint64_t bytes) {
    char text[32];
    if (bytes >= (uint64_t{10} << 30)) std::snprintf(text, sizeof text, "%.1f GiB", bytes / 1073741824.0);
    else std::snprintf(text, sizeof text, "%.1f MiB", bytes / 1048576.0);
    return text;
}
}  // namespace

std::string MemoryEstimate::to_string() const {
    return device.to_string() + ": weights " + mib(weights_bytes) + " + activations " + mib(activations_bytes) +
           " + workspace " + mib(workspace_bytes) + " = " + mib(total_bytes()) + " of " +
           mib(device_free_bytes) + " free (" + (fits() ? "fits" : "does not fit") + ")";
}

MemoryEstimate estimate_memory(const Graph& graph, const SessionOptions& options,
                               const std::map<std::string, Shape>& input_shapes) {
    const std::vector<bool> shape_deciding = detail::shape_deciding_inputs(graph.ir());
    detail::InputSignature signature;
    for (const auto& [name, shape] : input_shapes) {
        bool known = false;
        for (const TensorInfo& info : graph.inputs()) known = known || info.name == name;
        if (!known) throw InvalidArgument("estimate_memory: graph '" + graph.name() + "' has no input named '" + name + "'");
    }
    for (size_t i = 0; i < graph.inputs().size(); ++i) {
        const TensorInfo& info = graph.inputs()[i];
        if (info.kind != ValueKind::tensor || info.optional)
            throw InvalidArgument("estimate_memory: input '" + info.name +
                                  "' is a sequence or optional value; estimate with a session's plan instead");
        auto it = input_shapes.find(info.name);
        if (it == input_shapes.end())
            throw InvalidArgument("estimate_memory: no shape given for input '" + info.name + "' (" +
                                  info.shape.to_string() + ")");
        if (!it->second.is_static() || !it->second.matches(info.shape))
            throw InvalidArgument("estimate_memory: input '" + info.name + "' given shape " +
                                  it->second.to_string() + ", the graph expects " + info.shape.to_string());
        if (shape_deciding[i])
            throw InvalidArgument("estimate_memory: input '" + info.name +
                                  "' decides shapes by its values; estimate with a session's plan instead");
        signature.dtypes.push_back(info.dtype);
        signature.shapes.push_back(it->second);
        signature.devices.push_back(Device::CPU);
        signature.values.emplace_back();
    }
    backend_for(options.device);  // unknown, unbuilt or absent devices fail here
    const auto planned = detail::run_pipeline(graph.ir(), {*backend_for(options.device), options.precision});
    detail::WeightCache nothing_uploaded;
    return detail::make_plan(planned, signature, options, nothing_uploaded, /*estimate_only=*/true)->memory;
}

}  // namespace infer
