// f16 has f32's precision budget but not its range: 2^-14 (6.1e-5) is its smallest normal value,
// 6e-8 its smallest subnormal and 65504 its largest. A CNN whose activations shrink layer by
// layer (randomly initialised torchvision MobileNetV3 and EfficientNet reach 1e-9 to 1e-14) or
// grow past 65504 computes garbage in f16 unless the session notices and computes those parts
// in f32. bf16 has f32's range and needs none of this.
#include <infer/backend.hpp>
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

using namespace infer;

namespace {

// Deterministic values in [-1, 1).
std::vector<float> uniform(size_t count, uint32_t seed) {
    std::vector<float> values(count);
    for (float& v : values) {
        seed = seed * 1664525u + 1013904223u;
        v = float(seed >> 8) / float(1u << 23) - 1.0f;
    }
    return values;
}

Value conv3x3(GraphBuilder& b, Value x, int64_t channels, float scale, uint32_t seed) {
    std::vector<float> w = uniform(size_t(channels * channels * 9), seed);
    for (float& v : w) v *= scale;
    std::vector<float> bias(size_t(channels), 0.0f);
    Attributes attrs;
    attrs.set("kernel_shape", std::vector<int64_t>{3, 3});
    attrs.set("pads", std::vector<int64_t>{1, 1, 1, 1});
    return b.op1("Conv", {x, b.constant(Tensor::from_vector(w, {channels, channels, 3, 3})),
                          b.constant(Tensor::from_vector(bias, {channels}))},
                 attrs);
}

// Pooled features through a classifier, as every ImageNet CNN ends.
Value classifier(GraphBuilder& b, Value x, int64_t channels, int64_t classes) {
    auto pooled = b.op1("Flatten", {b.op1("GlobalAveragePool", {x})});
    std::vector<float> w = uniform(size_t(channels * classes), 99);
    return b.gemm(pooled, b.constant(Tensor::from_vector(w, {channels, classes})));
}

double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
    double diff = 0, norm = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        diff += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
        norm += double(want[i]) * want[i];
    }
    return std::sqrt(diff / norm);
}

constexpr int64_t kChannels = 8, kSide = 12, kClasses = 10;

Batch image() {
    return {{"image", Tensor::from_vector(uniform(size_t(kChannels * kSide * kSide), 7),
                                          {1, kChannels, kSide, kSide})}};
}

void check_low_precision_matches_f32(const Graph& g) {
    const std::vector<float> reference = g.run(image())["logits"].to_vector<float>();
    for (auto [precision, tolerance] : {std::pair{Precision::f16, 1e-2}, std::pair{Precision::bf16, 5e-2}}) {
        INFO("precision " << precision_name(precision));
        Session session(g, {.precision = precision});
        for (int run = 0; run < 2; ++run) {  // the first run finds the trouble; both must be right
            INFO("run " << run);
            const std::vector<float> got = session.run(image())["logits"].to_vector<float>();
            for (float v : got) REQUIRE(std::isfinite(v));
            CHECK(relative_error(got, reference) <= tolerance);
        }
        if (precision == Precision::f16) CHECK_FALSE(session.placement().kept_f32.empty());
        if (precision == Precision::bf16) CHECK(session.placement().kept_f32.empty());
    }
}

}  // namespace

TEST_CASE("f16 sessions stay right when a CNN's activations shrink below f16's range", "[session][precision]") {
    // Each block scales activations by about 1/10, as random-weight MobileNetV3/EfficientNet
    // blocks do: after eight of them the logits are near 1e-9, which f16 flushes to zero.
    GraphBuilder b;
    auto x = b.input("image", DType::f32, {1, kChannels, kSide, kSide});
    for (uint32_t block = 0; block < 8; ++block) x = b.op1("HardSwish", {conv3x3(b, x, kChannels, 0.04f, block)});
    b.output("logits", classifier(b, x, kChannels, kClasses));
    check_low_precision_matches_f32(b.build());
}

