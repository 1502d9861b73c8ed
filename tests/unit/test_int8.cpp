// int8 on the CPU: the packed u8×s8 product for every kernel this CPU runs (exact against
// integer sums), MatMulInteger by a constant weight (the packed path) against the plain
// definition, and precision = int8 (QuantizedMatMul) against the same quantization carried out
// here in float and against the f64 product.
#include "backends/cpu/kernels/int8_gemm.hpp"
#include "host_test_backend.hpp"
#include "int8_emulation.hpp"

#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <fstream>
#include <memory>
#include <cmath>
#include <random>
#include <vector>

using namespace infer;
using infer::cpu::Int8Kernel;

namespace {

struct Collect {
    std::vector<int32_t>* y;
    int64_t n;
    static void tile(void* self, int64_t row0, int64_t rows, int64_t col0, int64_t cols, const int32_t* acc, int64_t ld) {
        auto& c = *static_cast<Collect*>(self);
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t j = 0; j < cols; ++j) (*c.y)[(row0 + r) * c.n + col0 + j] = acc[r * ld + j];
    }
};

template <class T>
std::vector<T> random_ints(size_t count, int lo, int hi, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<T> v(count);
    for (T& x : v) x = static_cast<T>(d(rng));
    return v;
}

Tensor random_floats(const Shape& shape, float scale, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> v(static_cast<size_t>(shape.numel()));
    for (float& x : v) x = d(rng);
    return Tensor::from_vector(v, shape);
}

}  // namespace

TEST_CASE("the packed u8 x s8 product is exact for every kernel this CPU runs", "[int8]") {
    for (Int8Kernel kernel : {Int8Kernel::portable, Int8Kernel::avx2, Int8Kernel::avx512_vnni}) {
        if (!cpu::int8_kernel_supported(kernel)) continue;
        for (int64_t m : {1, 5, 7, 13})
            for (int64_t k : {1, 3, 64, 77})
                for (int64_t n : {1, 15, 17, 70, 130}) {
                    INFO(cpu::int8_kernel_name(kernel) << " " << m << "x" << k << "x" << n);
                    const auto layout = cpu::int8_weight_layout(kernel, k, n);
                    // Extreme values included: 255 · (-128) products must not saturate.
                    const auto b = random_ints<int8_t>(static_cast<size_t>(k * n), -128, 127, uint32_t(m * 7 + k * 3 + n));
                    const auto a = random_ints<uint8_t>(static_cast<size_t>(m * k), 0, 255, uint32_t(m + k + n));
                    const Tensor packed = cpu::pack_int8_weight(layout, b.data(), n);
                    const int64_t stride = cpu::int8_row_stride(layout);
                    std::vector<uint8_t> rows(static_cast<size_t>(m * stride), 0);
                    for (int64_t r = 0; r < m; ++r) std::copy_n(a.data() + r * k, k, rows.data() + r * stride);
                    std::vector<int32_t> y(static_cast<size_t>(m * n), -1);
                    Collect collect{&y, n};
                    cpu::gemm_u8s8(layout, packed.data<uint8_t>(), rows.data(), m, &Collect::tile, &collect);
                    bool exact = true;
                    for (int64_t r = 0; r < m; ++r)
                        for (int64_t c = 0; c < n; ++c) {
                            int32_t want = 0;
                            for (int64_t j = 0; j < k; ++j) want += int32_t{a[r * k + j]} * b[j * n + c];
                            exact = exact && y[r * n + c] == want;
                        }
                    CHECK(exact);
                    const int32_t* sums = cpu::packed_column_sums(layout, packed.data<uint8_t>());
                    int32_t first = 0;
                    for (int64_t j = 0; j < k; ++j) first += b[j * n];
                    CHECK(sums[0] == first);
                }
    }
}

