// The QDQ format (onnxruntime.quantization.quantize_static's default): MatMul of
// DequantizeLinear(QuantizeLinear(x)) by DequantizeLinear of a constant int8 weight, and the
// bias Add after it, run as one MatMulIntegerToFloat (the packed int8 kernel on the CPU, the
// dequantization and bias in its epilogue), and give what the float reading of the same graph
// gives, to float rounding; forms it does not take stay as written.
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include "random_tensors.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace infer;

namespace {

size_t count_op(const PlacementReport& report, const std::string& op) {
    return static_cast<size_t>(
        std::count_if(report.nodes.begin(), report.nodes.end(), [&](const auto& entry) { return entry.op == op; }));
}

using infer_test::random_ints;

struct QdqCase {
    DType weight_dtype;  // i8 or u8
    bool per_column;     // weight scale and zero point per column (axis 1), else per tensor
    bool weight_input;   // the weight is a graph input, not a constant: not rewritten
};

// x [3, 2, K] -> Q(sa, za) -> DQ -> MatMul <- DQ(W_q [K, N], sw, zw); the float result of that
// reading, computed here in double.
void check(const QdqCase& c) {
    constexpr int64_t k = 40, n = 24;
    const float sa = 0.02f;
    const uint8_t za = 120;
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xs(3 * 2 * k);
    for (float& v : xs) v = normal(rng);
    const Tensor x = Tensor::from_vector(xs, {3, 2, k});
    const Tensor wq = c.weight_dtype == DType::i8 ? random_ints<int8_t>({k, n}, -127, 127, 5)
                                                  : random_ints<uint8_t>({k, n}, 0, 255, 5);
    std::vector<float> sw(c.per_column ? n : 1);
    for (size_t j = 0; j < sw.size(); ++j) sw[j] = 0.004f + 0.0005f * static_cast<float>(j);
    const Shape scale_shape = c.per_column ? Shape{n} : Shape(std::vector<int64_t>{});
    const Tensor zw = c.weight_dtype == DType::i8 ? random_ints<int8_t>(scale_shape, -3, 3, 6)
                                                  : random_ints<uint8_t>(scale_shape, 120, 136, 6);

    GraphBuilder b("qdq");
    const Value in = b.input("x", DType::f32, {3, 2, k});
    const Value a_scale = b.constant(Tensor::from_vector(std::vector<float>{sa}, Shape(std::vector<int64_t>{})));
    const Value a_zero = b.constant(Tensor::from_vector(std::vector<uint8_t>{za}, Shape(std::vector<int64_t>{})));
    const Value a = b.op1("DequantizeLinear", {b.op1("QuantizeLinear", {in, a_scale, a_zero}), a_scale, a_zero});
    const Value w_q = c.weight_input ? b.input("w", c.weight_dtype, {k, n}) : b.constant(wq);
    const Value w = b.op1("DequantizeLinear", {w_q, b.constant(Tensor::from_vector(sw, scale_shape)), b.constant(zw)},
                          {{"axis", int64_t{1}}});
    std::vector<float> bias(n);
    for (size_t j = 0; j < bias.size(); ++j) bias[j] = 0.25f * static_cast<float>(j) - 2.0f;
    b.output("y", b.add(b.matmul(a, w), b.constant(Tensor::from_vector(bias, {n}))));
    Session session(b.build());
    Batch inputs{{"x", x}};
    if (c.weight_input) inputs.set("w", wq);
    const std::vector<float> got = session.run(inputs)["y"].to_vector<float>();

    const std::vector<double> zws = zw.to_vector<double>(), wqs = wq.to_vector<double>();
    double worst = 0;
    for (int64_t r = 0; r < 6; ++r)
        for (int64_t col = 0; col < n; ++col) {
            const size_t p = c.per_column ? static_cast<size_t>(col) : 0;
            double want = bias[static_cast<size_t>(col)], size = std::fabs(want);
            for (int64_t j = 0; j < k; ++j) {
                const double q = std::clamp(std::nearbyint(double(xs[r * k + j]) / sa) + za, 0.0, 255.0);
                const double term = (q - za) * sa * (wqs[j * n + col] - zws[p]) * sw[p];
                want += term;
                size += std::fabs(term);
            }
            worst = std::max(worst, std::fabs(got[r * n + col] - want) / (size + 1e-6));
        }
    CHECK(worst < 1e-5);
    const PlacementReport report = session.placement();
    CHECK(count_op(report, "MatMulIntegerToFloat") == (c.weight_input ? 0u : 1u));
    CHECK(count_op(report, "MatMul") == (c.weight_input ? 1u : 0u));
    CHECK(count_op(report, "Add") == (c.weight_input ? 1u : 0u));  // the bias, taken into the product
}

}  // namespace

