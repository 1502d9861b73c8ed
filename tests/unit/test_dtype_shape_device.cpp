#include "backends/cpu/kernels/half_convert.hpp"
#include "core/cpu_isa.hpp"
#include "core/half_convert.hpp"

#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

using namespace infer;

TEST_CASE("dtype table names and sizes every dtype", "[dtype]") {
    CHECK(dtype_size(DType::f32) == 4);
    CHECK(dtype_size(DType::f16) == 2);
    CHECK(dtype_size(DType::bf16) == 2);
    CHECK(dtype_size(DType::i64) == 8);
    CHECK(dtype_size(DType::boolean) == 1);
    for (DType t : kAllDTypes) CHECK(parse_dtype(dtype_name(t)) == t);
    CHECK_THROWS_AS(parse_dtype("f128"), InvalidArgument);
}

TEST_CASE("half conversion rounds to nearest even and keeps specials", "[dtype]") {
    CHECK(float(half(1.0f)) == 1.0f);
    CHECK(float(half(65504.0f)) == 65504.0f);
    CHECK(std::isinf(float(half(65520.0f))));        // rounds up past the largest half
    CHECK(float(half(1.0f + 1.0f / 2048)) == 1.0f);  // a tie rounds to the even mantissa
    CHECK(float(half(5.9604645e-8f)) == 5.9604645e-8f);  // the smallest subnormal
    CHECK(std::isnan(float(half(std::nanf("")))));
    CHECK(float(half(-2.5f)) == -2.5f);
    // Against a float64 reference: the error of a round trip is at most half an ulp.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1000.f, 1000.f);
    for (int i = 0; i < 10000; ++i) {
        const float x = dist(rng);
        const double ulp = std::ldexp(1.0, std::ilogb(x) - 10);
        CHECK(std::abs(double(float(half(x))) - double(x)) <= ulp / 2);
    }
}

TEST_CASE("bfloat16 conversion rounds to nearest even", "[dtype]") {
    CHECK(float(bfloat16(1.0f)) == 1.0f);
    CHECK(float(bfloat16(3.0e38f)) > 2.9e38f);
    CHECK(std::isnan(float(bfloat16(std::nanf("")))));
    std::mt19937 rng(8);
    std::uniform_real_distribution<float> dist(-1e6f, 1e6f);
    for (int i = 0; i < 10000; ++i) {
        const float x = dist(rng);
        const double ulp = std::ldexp(1.0, std::ilogb(x) - 7);
        CHECK(std::abs(double(float(bfloat16(x))) - double(x)) <= ulp / 2);
    }
}