TEST_CASE("MatMulInteger by a constant weight (the packed path) matches its definition", "[int8]") {
    struct Spec { DType a_type, b_type; bool per_column; Shape a; int64_t n; };
    for (const Spec& s : {Spec{DType::u8, DType::i8, false, {2, 5, 40}, 33}, Spec{DType::u8, DType::u8, true, {7, 19}, 9},
                          Spec{DType::i8, DType::i8, true, {3, 66}, 70}, Spec{DType::i8, DType::u8, false, {66}, 5}}) {
        const int64_t k = s.a[s.a.rank() - 1];
        INFO(dtype_name(s.a_type) << " x " << dtype_name(s.b_type) << (s.per_column ? " per column " : " ") << s.a.to_string());
        auto range = [](DType t) { return t == DType::u8 ? std::pair{0, 255} : std::pair{-128, 127}; };
        auto tensor = [&](DType t, const Shape& shape, uint32_t seed) {
            const auto [lo, hi] = range(t);
            if (t == DType::u8) return Tensor::from_vector(random_ints<uint8_t>(size_t(shape.numel()), lo, hi, seed), shape);
            return Tensor::from_vector(random_ints<int8_t>(size_t(shape.numel()), lo, hi, seed), shape);
        };
        const Tensor a = tensor(s.a_type, s.a, 1), w = tensor(s.b_type, {k, s.n}, 2);
        const Tensor a_zero = tensor(s.a_type, {}, 3), w_zero = tensor(s.b_type, s.per_column ? Shape{s.n} : Shape{}, 4);
        GraphBuilder b;
        auto x = b.input("a", s.a_type, s.a);
        auto xz = b.input("a_zero", s.a_type, {});
        b.output("y", b.op1("MatMulInteger", {x, b.constant(w), xz, b.constant(w_zero)}));
        Session session(b.build());
        const std::vector<int32_t> got = session.run({{"a", a}, {"a_zero", a_zero}})["y"].to_vector<int32_t>();
        auto value = [](const Tensor& t, int64_t i) -> int64_t {
            return t.dtype() == DType::u8 ? t.data<uint8_t>()[i] : t.data<int8_t>()[i];
        };
        const int64_t rows = s.a.numel() / k;
        REQUIRE(got.size() == size_t(rows * s.n));
        bool exact = true;
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < s.n; ++c) {
                int64_t want = 0;
                for (int64_t j = 0; j < k; ++j)
                    want += (value(a, r * k + j) - value(a_zero, 0)) * (value(w, j * s.n + c) - value(w_zero, s.per_column ? c : 0));
                exact = exact && got[size_t(r * s.n + c)] == want;
            }
        CHECK(exact);
    }
}