TEST_CASE("f16 sessions stay right when a CNN's activations grow past 65504", "[session][precision]") {
    // Unnormalised pixels (0..255) into convolutions that amplify: activations reach 1e5-1e6,
    // infinity in f16, before a scaling brings them back.
    GraphBuilder b;
    auto x = b.input("image", DType::f32, {1, kChannels, kSide, kSide});
    x = b.relu(conv3x3(b, b.mul(x, b.constant(Tensor::from_vector(std::vector<float>{255.0f}, {}))), kChannels, 3.0f, 1));
    x = b.relu(conv3x3(b, x, kChannels, 3.0f, 2));
    x = b.mul(x, b.constant(Tensor::from_vector(std::vector<float>{1e-4f}, {})));
    x = b.op1("HardSwish", {conv3x3(b, x, kChannels, 0.3f, 3)});
    b.output("logits", classifier(b, x, kChannels, kClasses));
    check_low_precision_matches_f32(b.build());
}

TEST_CASE("f16 lowering keeps ops whose weights f16 cannot hold in f32", "[session][precision]") {
    // A weight of 1e5 would be clamped to 65504 and weights all below 6e-8 would become zeros.
    for (float magnitude : {1e5f, 3e-8f}) {
        INFO("weights of magnitude " << magnitude);
        GraphBuilder b;
        auto x = b.input("x", DType::f32, {2, 4});
        std::vector<float> w = uniform(16, 5);
        for (float& v : w) v = magnitude * (v >= 0 ? 1.0f : -1.0f) * (1.0f + std::abs(v));
        auto y = b.matmul(x, b.constant(Tensor::from_vector(w, {4, 4})));
        b.output("y", b.mul(y, b.constant(Tensor::from_vector(std::vector<float>{1.0f / magnitude}, {}))));
        Graph g = b.build();
        const Batch batch{{"x", Tensor::from_vector(uniform(8, 3), {2, 4})}};
        const std::vector<float> reference = g.run(batch)["y"].to_vector<float>();
        const std::vector<float> got = Session(g, {.precision = Precision::f16}).run(batch)["y"].to_vector<float>();
        CHECK(relative_error(got, reference) <= 1e-2);
    }
}

TEST_CASE("f16 lowering judges each weight by all of its values when it scans many weights at once",
          "[session][precision]") {
    // The lowering scans every weight's range in one set of tasks of 2^20 values each. Two
    // weights of 4 × 300 000 span two tasks apiece; the first holds 1e5 in its last column only
    // (its second task), which f16 would clamp to 65504, so its product must stay in f32; the
    // second holds nothing out of range, and its product may go to f16.
    constexpr int64_t kColumns = 300'000;
    std::vector<float> wide = uniform(4 * kColumns, 11);
    wide[4 * kColumns - 1] = 1e5f;  // row 3, the last column
    const std::vector<float> plain = uniform(4 * kColumns, 12);
    GraphBuilder b;
    auto x = b.input("x", DType::f32, {2, 4});
    b.output("wide", b.matmul(x, b.constant(Tensor::from_vector(wide, {4, kColumns}))));
    b.output("plain", b.matmul(x, b.constant(Tensor::from_vector(plain, {4, kColumns}))));
    Graph g = b.build();
    const Batch batch{{"x", Tensor::from_vector(std::vector<float>{0.5f, -0.25f, 0.75f, 1.0f, 1.0f, 0.5f, -0.5f, 0.25f}, {2, 4})}};
    auto reference = g.run(batch);
    auto got = Session(g, {.precision = Precision::f16}).run(batch);
    const std::vector<float> wide_ref = reference["wide"].to_vector<float>(), wide_got = got["wide"].to_vector<float>();
    // The last column: 1e5 · x[r, 3] plus values near 1; clamped, it would be off by a third.
    for (int64_t r = 0; r < 2; ++r) {
        const size_t last = static_cast<size_t>((r + 1) * kColumns - 1);
        INFO("row " << r << ": " << wide_got[last] << " against " << wide_ref[last]);
        CHECK(std::fabs(wide_got[last] - wide_ref[last]) <= 1e-4f * std::fabs(wide_ref[last]));
    }
    CHECK(relative_error(got["plain"].to_vector<float>(), reference["plain"].to_vector<float>()) <= 1e-2);
}