TEST_CASE("QDQ products by an int8 weight run as integer products with the float result", "[int8][qdq]") {
    SECTION("s8 weight, per column") { check({DType::i8, true, false}); }
    SECTION("u8 weight, per tensor") { check({DType::u8, false, false}); }
    SECTION("a weight that is not a constant stays a float MatMul") { check({DType::i8, true, true}); }
}

TEST_CASE("a zero point whose shape differs from its scale's is an error naming both", "[qdq][errors]") {
    GraphBuilder b("bad_zero");
    const Value x = b.input("x", DType::u8, {4});
    const Value scale = b.constant(Tensor::from_vector(std::vector<float>{0.5f}, Shape(std::vector<int64_t>{})));
    const Value zero = b.constant(Tensor::from_vector(std::vector<uint8_t>{1, 2}, Shape{2}));
    b.output("y", b.op1("DequantizeLinear", {x, scale, zero}));
    try {
        b.build();
        FAIL("the graph was accepted");
    } catch (const Error& e) {
        CHECK_THAT(e.what(), Catch::Contains("zero point [2]") && Catch::Contains("scale []"));
    }
    // [1] beside [] is one value each: what onnxruntime writes, and accepted.
    GraphBuilder ok("one_zero");
    const Value y = ok.input("x", DType::u8, {4});
    const Value one = ok.constant(Tensor::from_vector(std::vector<float>{0.5f}, Shape{1}));
    const Value z = ok.constant(Tensor::from_vector(std::vector<uint8_t>{2}, Shape(std::vector<int64_t>{})));
    ok.output("y", ok.op1("DequantizeLinear", {y, one, z}));
    Session session(ok.build());
    const std::vector<uint8_t> q{0, 2, 4, 255};
    CHECK(session.run({{"x", Tensor::from_vector(q, {4})}})["y"].to_vector<float>() == std::vector<float>{-1, 0, 1, 126.5f});
}

namespace {

template <class T>
Tensor scalar(T value) {
    return Tensor::from_vector(std::vector<T>{value}, Shape(std::vector<int64_t>{}));
}

// v through QuantizeLinear and DequantizeLinear with one u8 scale and zero point: how a QDQ file
// writes a quantized activation.
Value fake_quantize(GraphBuilder& b, Value v, float scale, uint8_t zero) {
    const Value s = b.constant(scalar(scale)), z = b.constant(scalar(zero));
    return b.op1("DequantizeLinear", {b.op1("QuantizeLinear", {v, s, z}), s, z});
}

// That rounding in double, less the zero point: the value a QDQ step stands for, over its scale.
double grid_steps(float v, float s, uint8_t z) { return std::clamp(std::nearbyint(double(v) / s) + z, 0.0, 255.0) - z; }

}  // namespace

// Attention's products in a QDQ file: both operands activations through QuantizeLinear and
// DequantizeLinear per tensor, the product's output through its own pair. The whole chain becomes
// one MatMulIntegerToFloat whose B is packed at run time, head by head; the result is the float
// reading's (every step the same grid), to one output step where a value sits on a half step.
TEST_CASE("QDQ products of two activations run as integer products", "[int8][qdq]") {
    constexpr int64_t heads = 3, m = 7, k = 40, n = 24;
    const float sa = 0.03f, sb = 0.02f, sy = 0.05f;
    const uint8_t za = 128, zb = 120, zy = 130;
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xs(2 * heads * m * k), ys(heads * k * n);
    for (float& v : xs) v = normal(rng);
    for (float& v : ys) v = normal(rng);

    GraphBuilder b("qdq_activations");
    const Value x = b.input("x", DType::f32, {2, heads, m, k});
    const Value y = b.input("y", DType::f32, {1, heads, k, n});  // broadcast over the batch
    b.output("out", fake_quantize(b, b.matmul(fake_quantize(b, x, sa, za), fake_quantize(b, y, sb, zb)), sy, zy));
    Session session(b.build());
    const std::vector<float> got =
        session.run({{"x", Tensor::from_vector(xs, {2, heads, m, k})}, {"y", Tensor::from_vector(ys, {1, heads, k, n})}})["out"]
            .to_vector<float>();
    CHECK(count_op(session.placement(), "MatMulIntegerToFloat") == 1);
    CHECK(count_op(session.placement(), "MatMul") == 0);
    CHECK(count_op(session.placement(), "DequantizeLinear") == 0);

    size_t off_grid = 0;
    for (int64_t batch = 0; batch < 2; ++batch)
        for (int64_t h = 0; h < heads; ++h)
            for (int64_t r = 0; r < m; ++r)
                for (int64_t c = 0; c < n; ++c) {
                    double sum = 0;
                    for (int64_t j = 0; j < k; ++j)
                        sum += grid_steps(xs[((batch * heads + h) * m + r) * k + j], sa, za) * sa * grid_steps(ys[(h * k + j) * n + c], sb, zb) * sb;
                    const double want = grid_steps(static_cast<float>(sum), sy, zy) * sy;
                    const double error = std::fabs(got[static_cast<size_t>(((batch * heads + h) * m + r) * n + c)] - want);
                    REQUIRE(error <= sy * 1.001);
                    off_grid += error > 1e-6;
                }
    CHECK(off_grid <= 2);  // only where a product sits on a half step of the output grid
}

