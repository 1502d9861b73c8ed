// Matrix products on cuda: TF32 only when the session allows it (and then within TF32's error),
// and Gemm with a bias row, which runs as one cuBLASLt call with the bias epilogue, against the
// CPU in f32, f16 and bf16 with transposes, alpha and the [n] and [1, n] bias shapes.
#include "test_util.hpp"

#include <infer/infer.hpp>

#include <catch2/catch.hpp>

using namespace infer;
using cuda_test::random_values;
using cuda_test::relative_error;

namespace {

// C = A·B in float64 for row-major A [m, k] and B [k, n].
std::vector<float> matmul_f64(const std::vector<float>& a, const std::vector<float>& b, int64_t m,
                              int64_t k, int64_t n) {
    std::vector<double> c(static_cast<size_t>(m * n), 0.0);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p) {
            const double aip = a[static_cast<size_t>(i * k + p)];
            for (int64_t j = 0; j < n; ++j)
                c[static_cast<size_t>(i * n + j)] += aip * b[static_cast<size_t>(p * n + j)];
        }
    return {c.begin(), c.end()};
}

Session cuda_session(const Graph& graph, bool allow_tf32) {
    SessionOptions options;
    options.device = Device::CUDA;
    options.strict = true;
    options.allow_tf32 = allow_tf32;
    return Session(graph, options);
}

struct GemmSpec {
    int64_t m, k, n;
    bool trans_a, trans_b;
    float alpha;
    Shape bias;       // [n] or [1, n]
    bool bias_input;  // a graph input, else a constant (a layer's weights)
};

// Gemm(A, B, C) with beta = 1 computed in `type`, on cuda against the CPU (both from f32 inputs).
double gemm_with_bias(const GemmSpec& g, DType type, bool allow_tf32 = false) {
    const Shape sa = g.trans_a ? Shape{g.k, g.m} : Shape{g.m, g.k};
    const Shape sb = g.trans_b ? Shape{g.n, g.k} : Shape{g.k, g.n};
    GraphBuilder b("gemm_bias");
    const Value a = b.input("a", DType::f32, sa);
    const Value w = b.constant(Tensor::from_vector(random_values(static_cast<size_t>(sb.numel()), 11), sb));
    const std::vector<float> bias_values = random_values(static_cast<size_t>(g.n), 12, 0.5f, 2.0f);
    const Value c = g.bias_input ? b.input("c", DType::f32, g.bias)
                                 : b.constant(Tensor::from_vector(bias_values, g.bias));
    const Value y = b.op1("Gemm", {b.cast(a, type), b.cast(w, type), b.cast(c, type)},
                          {{"transA", int64_t{g.trans_a}}, {"transB", int64_t{g.trans_b}},
                           {"alpha", g.alpha}, {"beta", 1.0f}});
    b.output("y", b.cast(y, DType::f32));
    const Graph graph = b.build();
    Batch batch;
    batch.set("a", Tensor::from_vector(random_values(static_cast<size_t>(sa.numel()), 10), sa));
    if (g.bias_input) batch.set("c", Tensor::from_vector(bias_values, g.bias));
    const Tensor expected = Session(graph, {Device::CPU}).run(batch)["y"];
    const Tensor actual = cuda_session(graph, allow_tf32).run(batch)["y"];
    CHECK(actual.device() == Device::CUDA);
    REQUIRE(actual.shape() == Shape{g.m, g.n});
    return relative_error(actual.to_vector<float>(), expected.to_vector<float>());
}

}  // namespace

TEST_CASE("f32 MatMul uses TF32 only when the session allows it", "[cuda][gemm][tf32]") {
    constexpr int64_t n = 512;
    const Shape shape{n, n};
    GraphBuilder b("matmul");
    b.output("y", b.matmul(b.input("a", DType::f32, shape), b.input("b", DType::f32, shape)));
    const Graph graph = b.build();
    const std::vector<float> a = random_values(static_cast<size_t>(n * n), 1);
    const std::vector<float> w = random_values(static_cast<size_t>(n * n), 2);
    Batch batch;
    batch.set("a", Tensor::from_vector(a, shape));
    batch.set("b", Tensor::from_vector(w, shape));
    const std::vector<float> reference = matmul_f64(a, w, n, n, n);

    const double f32_error =
        relative_error(cuda_session(graph, false).run(batch)["y"].to_vector<float>(), reference);
    const double tf32_error =
        relative_error(cuda_session(graph, true).run(batch)["y"].to_vector<float>(), reference);
    INFO("relative error without TF32 " << f32_error << ", with TF32 " << tf32_error);
    // f32: a 512-term dot product in another order than float64, ~1e-7 relative.
    CHECK(f32_error < 1e-5);
    // TF32 rounds inputs to 11 significant bits (2^-11 ≈ 5e-4 each): ~1e-3 relative, never 1e-2.
    CHECK(tf32_error < 1e-2);
    // The option must reach cuBLAS: with TF32 the error is that of 11-bit inputs, not of f32.
    CHECK(tf32_error > 10 * f32_error);
}

TEST_CASE("Gemm with a bias row matches the CPU", "[cuda][gemm]") {
    const std::vector<GemmSpec> specs{
        {64, 96, 80, false, false, 1.0f, Shape{80}, true},
        {64, 96, 80, true, false, 0.5f, Shape{1, 80}, true},
        {33, 17, 45, false, true, 2.0f, Shape{45}, false},
        {33, 17, 45, true, true, -1.5f, Shape{1, 45}, false},
        {1, 128, 256, false, true, 1.0f, Shape{256}, false},  // one row: a single embedding
        {300, 64, 1, false, false, 1.0f, Shape{1}, true},     // one column
    };
    for (const GemmSpec& g : specs) {
        INFO("m " << g.m << " k " << g.k << " n " << g.n << " transA " << g.trans_a << " transB "
                  << g.trans_b << " alpha " << g.alpha << " C " << g.bias.to_string());
        CHECK(gemm_with_bias(g, DType::f32) < 1e-5);
        CHECK(gemm_with_bias(g, DType::f16) < 1e-2);
        CHECK(gemm_with_bias(g, DType::bf16) < 2e-2);
    }
}