// The CPU kernels' narrowing (16 lanes at a time where AVX-512 is there, the rest one by one)
// gives the bits of round-to-nearest-even for every kind of value: ties both ways, denormals
// (kept, not flushed), infinities, NaNs (quiet, sign and top payload kept), random bit patterns.
TEST_CASE("the CPU's f32 to bf16 narrowing gives round-to-nearest-even bits for every kind of value", "[dtype]") {
    std::vector<uint32_t> bits{0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00008000u, 0x00018000u,
                               0x3f808000u, 0x3f818000u, 0x3f80ffffu, 0x7f7fffffu, 0x7f800000u, 0xff800000u,
                               0x7fc00000u, 0x7f800001u, 0xff812345u, 0x7fffffffu, 0x3f7fffffu, 0x477fe000u};
    std::mt19937 rng(9);
    while (bits.size() < 1000) bits.push_back(static_cast<uint32_t>(rng()));
    std::vector<float> values(bits.size());
    std::memcpy(values.data(), bits.data(), bits.size() * sizeof(float));
    std::vector<uint16_t> got(values.size());
    infer::cpu::float_to_bfloat16(values.data(), got.data(), values.size());
    for (size_t i = 0; i < bits.size(); ++i) {
        const uint32_t f = bits[i];
        const bool nan = (f & 0x7fffffffu) > 0x7f800000u;
        const auto want = static_cast<uint16_t>(nan ? ((f >> 16) | 0x40u) : (f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
        INFO("f32 bits " << std::hex << f);
        CHECK(got[i] == want);
    }
}

// The widening moves every bf16 bit pattern up 16 bits, NaN payloads and signs included; from an
// odd start, so that vectorized loads are unaligned and a tail is left.
TEST_CASE("the bf16 to f32 widening keeps every bit pattern", "[dtype]") {
    std::vector<uint16_t> bits(3 + 65536);
    for (uint32_t b = 0; b < 65536; ++b) bits[3 + b] = static_cast<uint16_t>(b);
    std::vector<float> widened(bits.size());
    infer::detail::bfloat16_to_float_serial(bits.data() + 3, widened.data() + 3, 65536);
    size_t wrong = 0;
    for (uint32_t b = 0; b < 65536; ++b) {
        uint32_t got = 0;
        std::memcpy(&got, &widened[3 + b], sizeof got);
        wrong += got != b << 16;
    }
    CHECK(wrong == 0);
}

TEST_CASE("shapes broadcast like NumPy and name the culprit when they cannot", "[shape]") {
    CHECK(Shape::broadcast({2, 1, 4}, {3, 1}) == Shape({2, 3, 4}));
    CHECK(Shape::broadcast({}, {5}) == Shape({5}));
    CHECK(Shape::broadcast({kDynamic, 4}, {3, 1}) == Shape({3, 4}));
    try {
        Shape::broadcast({2, 3}, {4});
        FAIL("expected an error");
    } catch (const InvalidArgument& e) {
        CHECK(std::string(e.what()).find("[2,3]") != std::string::npos);
    }
    CHECK(Shape({2, 3}).numel() == 6);
    CHECK(Shape().numel() == 1);
    CHECK(Shape({2, 3, 4}).contiguous_strides() == std::vector<int64_t>{12, 4, 1});
    CHECK(Shape({2, 3}).matches(Shape({kDynamic, 3})));
    CHECK_FALSE(Shape({2, 3}).matches(Shape({2, 4})));
    CHECK(Shape({kDynamic, 3}).to_string() == "[?,3]");
    CHECK_THROWS_AS(Shape({kDynamic}).numel(), InvalidArgument);
}

TEST_CASE("devices parse from and print to strings", "[device]") {
    CHECK(Device::parse("cpu") == Device::CPU);
    CHECK(Device::parse("cuda") == Device::CUDA);
    CHECK(Device::parse("cuda:1") == Device("cuda", 1));
    CHECK(Device::parse("my_accel:3").to_string() == "my_accel:3");
    CHECK(Device::CPU.to_string() == "cpu");
    CHECK(Device::CUDA.to_string() == "cuda:0");
    CHECK_THROWS_AS(Device::parse("cuda:x"), InvalidArgument);
    CHECK_THROWS_AS(Device::parse(""), InvalidArgument);
    CHECK_THROWS_AS(Device::parse("CUDA"), InvalidArgument);
    CHECK_THROWS_AS(Device::parse("cuda:-1"), InvalidArgument);
}

TEST_CASE("the cpu device is always available and describes itself", "[device]") {
    const auto devices = available_devices();
    CHECK(std::find(devices.begin(), devices.end(), Device::CPU) != devices.end());
    const DeviceProperties p = device_properties(Device::CPU);
    CHECK(p.host_accessible);
    CHECK(p.cores > 0);
    CHECK(p.total_memory_bytes > 0);
}

TEST_CASE("unknown and absent devices give a DeviceError naming them", "[device][errors]") {
    try {
        device_properties(Device("tpu"));
        FAIL("expected an error");
    } catch (const DeviceError& e) {
        CHECK(std::string(e.what()).find("tpu") != std::string::npos);
        CHECK(std::string(e.what()).find("cpu") != std::string::npos);  // lists what exists
    }
    CHECK_THROWS_AS(device_properties(Device("cpu", 3)), DeviceError);
}

TEST_CASE("a CPU below the CPU backend's instruction-set level is refused with a DeviceError", "[device][errors]") {
    // What the start-up check throws where __builtin_cpu_supports says no (no such CPU here).
    CHECK_NOTHROW(infer::detail::require_cpu_isa("x86-64-v3", true));
    CHECK_THROWS_AS(infer::detail::require_cpu_isa("x86-64-v3", false), infer::DeviceError);
    CHECK_THROWS_WITH(infer::detail::require_cpu_isa("x86-64-v3", false),
                      Catch::Contains("x86-64-v3") && Catch::Contains("-DINFER_CPU_ISA=x86-64"));
}
