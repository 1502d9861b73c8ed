// A backend of your own, written against <infer/backend.hpp> alone, exactly as the CPU and CUDA
// backends are. The "toy" device keeps tensors in host memory it allocates itself and has two
// kernels of its own (Add and Relu in f32); everything else it is given falls back to the CPU,
// with copies inserted at the boundaries. Strict mode turns that fallback into an error.
#include <infer/backend.hpp>
#include <infer/infer.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <vector>

namespace {

std::atomic<int> toy_kernel_calls{0};

// The planner hands kernels dense tensors; say so loudly if that ever changes rather than
// read the wrong elements.
const float* dense_input(const infer::KernelContext& ctx, size_t i) {
    const infer::Tensor& t = ctx.input(i);
    if (!t.is_contiguous()) throw infer::Unsupported("toy: " + ctx.node_name() + ": strided input");
    return t.data<float>();
}

void add_f32(infer::KernelContext& ctx) {
    const float* a = dense_input(ctx, 0);
    const float* b = dense_input(ctx, 1);
    float* out = ctx.output(0).data<float>();  // allocated by infer, with the inferred shape
    for (int64_t i = 0, n = ctx.output(0).numel(); i < n; ++i) out[i] = a[i] + b[i];
    ++toy_kernel_calls;
}

void relu_f32(infer::KernelContext& ctx) {
    const float* x = dense_input(ctx, 0);
    float* out = ctx.output(0).data<float>();
    for (int64_t i = 0, n = ctx.output(0).numel(); i < n; ++i) out[i] = std::max(x[i], 0.0f);
    ++toy_kernel_calls;
}

class ToyBackend final : public infer::Backend {
public:
    ToyBackend() {
        // Kernels are keyed by op name and the dtype of the op's main input.
        kernels().add("Add", infer::DType::f32, add_f32);
        kernels().add("Relu", infer::DType::f32, relu_f32);
    }

    std::string name() const override { return "toy"; }

    infer::DeviceProperties properties(int) const override {
        infer::DeviceProperties properties;
        properties.name = "toy accelerator (host memory)";
        properties.cores = 1;
        properties.host_accessible = true;
        return properties;
    }

    std::shared_ptr<infer::Buffer> allocate(size_t bytes, int index) override {
        // aligned_alloc wants a size that is a multiple of the alignment, and never zero.
        const size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
        void* data = std::aligned_alloc(64, rounded);
        if (data == nullptr)
            throw infer::OutOfMemory("toy: cannot allocate " + std::to_string(bytes) + " bytes");
        // host_accessible: infer (and the default memcpy copies) may read these buffers directly.
        return std::make_shared<infer::Buffer>(data, bytes, infer::Device("toy", index),
                                               [](void* p) { std::free(p); },
                                               infer::Buffer::Flags{.host_accessible = true});
    }

    // The toy Add does not broadcast, so it declines a broadcasting Add; the default check
    // (a kernel is registered for the op and dtype) decides the rest.
    bool supports(const infer::NodeSignature& node) const override {
        if (node.op == "Add" && !(node.input_shapes.at(0) == node.input_shapes.at(1))) return false;
        return Backend::supports(node);
    }
};

infer::Tensor random_tensor(std::mt19937& rng, const infer::Shape& shape) {
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    std::vector<float> values(static_cast<size_t>(shape.numel()));
    for (float& v : values) v = uniform(rng);
    return infer::Tensor::from_vector(values, shape);
}

// relu(relu(x + y) @ w + bias): the toy runs both Relus and the first Add; MatMul (no kernel)
// and the broadcasting Add (declined) fall back to the CPU.
infer::Graph build_graph(std::mt19937& rng) {
    infer::GraphBuilder b("toy_demo");
    auto x = b.input("x", infer::DType::f32, {4, 8});
    auto y = b.input("y", infer::DType::f32, {4, 8});
    auto w = b.constant(random_tensor(rng, {8, 8}), "w");
    auto bias = b.constant(random_tensor(rng, {8}), "bias");
    auto hidden = b.relu(b.add(x, y));
    b.output("out", b.relu(b.add(b.matmul(hidden, w), bias)));
    return b.build();
}

}  // namespace

int main() try {
    infer::set_log_level(infer::LogLevel::info);  // shows the fallback log lines
    infer::register_backend(std::make_shared<ToyBackend>());
    const infer::Device toy("toy");
    std::printf("registered backends:");
    for (const auto& name : infer::registered_backends()) std::printf(" %s", name.c_str());
    std::printf("\ntoy:0 is a '%s'\n", infer::device_properties(toy).name.c_str());

    std::mt19937 rng(7);
    const infer::Graph graph = build_graph(rng);
    const infer::Batch inputs{{"x", random_tensor(rng, {4, 8})}, {"y", random_tensor(rng, {4, 8})}};

    infer::Session session(graph, {.device = toy});
    const infer::Tensor out = session.run(inputs)["out"];
    std::printf("\n%s\n", session.placement().to_string().c_str());
    std::printf("output %s; toy kernels ran %d times\n", out.describe().c_str(),
                toy_kernel_calls.load());

    const std::vector<float> on_toy = out.to_vector<float>();
    const std::vector<float> on_cpu = graph.run(inputs, infer::Device::CPU)["out"].to_vector<float>();
    for (size_t i = 0; i < on_cpu.size(); ++i) {
        if (std::fabs(on_toy[i] - on_cpu[i]) > 1e-5f * (1.0f + std::fabs(on_cpu[i]))) {
            std::fprintf(stderr, "element %zu: toy %g, cpu %g\n", i, on_toy[i], on_cpu[i]);
            return 1;
        }
    }
    std::printf("matches the CPU result (%zu elements)\n\n", on_cpu.size());

    try {
        // With static input shapes the plan, and so the refusal, comes at construction.
        infer::Session strict(graph, {.device = toy, .strict = true});
        strict.run(inputs);
        std::fprintf(stderr, "strict mode ran a graph the toy backend cannot fully run\n");
        return 1;
    } catch (const infer::Unsupported& e) {
        std::printf("strict mode refused, as it should: %s\n", e.what());
    }
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "custom_backend: %s\n", e.what());
    return 1;
}