// QLinearMatMul by a constant weight runs on the packed kernel; with the weight given as an
// input it runs the plain loops (the op tests' reference checks those). Both must agree to
// the last bit: the same integer sums, the same f64 scaling and rounding.
TEST_CASE("QLinearMatMul by a constant weight (the packed path) matches the plain kernel exactly", "[int8]") {
    struct Spec { DType a_type, b_type; bool per_column; Shape a; int64_t n; };
    // Per tensor only: QLinearMatMul's per-axis form is refused (shapes_neural.cpp).
    for (const Spec& s : {Spec{DType::u8, DType::i8, false, {2, 5, 40}, 33}, Spec{DType::u8, DType::u8, false, {7, 19}, 9},
                          Spec{DType::i8, DType::i8, false, {3, 66}, 70}}) {
        const int64_t k = s.a[s.a.rank() - 1];
        INFO(dtype_name(s.a_type) << " x " << dtype_name(s.b_type) << " " << s.a.to_string());
        auto tensor = [&](DType t, const Shape& shape, uint32_t seed) {
            if (t == DType::u8) return Tensor::from_vector(random_ints<uint8_t>(size_t(shape.numel()), 0, 255, seed), shape);
            return Tensor::from_vector(random_ints<int8_t>(size_t(shape.numel()), -128, 127, seed), shape);
        };
        auto scalar = [](float v) { return Tensor::from_vector(std::vector<float>{v}, Shape(std::vector<int64_t>{})); };
        const Tensor a = tensor(s.a_type, s.a, 1), w = tensor(s.b_type, {k, s.n}, 2);
        const Tensor a_zero = tensor(s.a_type, {}, 3), w_zero = tensor(s.b_type, s.per_column ? Shape{s.n} : Shape{}, 4);
        const Tensor y_zero = tensor(DType::u8, {}, 5);
        const auto graph = [&](bool constant_weight) {
            GraphBuilder b;
            auto x = b.input("a", s.a_type, s.a);
            auto weight = constant_weight ? b.constant(w) : b.input("w", s.b_type, {k, s.n});
            b.output("y", b.op1("QLinearMatMul", {x, b.constant(scalar(0.02f)), b.constant(a_zero), weight,
                                                  b.constant(scalar(0.003f)), b.constant(w_zero), b.constant(scalar(0.9f)),
                                                  b.constant(y_zero)}));
            return b.build();
        };
        const std::vector<uint8_t> packed = Session(graph(true)).run({{"a", a}})["y"].to_vector<uint8_t>();
        const std::vector<uint8_t> plain = Session(graph(false)).run({{"a", a}, {"w", w}})["y"].to_vector<uint8_t>();
        CHECK(packed == plain);
        // Not all saturated: the scales leave most results inside the range.
        CHECK(std::count_if(plain.begin(), plain.end(), [](uint8_t v) { return v > 0 && v < 255; }) > long(plain.size() / 2));
    }
}

namespace {

// QuantizedMatMul's quantization, carried out here in the same f32 steps (quantized_rows.hpp,
// fused_quantized_matmul.cpp), then the exact integer product, dequantized in f64.
std::vector<double> emulate_int8(const Tensor& x, const Tensor& w, const Tensor& bias, bool relu) {
    const int64_t k = w.shape()[0], n = w.shape()[1];
    std::vector<double> y = infer_test::int8_products(x.to_vector<float>(), w.to_vector<float>(), x.numel() / k, k, n);
    const std::vector<float> b = bias.to_vector<float>();
    for (size_t i = 0; i < y.size(); ++i) {
        y[i] += b[i % static_cast<size_t>(n)];
        if (relu) y[i] = std::max(y[i], 0.0);
    }
    return y;
}

}  // namespace

TEST_CASE("precision int8 quantizes products by a weight and matches the quantization done by hand", "[int8]") {
    for (const Shape& shape : {Shape{2, 3, 40}, Shape{1, 130}, Shape{9, 64}}) {
        const int64_t k = shape[shape.rank() - 1], n = 37;
        INFO(shape.to_string() << " x [" << k << "," << n << "]");
        const Tensor w = random_floats({k, n}, 0.5f, 11), bias = random_floats({n}, 1.0f, 12);
        GraphBuilder b;
        auto x = b.input("x", DType::f32, shape);
        b.output("y", b.relu(b.add(b.matmul(x, b.constant(w)), b.constant(bias))));
        const Graph graph = b.build();
        Session quantized(graph, {.precision = Precision::int8});
        CHECK(quantized.op_histogram().count("QuantizedMatMul") == 1);
        Session exact(graph);
        const Tensor input = random_floats(shape, 2.0f, 13);
        const std::vector<float> got = quantized.run({{"x", input}})["y"].to_vector<float>();
        const std::vector<float> f32 = exact.run({{"x", input}})["y"].to_vector<float>();
        const std::vector<double> want = emulate_int8(input, w, bias, true);
        REQUIRE(got.size() == want.size());
        double worst = 0, error = 0, norm = 0;
        for (size_t i = 0; i < got.size(); ++i) {
            worst = std::max(worst, std::fabs(got[i] - want[i]) / (1.0 + std::fabs(want[i])));
            error += (double(got[i]) - f32[i]) * (double(got[i]) - f32[i]);
            norm += double(f32[i]) * f32[i];
        }
        CHECK(worst < 1e-5);
        // And the quantization itself costs about a per cent of the f32 result.
        CHECK(std::sqrt(error / norm) < 3e-2);
    }
}