TEST_CASE("lowered constants are rounded to nearest, clamped to the low type's range, inf and NaN kept",
          "[session][precision]") {
    // 37 values: the lowering scans and converts them in blocks of 16 lanes and a tail.
    const float big = std::numeric_limits<float>::max(), inf = std::numeric_limits<float>::infinity();
    std::vector<float> c = uniform(37, 7);
    c[0] = -big;
    c[5] = big;
    c[16] = -inf;
    c[17] = inf;
    c[31] = std::nanf("");
    c[36] = 1e-4f;  // above f16's smallest normal: the Add stays in f16
    const Batch zeros{{"x", Tensor::from_vector(std::vector<float>(37, 0.0f), {37, 1})}};
    for (Precision p : {Precision::bf16, Precision::f16}) {
        INFO("precision " << precision_name(p));
        // An f16 session computes nodes whose results hold inf or NaN again in f32 (session.cpp),
        // which would hide the conversion: those values are checked in bf16 only.
        if (p == Precision::f16) c[16] = c[17] = c[31] = 0.5f;
        GraphBuilder b("constants");
        auto x = b.input("x", DType::f32, {37, 1});
        // MatMul always runs in the low type, and the Add follows it, so c is converted.
        auto product = b.matmul(x, b.constant(Tensor::from_vector(std::vector<float>{1.0f}, {1, 1})));
        b.output("y", b.add(product, b.constant(Tensor::from_vector(c, {37, 1}))));
        const Graph g = b.build();
        const float limit = p == Precision::f16 ? 65504.0f : 3.38953139e38f;
        const std::vector<float> y = Session(g, {.precision = p}).run(zeros)["y"].to_vector<float>();
        for (size_t i = 0; i < c.size(); ++i) {
            INFO("value " << i << " = " << c[i]);
            if (std::isnan(c[i])) {
                CHECK(std::isnan(y[i]));
            } else if (std::isinf(c[i])) {
                CHECK(y[i] == c[i]);
            } else if (std::fabs(c[i]) > limit) {
                CHECK(y[i] == std::copysign(limit, c[i]));
            } else {
                const uint16_t bits = p == Precision::f16 ? float_to_half_bits(c[i]) : float_to_bfloat16_bits(c[i]);
                CHECK(y[i] == (p == Precision::f16 ? half_bits_to_float(bits) : bfloat16_bits_to_float(bits)));
            }
        }
    }
}

// What a backend whose memory the host cannot address inherits: the values copied to the host in
// bounded chunks (here through the CPU backend's memcpy) and scanned there.
TEST_CASE("Backend::largest_f16_magnitude's default scans in chunks and finds any value out of range",
          "[session][precision]") {
    const std::shared_ptr<Backend> backend = backend_for(Device::CPU);
    const size_t count = (size_t{5} << 19) + 3;  // more than two chunks of 1M values, ragged
    std::vector<uint16_t> bits(count);
    for (size_t i = 0; i < count; ++i) bits[i] = static_cast<uint16_t>((i * 2654435761u >> 7) % 0x3c00 | (i % 2) << 15);
    uint16_t largest = 0;
    for (const uint16_t b : bits) largest = std::max<uint16_t>(largest, b & 0x7fff);
    CHECK(backend->largest_f16_magnitude(bits.data(), count, 0, nullptr) == largest);
    for (const size_t where : {size_t{0}, size_t{1} << 20, count - 1}) {
        const uint16_t kept = bits[where];
        bits[where] = 0xfc00;  // -infinity
        CHECK(backend->largest_f16_magnitude(bits.data(), count, 0, nullptr) == 0x7c00);
        bits[where] = kept;
    }
    CHECK(backend->largest_f16_magnitude(bits.data(), 0, 0, nullptr) == 0);
}
