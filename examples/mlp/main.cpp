// A small classifier built in C++ and run in one line: 784 → 256 → ReLU → 10 → Softmax, the
// shape of an MNIST MLP, with random weights (seeded, so every run prints the same numbers).
//
//   mlp [device]     device: cpu (default), cuda, cuda:1, ...
#include <infer/infer.hpp>

#include <cmath>
#include <cstdio>
#include <exception>
#include <random>
#include <vector>

namespace {

constexpr int64_t kInputs = 784, kHidden = 256, kClasses = 10, kBatch = 8;

// Uniform in ±1/sqrt(fan_in), so activations stay in a sensible range through the layers.
infer::Tensor random_tensor(std::mt19937& rng, const infer::Shape& shape, int64_t fan_in) {
    const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
    std::uniform_real_distribution<float> uniform(-bound, bound);
    std::vector<float> values(static_cast<size_t>(shape.numel()));
    for (float& v : values) v = uniform(rng);
    return infer::Tensor::from_vector(values, shape);
}

infer::Graph build_mlp(std::mt19937& rng) {
    infer::GraphBuilder b("mlp");
    // The batch dimension is dynamic: one graph serves any batch size.
    auto x = b.input("pixels", infer::DType::f32, {infer::kDynamic, kInputs});
    auto w1 = b.constant(random_tensor(rng, {kInputs, kHidden}, kInputs), "fc1.weight");
    auto b1 = b.constant(random_tensor(rng, {kHidden}, kInputs), "fc1.bias");
    auto w2 = b.constant(random_tensor(rng, {kHidden, kClasses}, kHidden), "fc2.weight");
    auto b2 = b.constant(random_tensor(rng, {kClasses}, kHidden), "fc2.bias");
    auto hidden = b.relu(b.add(b.matmul(x, w1), b1));
    auto logits = b.add(b.matmul(hidden, w2), b2);
    b.output("probabilities", b.softmax(logits, -1));
    return b.build();
}

}  // namespace

int main(int argc, char** argv) try {
    const infer::Device device = argc > 1 ? infer::Device::parse(argv[1]) : infer::Device::CPU;
    std::mt19937 rng(2024);
    const infer::Graph graph = build_mlp(rng);
    std::printf("graph '%s': %zu nodes, running on %s\n", graph.name().c_str(), graph.node_count(),
                device.to_string().c_str());

    std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
    std::vector<float> pixels(static_cast<size_t>(kBatch * kInputs));
    for (float& v : pixels) v = pixel(rng);
    const infer::Batch inputs{{"pixels", infer::Tensor::from_vector(pixels, {kBatch, kInputs})}};

    const infer::Batch outputs = graph.run(inputs, device);
    const infer::Tensor probabilities = outputs["probabilities"].to(infer::Device::CPU);
    std::printf("output %s\n", probabilities.describe().c_str());

    const float* p = probabilities.data<float>();
    bool rows_sum_to_one = true;
    for (int64_t row = 0; row < kBatch; ++row) {
        const float* r = p + row * kClasses;
        double sum = 0;
        int64_t best = 0;
        for (int64_t c = 0; c < kClasses; ++c) {
            sum += r[c];
            if (r[c] > r[best]) best = c;
        }
        if (row < 3) {
            std::printf("row %lld:", static_cast<long long>(row));
            for (int64_t c = 0; c < kClasses; ++c) std::printf(" %.4f", r[c]);
            std::printf("  → class %lld\n", static_cast<long long>(best));
        }
        if (!(std::fabs(sum - 1.0) < 1e-4)) {
            std::fprintf(stderr, "row %lld sums to %.6f, not 1\n", static_cast<long long>(row), sum);
            rows_sum_to_one = false;
        }
    }
    if (!rows_sum_to_one) return 1;
    std::printf("all %lld rows sum to 1\n", static_cast<long long>(kBatch));
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "mlp: %s\n", e.what());
    return 1;
}