// Convolutions at precision int8: a 3x3 convolution of 64 channels to 64 becomes an integer one
// (X quantized per run, W per output channel), with its ReLU after it; a depthwise one, one of
// 3 channels and one to 16 channels (the quantization passes would cost more than int8 saves)
// stay float and give exactly the f32 session's values.
TEST_CASE("precision int8 quantizes convolutions of one group and enough channels, and leaves the rest in f32", "[int8]") {
    const Tensor w = random_floats({64, 64, 3, 3}, 0.1f, 31), bias = random_floats({64}, 0.5f, 32);
    const Tensor depthwise = random_floats({64, 1, 3, 3}, 0.3f, 33), narrow = random_floats({4, 3, 1, 1}, 0.3f, 34);
    const Tensor thin = random_floats({16, 64, 1, 1}, 0.1f, 37);
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {2, 64, 9, 7});
    auto colours = b.input("colours", DType::f32, {2, 3, 5, 5});
    const Attributes padded{{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    auto y = b.relu(b.op1("Conv", {x, b.constant(w), b.constant(bias)}, padded));
    Attributes grouped = padded;
    grouped.set("group", int64_t{64});
    b.output("y", y);
    b.output("z", b.op1("Conv", {x, b.constant(depthwise)}, grouped));
    b.output("c", b.op1("Conv", {colours, b.constant(narrow)}));
    b.output("t", b.op1("Conv", {x, b.constant(thin)}));
    const Graph graph = b.build();
    Session quantized(graph, {.precision = Precision::int8});
    const auto ops = quantized.op_histogram();
    CHECK(ops.count("ConvIntegerToFloat") == 1);
    CHECK(ops.count("DynamicQuantizeLinear") == 1);
    Session exact(graph);
    const Batch inputs{{"x", random_floats({2, 64, 9, 7}, 1.5f, 35)}, {"colours", random_floats({2, 3, 5, 5}, 1.0f, 36)}};
    const Batch got = quantized.run(inputs), want = exact.run(inputs);
    double error = 0, norm = 0;
    const std::vector<float> g = got["y"].to_vector<float>(), f = want["y"].to_vector<float>();
    for (size_t i = 0; i < g.size(); ++i) {
        error += (double(g[i]) - f[i]) * (double(g[i]) - f[i]);
        norm += double(f[i]) * f[i];
        CHECK(g[i] >= 0.0f);  // the ReLU after it still applies
    }
    // 8-bit activations and weights: about a per cent of the f32 result, not more.
    CHECK(std::sqrt(error / norm) < 3e-2);
    CHECK(std::sqrt(error / norm) > 0.0);  // it did quantize
    for (const char* name : {"z", "c", "t"}) {
        INFO(name);
        CHECK(got[name].to_vector<float>() == want[name].to_vector<float>());
    }
}

TEST_CASE("precision int8 parses, and leaves products of two computed values in f32", "[int8]") {
    CHECK(parse_precision("int8") == Precision::int8);
    CHECK(precision_name(Precision::int8) == "int8");
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {4, 8});
    auto y = b.input("y", DType::f32, {8, 3});
    b.output("z", b.matmul(x, y));
    Session session(b.build(), {.precision = Precision::int8});
    CHECK(session.op_histogram().count("QuantizedMatMul") == 0);
    const Tensor a = random_floats({4, 8}, 1.0f, 1), c = random_floats({8, 3}, 1.0f, 2);
    const std::vector<float> got = session.run({{"x", a}, {"y", c}})["z"].to_vector<float>();
    for (int64_t r = 0; r < 4; ++r)
        for (int64_t j = 0; j < 3; ++j) {
            double want = 0;
            for (int64_t i = 0; i < 8; ++i) want += double(a.data<float>()[r * 8 + i]) * c.data<float>()[i * 3 + j];
            CHECK(got[size_t(r * 3 + j)] == Approx(want).margin(1e-5));
        }
}