// A QDQ convolution (what quantize_static writes for a CNN): x through QuantizeLinear and
// DequantizeLinear, a constant int8 weight dequantized per output channel, a float bias, and
// the output's own Q/DQ pair. The chain becomes one ConvIntegerToFloat on the packed kernel and
// gives the float reading's result, to one output step where a value sits on a half step. With
// the bias as quantize_static writes it (DequantizeLinear of i32 by sx·sw, zero 0) the
// convolution and the QuantizeLinear after it become one QLinearConv, with the same result.
TEST_CASE("QDQ convolutions run as integer convolutions with the float result", "[int8][qdq]") {
  for (const bool integer_bias : {false, true}) {
    INFO((integer_bias ? "i32 bias: QLinearConv" : "f32 bias: ConvIntegerToFloat"));
    constexpr int64_t c = 5, m = 6, h = 9, w = 8;
    const float sx = 0.04f, sy = 0.08f;
    const uint8_t zx = 120, zy = 125;
    std::mt19937 rng(21);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xs(2 * c * h * w);
    for (float& v : xs) v = normal(rng);
    const Tensor wq = random_ints<int8_t>({m, c, 3, 3}, -127, 127, 22);
    std::vector<float> sw(m), bias(m);
    for (int64_t i = 0; i < m; ++i) sw[i] = 0.003f + 0.0007f * static_cast<float>(i), bias[i] = 0.3f * static_cast<float>(i) - 0.8f;
    std::vector<int32_t> bias_q(m);
    std::vector<float> bias_scale(m);
    if (integer_bias)  // the bias on the sums' grid, as the float reading sees it
        for (int64_t i = 0; i < m; ++i) {
            bias_scale[i] = sx * sw[i];
            bias_q[i] = static_cast<int32_t>(std::lround(bias[i] / bias_scale[i]));
            bias[i] = static_cast<float>(bias_q[i]) * bias_scale[i];
        }

    GraphBuilder b("qdq_conv");
    const Value x = b.input("x", DType::f32, {2, c, h, w});
    const Value weight = b.op1("DequantizeLinear",
                               {b.constant(wq), b.constant(Tensor::from_vector(sw, {m})),
                                b.constant(Tensor::from_vector(std::vector<int8_t>(m, 0), {m}))},
                               {{"axis", int64_t{0}}});
    const Attributes attrs{{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 1}}};
    const Value bias_value =
        integer_bias ? b.op1("DequantizeLinear", {b.constant(Tensor::from_vector(bias_q, {m})),
                                                  b.constant(Tensor::from_vector(bias_scale, {m})),
                                                  b.constant(Tensor::from_vector(std::vector<int32_t>(m, 0), {m}))},
                             {{"axis", int64_t{0}}})
                     : b.constant(Tensor::from_vector(bias, {m}));
    const Value conv = b.op1("Conv", {fake_quantize(b, x, sx, zx), weight, bias_value}, attrs);
    b.output("y", fake_quantize(b, conv, sy, zy));
    Session session(b.build());
    const std::vector<float> got = session.run({{"x", Tensor::from_vector(xs, {2, c, h, w})}})["y"].to_vector<float>();
    // The QLinearConv channel-last on the CPU (passes/channels_last.cpp), between two Transposes.
    CHECK(count_op(session.placement(), integer_bias ? "ChannelsLastQLinearConv" : "ConvIntegerToFloat") == 1);
    CHECK(count_op(session.placement(), "Transpose") == (integer_bias ? 2 : 0));
    CHECK(count_op(session.placement(), "Conv") == 0);
    CHECK(count_op(session.placement(), "QuantizeLinear") == 1);  // x's
    CHECK(count_op(session.placement(), "DequantizeLinear") == (integer_bias ? 1 : 0));  // y's

    const std::vector<int8_t> ws = wq.to_vector<int8_t>();
    const int64_t oh = (h + 2 - 3) / 2 + 1, ow = w;
    REQUIRE(got.size() == static_cast<size_t>(2 * m * oh * ow));
    size_t off_grid = 0;
    for (int64_t n = 0; n < 2; ++n)
        for (int64_t o = 0; o < m; ++o)
            for (int64_t i = 0; i < oh; ++i)
                for (int64_t j = 0; j < ow; ++j) {
                    double sum = bias[o];
                    for (int64_t ch = 0; ch < c; ++ch)
                        for (int64_t ki = 0; ki < 3; ++ki)
                            for (int64_t kj = 0; kj < 3; ++kj) {
                                const int64_t y = i * 2 - 1 + ki, xcol = j - 1 + kj;
                                if (y < 0 || y >= h || xcol < 0 || xcol >= w) continue;
                                sum += grid_steps(xs[((n * c + ch) * h + y) * w + xcol], sx, zx) * sx * ws[((o * c + ch) * 3 + ki) * 3 + kj] * sw[o];
                            }
                    const double want = grid_steps(static_cast<float>(sum), sy, zy) * sy;
                    const double error = std::fabs(got[static_cast<size_t>(((n * m + o) * oh + i) * ow + j)] - want);
                    REQUIRE(error <= sy * 1.001);
                    off_grid += error > 1e-5;
                }
    CHECK(off_grid <= 3);
  }
}

