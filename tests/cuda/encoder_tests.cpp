// A BERT-base-sized encoder (12 layers, hidden 768, 12 heads, FFN 3072, sequence 128) with
// random weights, built with GraphBuilder: the CUDA session in f16 and bf16 must match the CPU
// in f32. Tolerance: ‖cuda − cpu‖ / ‖cpu‖ below 2e-2 (f16) and 5e-2 (bf16) over the final hidden
// states, and every token's cosine above 0.999 (f16) / 0.995 (bf16). Twelve layers of 16-bit
// matrix products with f32 accumulation lose about 1e-3 relative per layer on random weights.
#include "test_util.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <iostream>
#include <tuple>

using namespace infer;

namespace {

constexpr int64_t kLayers = 12, kHidden = 768, kHeads = 12, kHeadDim = 64, kFfn = 3072;
constexpr int64_t kBatch = 2, kSequence = 128;

struct Builder {
    GraphBuilder b{"bert_base_random"};
    uint32_t seed = 1;

    Value weight(std::vector<int64_t> shape, float scale) {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        auto values = cuda_test::random_values(static_cast<size_t>(n), seed++, 0.0f, scale);
        return b.constant(Tensor::from_vector(values, Shape(shape)));
    }
    Value ones(int64_t n) { return b.constant(Tensor::from_vector(std::vector<float>(n, 1.0f), {n})); }
    Value zeros(int64_t n) { return b.constant(Tensor::from_vector(std::vector<float>(n, 0.0f), {n})); }
    // x @ W + bias, with the scale of Xavier initialization.
    Value linear(Value x, int64_t in, int64_t out) {
        const float scale = std::sqrt(3.0f / float(in));
        return b.add(b.matmul(x, weight({in, out}, scale)), weight({out}, 0.02f));
    }
    Value heads(Value x) {  // [B, S, H] → [B, heads, S, head_dim]
        return b.transpose(b.reshape(x, {kBatch, kSequence, kHeads, kHeadDim}), {0, 2, 1, 3});
    }
    Value layer(Value x) {
        Value q = heads(linear(x, kHidden, kHidden));
        Value k = heads(linear(x, kHidden, kHidden));
        Value v = heads(linear(x, kHidden, kHidden));
        Value scores = b.div(b.matmul(q, b.transpose(k, {0, 1, 3, 2})),
                             b.constant(Tensor::from_vector(std::vector<float>{8.0f}, Shape{})));
        Value context = b.matmul(b.softmax(scores, -1), v);
        context = b.reshape(b.transpose(context, {0, 2, 1, 3}), {kBatch, kSequence, kHidden});
        Value attended = b.layer_norm(b.add(x, linear(context, kHidden, kHidden)), ones(kHidden), zeros(kHidden),
                                      -1, 1e-12f);
        Value ffn = linear(b.gelu(linear(attended, kHidden, kFfn)), kFfn, kHidden);
        return b.layer_norm(b.add(attended, ffn), ones(kHidden), zeros(kHidden), -1, 1e-12f);
    }
};

}  // namespace

TEST_CASE("a BERT-base-sized encoder on cuda in f16 and bf16 matches the CPU in f32", "[encoder]") {
    Builder builder;
    Value h = builder.b.input("hidden", DType::f32, {kBatch, kSequence, kHidden});
    for (int64_t l = 0; l < kLayers; ++l) h = builder.layer(h);
    builder.b.output("out", h);
    const Graph graph = builder.b.build();

    const auto input = cuda_test::random_values(size_t(kBatch * kSequence * kHidden), 99);
    const Batch batch{{"hidden", Tensor::from_vector(input, {kBatch, kSequence, kHidden})}};
    const std::vector<float> reference = Session(graph).run(batch)["out"].to_vector<float>();

    for (auto [precision, max_relative, min_cosine] :
         {std::tuple{Precision::f16, 2e-2, 0.999}, std::tuple{Precision::bf16, 5e-2, 0.995}}) {
        Session session(graph, {.device = Device::CUDA, .precision = precision, .strict = true});
        const std::vector<float> got = session.run(batch)["out"].to_vector<float>();
        const double relative = cuda_test::relative_error(got, reference);
        double worst_cosine = 1.0;
        for (int64_t t = 0; t < kBatch * kSequence; ++t) {
            double dot = 0, na = 0, nb = 0;
            for (int64_t i = 0; i < kHidden; ++i) {
                const double a = got[t * kHidden + i], r = reference[t * kHidden + i];
                dot += a * r;
                na += a * a;
                nb += r * r;
            }
            worst_cosine = std::min(worst_cosine, dot / std::sqrt(na * nb));
        }
        std::cout << "encoder " << precision_name(precision) << " on cuda vs cpu f32: relative error "
                  << relative << ", least token cosine " << worst_cosine << "\n";
        CHECK(relative < max_relative);
        CHECK(worst_cosine > min_cosine);
    }
}