TEST_CASE("static int8: calibrate records each product's input range, and sessions quantize with it", "[int8][calibration]") {
    const int64_t k = 24, n = 10;
    const Tensor w1 = random_floats({k, k}, 0.4f, 21), w2 = random_floats({k, n}, 0.4f, 22), bias = random_floats({k}, 0.5f, 23);
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {kDynamic, k});
    auto hidden = b.relu(b.add(b.matmul(x, b.constant(w1)), b.constant(bias)));
    b.output("y", b.matmul(hidden, b.constant(w2)));
    const Graph graph = b.build();
    std::vector<Batch> batches;
    for (uint32_t s = 0; s < 4; ++s) batches.push_back({{"x", random_floats({5, k}, 1.5f, 100 + s)}});

    CHECK_THROWS_AS(calibrate(graph, {}), InvalidArgument);
    const Calibration c = calibrate(graph, batches);
    REQUIRE(c.ranges.size() == 2);  // the fused first product and the second
    // The first product reads x itself: its range is that of the batches, widened to hold 0.
    float low = 0, high = 0;
    for (const Batch& batch : batches)
        for (float v : batch["x"].to_vector<float>()) low = std::min(low, v), high = std::max(high, v);
    bool found_x = false;
    for (const auto& [node, range] : c.ranges) {
        CHECK(range.low <= 0.0f);
        CHECK(range.high >= 0.0f);
        found_x = found_x || (range.low == low && range.high == high);
    }
    CHECK(found_x);
    // The percentile and entropy methods never widen a range.
    for (const CalibrationOptions& narrowing : {CalibrationOptions{.method = CalibrationMethod::percentile, .percentile = 90},
                                                CalibrationOptions{.method = CalibrationMethod::entropy}}) {
        const Calibration p = calibrate(graph, batches, narrowing);
        REQUIRE(p.ranges.size() == c.ranges.size());
        for (const auto& [node, range] : p.ranges) {
            CHECK(range.low >= c.ranges.at(node).low);
            CHECK(range.high <= c.ranges.at(node).high);
            CHECK(range.low <= 0.0f);
            CHECK(range.high >= 0.0f);
        }
    }

    // Saved and loaded, the same ranges; a session with them differs from dynamic quantization
    // but stays near f32.
    const std::string path = "test_int8_calibration.json";
    c.save(path);
    const Calibration loaded = Calibration::load(path);
    CHECK(loaded.ranges.size() == c.ranges.size());
    for (const auto& [node, range] : c.ranges) {
        CHECK(loaded.ranges.at(node).low == range.low);
        CHECK(loaded.ranges.at(node).high == range.high);
    }
    SessionOptions options{.precision = Precision::int8};
    options.calibration = std::make_shared<Calibration>(loaded);
    const Session fixed(graph, options), dynamic(graph, {.precision = Precision::int8}), exact(graph);
    const Batch input{{"x", random_floats({7, k}, 1.5f, 200)}};
    const auto got = fixed.run(input)["y"].to_vector<float>(), per_row = dynamic.run(input)["y"].to_vector<float>(),
               want = exact.run(input)["y"].to_vector<float>();
    double error = 0, norm = 0, differs = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        error += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
        norm += double(want[i]) * want[i];
        differs += got[i] != per_row[i];
    }
    CHECK(std::sqrt(error / norm) < 5e-2);
    CHECK(differs > 0);

    {
        std::ofstream bad(path);
        bad << "{\"format\": \"something else\"}";
    }
    CHECK_THROWS_AS(Calibration::load(path), InvalidArgument);
    CHECK_THROWS_AS(Calibration::load("no-such-calibration.json"), InvalidArgument);
    std::remove(path.c_str());
}