// A residual Add in a QDQ file: both operands dequantized 8-bit activations, the sum quantized
// again. It becomes one QuantizedAdd (bytes in and out) with the float reading's result exactly,
// also where one operand broadcasts; an Add whose sum a float op reads stays as written.
TEST_CASE("QDQ Adds of two quantized activations run as one QuantizedAdd", "[int8][qdq]") {
    const float sa = 0.03f, sb = 0.05f, sy = 0.06f;
    const uint8_t za = 128, zb = 100, zy = 120;
    for (const Shape& b_shape : {Shape{2, 3, 4, 5}, Shape{3, 1, 1}}) {
        INFO("B " << b_shape.to_string());
        std::mt19937 rng(31);
        std::normal_distribution<float> normal(0.0f, 2.0f);
        std::vector<float> as(2 * 3 * 4 * 5), bs(static_cast<size_t>(b_shape.numel()));
        for (float& v : as) v = normal(rng);
        for (float& v : bs) v = normal(rng);
        for (const bool quantized_sum : {true, false}) {
            GraphBuilder b("qdq_add");
            const Value a = b.input("a", DType::f32, {2, 3, 4, 5}), bv = b.input("b", DType::f32, b_shape);
            const Value sum = b.op1("Add", {fake_quantize(b, a, sa, za), fake_quantize(b, bv, sb, zb)});
            b.output("y", quantized_sum ? fake_quantize(b, sum, sy, zy) : b.op1("Relu", {sum}));
            Session session(b.build());
            const std::vector<float> got =
                session.run({{"a", Tensor::from_vector(as, {2, 3, 4, 5})}, {"b", Tensor::from_vector(bs, b_shape)}})["y"]
                    .to_vector<float>();
            CHECK(count_op(session.placement(), "QuantizedAdd") == (quantized_sum ? 1 : 0));
            CHECK(count_op(session.placement(), "Add") == (quantized_sum ? 0 : 1));
            const Shape bs_shape = b_shape;
            // QuantizeLinear's steps as the ops take them: the division in f32.
            const auto steps = [](float v, float scale, uint8_t zero) {
                return std::clamp(std::rint(v / scale) + static_cast<float>(zero), 0.0f, 255.0f) - static_cast<float>(zero);
            };
            for (size_t i = 0; i < as.size(); ++i) {
                // B's element under a[i]: b is [3, 1, 1] or a's own shape.
                const size_t j = bs_shape.rank() == 3 ? (i / 20) % 3 : i;
                const float total = steps(as[i], sa, za) * sa + steps(bs[j], sb, zb) * sb;
                const float want = quantized_sum ? steps(total, sy, zy) * sy : std::max(total, 0.0f);
                REQUIRE(got[i] == want);
            }
        }
    }
}