TEST_CASE("Gemm with a bias row honours allow_tf32", "[cuda][gemm][tf32]") {
    const GemmSpec g{256, 384, 320, false, true, 1.0f, Shape{320}, false};
    const double f32_error = gemm_with_bias(g, DType::f32, false);
    const double tf32_error = gemm_with_bias(g, DType::f32, true);
    INFO("relative error without TF32 " << f32_error << ", with TF32 " << tf32_error);
    CHECK(f32_error < 1e-5);
    CHECK(tf32_error < 1e-2);
    CHECK(tf32_error > 10 * f32_error);
}

TEST_CASE("Gemm shapes the bias epilogue does not cover still match the CPU", "[cuda][gemm]") {
    // beta != 1, a per-row C, a full C: the cuBLAS path with C broadcast into Y first.
    struct Case {
        Shape c;
        float beta;
    };
    for (const Case& other : {Case{{40}, 0.5f}, Case{{24, 1}, 1.0f}, Case{{24, 40}, 1.0f}}) {
        INFO("C " << other.c.to_string() << " beta " << other.beta);
        GraphBuilder b("gemm_other");
        const Value a = b.input("a", DType::f32, {24, 16});
        const Value w = b.input("w", DType::f32, {16, 40});
        const Value c = b.input("c", DType::f32, other.c);
        b.output("y", b.op1("Gemm", {a, w, c}, {{"beta", other.beta}}));
        const Graph graph = b.build();
        Batch batch;
        batch.set("a", Tensor::from_vector(random_values(24 * 16, 21), {24, 16}));
        batch.set("w", Tensor::from_vector(random_values(16 * 40, 22), {16, 40}));
        batch.set("c", Tensor::from_vector(random_values(static_cast<size_t>(other.c.numel()), 23), other.c));
        const Tensor expected = Session(graph, {Device::CPU}).run(batch)["y"];
        const Tensor actual = cuda_session(graph, false).run(batch)["y"];
        CHECK(relative_error(actual.to_vector<float>(), expected.to_vector<float>()) < 1e-5);
    }
}

TEST_CASE("precision int8 on cuda quantizes as the CPU does, from f16 activations, dynamic and calibrated", "[cuda][gemm][int8]") {
    // Two products by constant weights (K and N not multiples of 16), the first with a bias and
    // GELU, the second with a bias and ReLU: each becomes a QuantizedMatMul.
    GraphBuilder b("int8_mlp");
    const Value x = b.input("x", DType::f32, {kDynamic, 37, 96});
    const auto constant = [&](Shape shape, uint32_t seed, float scale) {
        std::vector<float> v = random_values(static_cast<size_t>(shape.numel()), seed);
        for (float& e : v) e *= scale;
        return b.constant(Tensor::from_vector(v, shape));
    };
    const Value h = b.gelu(b.add(b.matmul(x, constant({96, 200}, 31, 0.2f)), constant({200}, 32, 0.5f)));
    b.output("y", b.relu(b.add(b.matmul(h, constant({200, 61}, 33, 0.2f)), constant({61}, 34, 0.5f))));
    const Graph graph = b.build();
    const Shape shape{3, 37, 96};
    Batch batch;
    batch.set("x", Tensor::from_vector(random_values(static_cast<size_t>(shape.numel()), 35, 0.1f, 2.0f), shape));

    const auto run = [&](Device device, std::shared_ptr<Calibration> calibration) {
        SessionOptions options{.device = device, .precision = Precision::int8};
        options.strict = device == Device::CUDA;
        options.calibration = std::move(calibration);
        const Session session(graph, options);
        std::vector<float> y = session.run(batch)["y"].to_vector<float>();
        int quantized = 0;  // (the placement is that of the plan the run made)
        for (const PlacementEntry& e : session.placement().nodes)
            if (e.op == "QuantizedMatMul") {
                ++quantized;
                CHECK(e.device == device);
            }
        CHECK(quantized == 2);
        // On CUDA the activations between the products are f16 (PassContext::activation_dtype):
        // casts at the graph's edges; the CPU's int8 session stays f32 throughout.
        const auto histogram = session.op_histogram();
        CHECK(histogram.count("Cast") == (device == Device::CUDA ? 1u : 0u));
        return y;
    };
    const std::vector<float> exact = Session(graph, {Device::CPU}).run(batch)["y"].to_vector<float>();
    const std::vector<float> cpu = run(Device::CPU, nullptr), gpu = run(Device::CUDA, nullptr);
    // The same quantization on both, from f16 activations on CUDA: their rounding (2^-11) and
    // the quantization steps it moves make the difference.
    CHECK(relative_error(gpu, cpu) < 1e-2);
    CHECK(relative_error(gpu, exact) < 5e-2);

    const auto calibration = std::make_shared<Calibration>(calibrate(graph, {batch}));
    const std::vector<float> cpu_static = run(Device::CPU, calibration), gpu_static = run(Device::CUDA, calibration);
    CHECK(relative_error(gpu_static, cpu_static) < 1e-2);
    CHECK(relative_error(gpu_static, exact) < 5e-2);
    CHECK(gpu_static != gpu);  // the calibrated range is not each row's own
}