TEST_CASE("entropy calibration clips rare outliers and keeps a range without them", "[int8][calibration]") {
    // x -> x·W: the product's input is x itself, so the calibrated range is x's.
    const int64_t k = 16;
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {kDynamic, k});
    b.output("y", b.matmul(x, b.constant(random_floats({k, 4}, 0.5f, 31))));
    const Graph graph = b.build();
    const auto range_of = [&](const std::vector<Batch>& batches) {
        const Calibration c = calibrate(graph, batches, {.method = CalibrationMethod::entropy});
        REQUIRE(c.ranges.size() == 1);
        return c.ranges.begin()->second;
    };
    // Normal values (a deviation of 1) and one value in 10 000 at ±100: min-max would spend
    // the 255 steps on ±100, a step of 0.8, coarser than most values; entropy clips them.
    std::mt19937 rng(41);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<Batch> with_outliers;
    for (int batch = 0; batch < 4; ++batch) {
        std::vector<float> v(2500 * k);
        for (size_t i = 0; i < v.size(); ++i) v[i] = i % 10000 == 7 ? (batch % 2 ? 100.0f : -100.0f) : normal(rng);
        with_outliers.push_back({{"x", Tensor::from_vector(v, {2500, k})}});
    }
    const ActivationRange clipped = range_of(with_outliers);
    INFO("entropy range [" << clipped.low << ", " << clipped.high << "]");
    CHECK(clipped.high < 20.0f);
    CHECK(clipped.low > -20.0f);
    CHECK(clipped.high > 3.0f);  // the bulk of the normal values stays inside
    CHECK(clipped.low < -3.0f);
    // Uniform values in [0, 1] (the range of one side only): nothing to clip, the range stays
    // near the largest value.
    std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
    std::vector<float> u(4000 * k);
    for (float& v : u) v = uniform(rng);
    const ActivationRange kept = range_of({{{"x", Tensor::from_vector(u, {4000, k})}}});
    INFO("uniform range [" << kept.low << ", " << kept.high << "]");
    CHECK(kept.low == 0.0f);
    CHECK(kept.high > 0.9f);
    CHECK(kept.high <= 1.0f);
    // Its steps are a tenth of min-max's or finer (the report's error counts the clipped
    // outliers too, so it is larger: half of these values' energy is in the outliers).
    const ActivationRange widest = calibrate(graph, with_outliers).ranges.begin()->second;
    CHECK((clipped.high - clipped.low) * 10 < widest.high - widest.low);
}

TEST_CASE("precision int8 on a device without int8 kernels is a clear error, and the process carries on", "[int8][errors]") {
    // A backend with only a Relu: no QuantizedMatMul.
    class ReluOnly final : public test_support::HostTestBackend {
    public:
        ReluOnly() : HostTestBackend("reluonly") {
            kernels_.add("Relu", DType::f32, [](KernelContext& ctx) {
                const float* x = ctx.input(0).data<float>();
                float* y = ctx.output(0).data<float>();
                for (int64_t i = 0, n = ctx.output(0).numel(); i < n; ++i) y[i] = x[i] > 0 ? x[i] : 0;
            });
        }
    };
    register_backend(std::make_shared<ReluOnly>());
    struct Unregister {
        ~Unregister() { unregister_backend("reluonly"); }
    } unregister;
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {2, 8});
    b.output("y", b.relu(b.matmul(x, b.constant(random_floats({8, 4}, 1.0f, 5)))));
    const Graph graph = b.build();
    try {
        Session session(graph, {.device = Device("reluonly", 0), .precision = Precision::int8});
        FAIL("a session was made");
    } catch (const Unsupported& e) {
        CHECK_THAT(e.what(), Catch::Contains("int8") && Catch::Contains("reluonly"));
    }
    // The same graph in int8 on the CPU still works after the refusal.
    Session cpu(graph, {.precision = Precision::int8});
    CHECK(cpu.run({{"x", random_floats({2, 8}, 1.0f, 6)}})["y"].shape() == Shape({2, 4}));
}