// A MaxPool between a DequantizeLinear and a QuantizeLinear of one grid (a QDQ CNN's stem pool)
// pools the bytes: the same values, with no f32 image; on another grid it stays as written.
TEST_CASE("QDQ max pools of one grid pool the bytes", "[int8][qdq]") {
    const float s = 0.04f;
    const uint8_t z = 110;
    std::mt19937 rng(41);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    std::vector<float> xs(2 * 3 * 9 * 10);
    for (float& v : xs) v = normal(rng);
    const Attributes attrs{{"kernel_shape", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{2, 2}},
                           {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
    std::vector<float> results[2];
    for (const bool same_grid : {true, false}) {
        GraphBuilder b("qdq_pool");
        const Value x = b.input("x", DType::f32, {2, 3, 9, 10});
        const Value pooled = b.op1("MaxPool", {fake_quantize(b, x, s, z)}, attrs);
        b.output("y", fake_quantize(b, pooled, same_grid ? s : 2 * s, z));
        Session session(b.build());
        results[same_grid] = session.run({{"x", Tensor::from_vector(xs, {2, 3, 9, 10})}})["y"].to_vector<float>();
        // The pool's own DequantizeLinear and QuantizeLinear go where the grids agree.
        CHECK(count_op(session.placement(), "DequantizeLinear") == (same_grid ? 1 : 2));
        CHECK(count_op(session.placement(), "MaxPool") == 1);
    }
    // The float reading: the maximum of the dequantized window, itself on the grid.
    REQUIRE(results[1].size() == static_cast<size_t>(2 * 3 * 5 * 5));
    for (int64_t plane = 0; plane < 6; ++plane)
        for (int64_t i = 0; i < 5; ++i)
            for (int64_t j = 0; j < 5; ++j) {
                float best = -1e30f;
                for (int64_t di = 0; di < 3; ++di)
                    for (int64_t dj = 0; dj < 3; ++dj) {
                        const int64_t r = 2 * i - 1 + di, col = 2 * j - 1 + dj;
                        if (r < 0 || r >= 9 || col < 0 || col >= 10) continue;
                        best = std::max(best, static_cast<float>(grid_steps(xs[(plane * 9 + r) * 10 + col], s, z)) * s);
                    }
                REQUIRE(results[1][static_cast<size_t>((plane * 5 + i) * 5 + j)] == best);
            }
}

// A QDQ Gemm by a weight (a classifier: transB = 1, W [N, K] dequantized per output row, a
// bias): one MatMulIntegerToFloat on the packed kernel, W transposed once, with the float
// reading's result to float rounding; with transB = 0 and no bias likewise.
TEST_CASE("QDQ Gemms by a weight run as integer products", "[int8][qdq]") {
    constexpr int64_t m = 3, k = 40, n = 12;
    const float sa = 0.03f;
    const uint8_t za = 125;
    std::mt19937 rng(51);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xs(m * k), bias(n), sw(n);
    for (float& v : xs) v = normal(rng);
    for (int64_t j = 0; j < n; ++j) bias[j] = 0.1f * static_cast<float>(j) - 0.5f, sw[j] = 0.002f + 0.0003f * static_cast<float>(j);
    const Tensor wq = random_ints<int8_t>({n, k}, -127, 127, 52);  // [N, K]
    const std::vector<int8_t> ws = wq.to_vector<int8_t>();
    for (const bool trans_b : {true, false}) {
        INFO((trans_b ? "transB = 1, bias" : "transB = 0, no bias"));
        std::vector<int8_t> stored = ws;  // [K, N] when not transposed
        if (!trans_b)
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < k; ++i) stored[static_cast<size_t>(i * n + j)] = ws[static_cast<size_t>(j * k + i)];
        GraphBuilder b("qdq_gemm");
        const Value x = b.input("x", DType::f32, {m, k});
        const Value weight = b.op1("DequantizeLinear",
                                   {b.constant(Tensor::from_vector(stored, trans_b ? Shape{n, k} : Shape{k, n})),
                                    b.constant(Tensor::from_vector(sw, {n})),
                                    b.constant(Tensor::from_vector(std::vector<int8_t>(n, 0), {n}))},
                                   {{"axis", int64_t{trans_b ? 0 : 1}}});
        std::vector<Value> operands{fake_quantize(b, x, sa, za), weight};
        if (trans_b) operands.push_back(b.constant(Tensor::from_vector(bias, {n})));
        b.output("y", b.op1("Gemm", operands, {{"transB", int64_t{trans_b}}}));
        Session session(b.build());
        const std::vector<float> got = session.run({{"x", Tensor::from_vector(xs, {m, k})}})["y"].to_vector<float>();
        CHECK(count_op(session.placement(), "MatMulIntegerToFloat") == 1);
        CHECK(count_op(session.placement(), "Gemm") == 0);
        for (int64_t r = 0; r < m; ++r)
            for (int64_t j = 0; j < n; ++j) {
                double want = trans_b ? bias[j] : 0.0;
                for (int64_t i = 0; i < k; ++i)
                    want += grid_steps(xs[r * k + i], sa, za) * sa * ws[static_cast<size_t>(j * k + i)] * sw[j];
                REQUIRE(got[static_cast<size_t>(r * n + j)] == Approx(want).margin(1e-4));
            }
    }
}

// The operator format quantize_dynamic writes: DynamicQuantizeLinear(x), MatMulInteger by the
// int8 weight, a Cast to f32, a Mul by sa · sw (sa computed at run time), and the bias Add; the
// chain becomes one MatMulIntegerToFloat, and gives what those ops give, computed here in double.
TEST_CASE("MatMulInteger, Cast, Mul by the scale and the bias Add run as one MatMulIntegerToFloat", "[int8][qdq]") {
    constexpr int64_t k = 40, n = 24;
    std::mt19937 rng(11);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xs(2 * 3 * k), bias(n);
    for (float& v : xs) v = normal(rng);
    for (float& v : bias) v = normal(rng);
    const Tensor wq = random_ints<int8_t>({k, n}, -127, 127, 12);
    for (const bool per_column : {false, true}) {
        for (const bool with_bias : {false, true}) {
            INFO("scale per column " << per_column << ", bias " << with_bias);
            std::vector<float> sw(per_column ? n : 1);
            for (size_t j = 0; j < sw.size(); ++j) sw[j] = 0.004f + 0.0003f * static_cast<float>(j);
            GraphBuilder b("dynamic");
            const Value x = b.input("x", DType::f32, {2, 3, k});
            const auto q = b.op("DynamicQuantizeLinear", {x}, {}, 3);
            const Value sums = b.op1("MatMulInteger", {q[0], b.constant(wq), q[2]});
            const Value as_float = b.op1("Cast", {sums}, {{"to", int64_t{1}}});
            const Value scale = b.mul(q[1], b.constant(Tensor::from_vector(sw, per_column ? Shape{n} : Shape(std::vector<int64_t>{}))));
            Value y = b.mul(as_float, scale);
            if (with_bias) y = b.add(y, b.constant(Tensor::from_vector(bias, {n})));
            b.output("y", y);
            Session session(b.build());
            const Batch out = session.run({{"x", Tensor::from_vector(xs, {2, 3, k})}});
            CHECK(count_op(session.placement(), "MatMulIntegerToFloat") == 1);
            CHECK(count_op(session.placement(), "MatMulInteger") == 0);
            CHECK(count_op(session.placement(), "Cast") == 0);
            // The reference: DynamicQuantizeLinear's u8 grid (over the whole tensor, 0 included).
            const float lo = std::min(0.0f, *std::min_element(xs.begin(), xs.end()));
            const float hi = std::max(0.0f, *std::max_element(xs.begin(), xs.end()));
            const float sa = (hi - lo) / 255.0f;
            const double za = std::clamp(std::nearbyint(-lo / sa), 0.0f, 255.0f);
            const std::vector<float> got = out["y"].to_vector<float>();
            for (int64_t r = 0; r < 6; ++r)
                for (int64_t j = 0; j < n; ++j) {
                    double sum = 0;
                    for (int64_t i = 0; i < k; ++i) {
                        const double xq = std::clamp(std::nearbyint(xs[static_cast<size_t>(r * k + i)] / sa) + za, 0.0, 255.0);
                        sum += (xq - za) * wq.data<int8_t>()[i * n + j];
                    }
                    const double want = sum * sa * sw[per_column ? static_cast<size_t>(j) : 0] + (with_bias ? bias[static_cast<size_t>(j)] : 0.0);
                    REQUIRE(got[static_cast<size_t>(r * n + j)] == Approx(want).margin(1e-4).epsilon(1e-5));
                }
        }
    }
}

// The fused integer ops a pass makes can also be written by hand (GraphBuilder); wrong operands
// are errors that name what was wrong, and building and running a good graph afterwards works.
TEST_CASE("MatMulIntegerToFloat, ConvIntegerToFloat and QuantizedAdd with wrong operands are clear errors", "[qdq][errors]") {
    const auto expect_error = [](const std::string& op, const std::vector<Tensor>& inputs, const std::string& says) {
        GraphBuilder b("bad_" + op);
        std::vector<Value> values;
        for (const Tensor& t : inputs) values.push_back(b.constant(t));
        try {
            b.output("y", b.op1(op, values));
            b.build();
            FAIL(op << " was accepted");
        } catch (const Error& e) {
            CHECK_THAT(e.what(), Catch::Contains(says));
        }
    };
    const Tensor a_u8 = random_ints<uint8_t>({2, 8}, 0, 255, 1), w_i8 = random_ints<int8_t>({8, 4}, -127, 127, 2);
    expect_error("MatMulIntegerToFloat", {Tensor::from_vector(std::vector<float>(16, 1.0f), {2, 8}), w_i8, scalar(0.1f)},
                 "A and B must be u8 or i8");
    expect_error("MatMulIntegerToFloat", {a_u8, w_i8, Tensor::from_vector(std::vector<float>(3, 0.1f), {3})},
                 "the scale must be one value or a row of 4");
    const Tensor x_u8 = random_ints<uint8_t>({1, 2, 5, 5}, 0, 255, 3), k_i8 = random_ints<int8_t>({3, 2, 3, 3}, -127, 127, 4);
    expect_error("ConvIntegerToFloat",
                 {x_u8, k_i8, scalar(0.1f), scalar(uint8_t{1}), scalar(int8_t{0}), Tensor::from_vector(std::vector<float>(5, 0.0f), {5})},
                 "the bias must be a row of 3 output channels");
    // QuantizedAdd: operands of two dtypes, a scale of several values, shapes that do not broadcast.
    const Tensor b_u8 = random_ints<uint8_t>({2, 8}, 0, 255, 5);
    const Tensor b_i8 = random_ints<int8_t>({2, 8}, -128, 127, 6), c_u8 = random_ints<uint8_t>({3, 8}, 0, 255, 7);
    expect_error("QuantizedAdd", {a_u8, scalar(0.1f), scalar(uint8_t{1}), b_i8, scalar(0.1f), scalar(int8_t{0}), scalar(0.2f),
                                  scalar(uint8_t{3})},
                 "A and B must both be u8 or both i8");
    expect_error("QuantizedAdd", {a_u8, Tensor::from_vector(std::vector<float>{0.1f, 0.2f}, {2}), scalar(uint8_t{1}), b_u8,
                                  scalar(0.1f), scalar(uint8_t{0}), scalar(0.2f), scalar(uint8_t{3})},
                 "the scales must be one f32 value each");
    expect_error("QuantizedAdd", {a_u8, scalar(0.1f), scalar(uint8_t{1}), c_u8, scalar(0.1f), scalar(uint8_t{0}), scalar(0.2f),
                                  scalar(uint8_t{3})},
                 "do not broadcast");

    GraphBuilder good("good");
    good.output("y", good.op1("MatMulIntegerToFloat", {good.constant(a_u8), good.constant(w_i8), good.constant(scalar(0.5f))}));
    good.output("sum", good.op1("QuantizedAdd", {good.constant(a_u8), good.constant(scalar(0.1f)), good.constant(scalar(uint8_t{1})),
                                                good.constant(b_u8), good.constant(scalar(0.1f)), good.constant(scalar(uint8_t{0})),
                                                good.constant(scalar(0.2f)), good.constant(scalar(uint8_t{3}))}));
    Session session(good.build());
    const Batch out = session.run({});
    CHECK(out["y"].shape() == Shape({2, 4}));
    CHECK(out["sum"].shape() == Shape({2, 8}));
    CHECK(out["sum"].dtype() == DType::u8);
}