TEST_CASE("bad int8 settings are clear errors: an unknown INFER_INT8_KERNEL, a percentile out of range", "[int8][errors]") {
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {2, 8});
    b.output("y", b.matmul(x, b.constant(random_floats({8, 4}, 1.0f, 7))));
    const Graph graph = b.build();
    CHECK_THROWS_AS(calibrate(graph, {{{"x", random_floats({2, 8}, 1.0f, 8)}}},
                              {.method = CalibrationMethod::percentile, .percentile = 120}),
                    InvalidArgument);
    // ctest runs these tests under INFER_INT8_KERNEL=avx2 and =portable too: put it back after.
    const char* previous = std::getenv("INFER_INT8_KERNEL");
    const std::string kept = previous ? previous : "";
    setenv("INFER_INT8_KERNEL", "sse9", 1);
    CHECK_THROWS_AS(Session(graph, {.precision = Precision::int8}), InvalidArgument);
    if (previous) setenv("INFER_INT8_KERNEL", kept.c_str(), 1);
    else unsetenv("INFER_INT8_KERNEL");
    Session session(graph, {.precision = Precision::int8});
    CHECK(session.run({{"x", random_floats({2, 8}, 1.0f, 9)}})["y"].shape() == Shape({2, 4}));
}

// ConvInteger and QLinearConv by constant weights run as products on the packed kernel (patches
// of x against the transposed weights); given the weights as an input they take the direct
// loops. Both must agree exactly: padding that holds x's zero point, strides, dilations, per
// channel weight zero points, the i32 bias, both operand types.
TEST_CASE("ConvInteger and QLinearConv by constant weights (the packed path) match the direct loops exactly", "[int8]") {
    struct Spec { DType x_type, w_type; Shape x, w; std::vector<int64_t> pads, strides, dilations; bool per_channel; };
    for (const Spec& s : {Spec{DType::u8, DType::i8, {2, 3, 9, 11}, {5, 3, 3, 3}, {1, 1, 1, 1}, {2, 1}, {1, 2}, true},
                          Spec{DType::i8, DType::u8, {1, 4, 6, 7}, {3, 4, 2, 3}, {0, 1, 1, 0}, {1, 1}, {1, 1}, false},
                          Spec{DType::u8, DType::u8, {1, 16, 5, 5}, {8, 16, 1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}, true},
                          // Channels past a multiple of 16 and pixels past a block of 64 (the
                          // registers' 16x16 transposes and their scalar rest); a 1x1 kernel over
                          // 81 pixels (each pixel its own patch) with 13 output channels.
                          Spec{DType::u8, DType::i8, {1, 20, 9, 10}, {11, 20, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, false},
                          Spec{DType::u8, DType::i8, {2, 32, 9, 9}, {13, 32, 1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}, true}}) {
        INFO(dtype_name(s.x_type) << " x " << dtype_name(s.w_type) << " " << s.x.to_string() << " by " << s.w.to_string());
        auto tensor = [&](DType t, const Shape& shape, uint32_t seed) {
            if (t == DType::u8) return Tensor::from_vector(random_ints<uint8_t>(size_t(shape.numel()), 0, 255, seed), shape);
            return Tensor::from_vector(random_ints<int8_t>(size_t(shape.numel()), -128, 127, seed), shape);
        };
        auto scalar = [](float v) { return Tensor::from_vector(std::vector<float>{v}, Shape(std::vector<int64_t>{})); };
        const int64_t m = s.w[0];
        const Tensor x = tensor(s.x_type, s.x, 1), w = tensor(s.w_type, s.w, 2);
        const Tensor x_zero = tensor(s.x_type, {}, 3), w_zero = tensor(s.w_type, s.per_channel ? Shape{m} : Shape{}, 4);
        std::vector<float> w_scales(static_cast<size_t>(m));
        // Narrower for longer sums, so that QLinearConv's outputs stay mostly inside u8's range.
        const float narrower = std::min(1.0f, 27.0f / static_cast<float>(w.numel() / m));
        for (size_t i = 0; i < w_scales.size(); ++i) w_scales[i] = (0.002f + 0.0004f * static_cast<float>(i)) * narrower;
        const Tensor bias = Tensor::from_vector(random_ints<int32_t>(size_t(m), -3000, 3000, 5), {m});
        const Attributes attrs{{"pads", s.pads}, {"strides", s.strides}, {"dilations", s.dilations}};
        // ConvInteger, then QLinearConv with u8 and with i8 output (the AVX-512 path stages either).
        for (const int form : {0, 1, 2}) {
            const bool requantized = form > 0;
            const DType y_type = form == 2 ? DType::i8 : DType::u8;
            INFO((requantized ? "QLinearConv to " + std::string(dtype_name(y_type)) : std::string("ConvInteger")));
            const auto graph = [&](bool constant_weight) {
                GraphBuilder b;
                auto in = b.input("x", s.x_type, s.x);
                auto weight = constant_weight ? b.constant(w) : b.input("w", s.w_type, s.w);
                if (requantized)
                    b.output("y", b.op1("QLinearConv", {in, b.constant(scalar(0.02f)), b.constant(x_zero), weight,
                                                        b.constant(Tensor::from_vector(w_scales, {m})), b.constant(w_zero),
                                                        b.constant(scalar(0.5f)), b.constant(tensor(y_type, {}, 6)),
                                                        b.constant(bias)},
                                         attrs));
                else
                    b.output("y", b.op1("ConvInteger", {in, weight, b.constant(x_zero), b.constant(w_zero)}, attrs));
                return b.build();
            };
            const Tensor packed = Session(graph(true)).run({{"x", x}})["y"];
            const Tensor direct = Session(graph(false)).run({{"x", x}, {"w", w}})["y"];
            REQUIRE(packed.shape() == direct.shape());
            CHECK(packed.to_vector<int32_t>() == direct.to_vector<int32_t>());
            if (requantized) {
                const std::vector<int32_t> values = direct.to_vector<int32_t>();
                const int32_t lowest = y_type == DType::u8 ? 0 : -128, highest = y_type == DType::u8 ? 255 : 127;
                CHECK(std::count_if(values.begin(), values.end(), [&](int32_t v) { return v > lowest && v < highest; }) >
                      long(values.size() / 2));
            }
        }
        // ConvIntegerToFloat (what precision int8 and QDQ convolutions run): scale per channel
        // and a float bias in the epilogue, vectorized on AVX-512; the same values as the loops
        // to rounding (one fused multiply-add against a multiply and an add).
        const auto dequantizing = [&](bool constant_weight) {
            GraphBuilder b;
            auto in = b.input("x", s.x_type, s.x);
            auto weight = constant_weight ? b.constant(w) : b.input("w", s.w_type, s.w);
            b.output("y", b.op1("ConvIntegerToFloat",
                                {in, weight, b.constant(Tensor::from_vector(w_scales, {m})), b.constant(x_zero),
                                 b.constant(w_zero), b.constant(random_floats({m}, 1.0f, 7))},
                                attrs));
            return b.build();
        };
        const std::vector<float> packed = Session(dequantizing(true)).run({{"x", x}})["y"].to_vector<float>();
        const std::vector<float> direct = Session(dequantizing(false)).run({{"x", x}, {"w", w}})["y"].to_vector<float>();
        REQUIRE(packed.size() == direct.size());
        for (size_t i = 0; i < packed.size(); ++i) CHECK(packed[i] == Approx(direct[i]).epsilon(1e-6).margin(1e-6));
    }
}
