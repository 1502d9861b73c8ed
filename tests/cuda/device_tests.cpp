// What the CUDA backend reports about its devices, and how it fails: bad indices and requests
// for more memory than exists throw, and the backend keeps working afterwards.
#include "test_util.hpp"

#include <infer/backend.hpp>
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <iostream>
#include <regex>

using namespace infer;

namespace {
std::shared_ptr<Backend> cuda_backend() { return backend_for(Device::CUDA); }
constexpr size_t kTenPetabytes = size_t{10} << 50;
}  // namespace

TEST_CASE("device properties describe a real GPU", "[cuda][device]") {
    auto backend = cuda_backend();
    REQUIRE(backend->device_count() >= 1);
    for (int i = 0; i < backend->device_count(); ++i) {
        const DeviceProperties p = backend->properties(i);
        std::cout << "cuda:" << i << ": " << p.name << ", compute capability "
                  << p.compute_capability << ", " << p.cores << " multiprocessors, "
                  << (p.total_memory_bytes >> 20) << " MiB (" << (p.free_memory_bytes >> 20)
                  << " MiB free)\n";
        CHECK_FALSE(p.name.empty());
        CHECK(p.total_memory_bytes > 0);
        CHECK(p.free_memory_bytes > 0);
        CHECK(p.free_memory_bytes <= p.total_memory_bytes);
        CHECK(std::regex_match(p.compute_capability, std::regex("[0-9]+\\.[0-9]+")));
        CHECK(p.cores > 0);
        CHECK_FALSE(p.host_accessible);
        CHECK(device_properties(Device{"cuda", i}).name == p.name);
    }
    const auto devices = available_devices();
    CHECK(std::count(devices.begin(), devices.end(), Device::CUDA) == 1);
}

TEST_CASE("a device index that does not exist is a DeviceError", "[cuda][device]") {
    auto backend = cuda_backend();
    const int missing = backend->device_count();
    CHECK_THROWS_AS(backend->properties(missing), DeviceError);
    CHECK_THROWS_AS(backend->allocate(16, missing), DeviceError);
    CHECK_THROWS_AS(backend->create_stream(-1), DeviceError);
    CHECK_THROWS_WITH(backend->allocate(16, missing),
                      Catch::Contains("cuda:" + std::to_string(missing)));
}

TEST_CASE("asking for 10 PB is OutOfMemory, and the backend still works", "[cuda][device]") {
    auto backend = cuda_backend();
    CHECK_THROWS_AS(backend->allocate(kTenPetabytes, 0), OutOfMemory);
    try {
        backend->allocate(kTenPetabytes, 0);
    } catch (const OutOfMemory& e) {
        const std::string message = e.what();
        INFO(message);
        CHECK(message.find("cuda:0") != std::string::npos);
        CHECK(message.find(std::to_string(kTenPetabytes)) != std::string::npos);
    }
    CHECK_THROWS_AS(Tensor::empty(DType::f32, {int64_t{1} << 50}, Device::CUDA), OutOfMemory);
    CHECK_THROWS_AS(backend->allocate_pinned_host(kTenPetabytes, 0), OutOfMemory);

    // Still usable: allocation, copies and a kernel all work.
    const std::vector<float> values = cuda_test::random_values(1 << 20, 23);
    const Tensor device = Tensor::from_vector(values, {1 << 20}).to(Device::CUDA);
    CHECK(device.to_vector<float>() == values);
    GraphBuilder b("after_oom");
    b.output("y", b.relu(b.input("x", DType::f32, {1 << 20})));
    const Batch out = b.build().run({{"x", device}}, Device::CUDA);
    const std::vector<float> y = out["y"].to_vector<float>();
    for (size_t i = 0; i < values.size(); ++i) REQUIRE(y[i] == std::max(values[i], 0.0f));
}

TEST_CASE("streams and empty allocations", "[cuda][device]") {
    auto backend = cuda_backend();
    auto stream = backend->create_stream(0);
    CHECK(stream->native_handle() != nullptr);
    stream->synchronize();
    auto empty = backend->allocate(0, 0);
    CHECK(empty->bytes() == 0);
    auto pinned = backend->allocate_pinned_host(64, 0);
    CHECK(pinned->pinned());
    CHECK(pinned->host_accessible());
}

// The f16 range check of an f16 plan's first run reduces on the device: it must find what a
// host scan of the same values finds, at every alignment and length, with or without a stream.
TEST_CASE("the largest f16 magnitude found on the device is the host scan's", "[cuda][device][precision]") {
    auto backend = cuda_backend();
    auto stream = backend->create_stream(0);
    constexpr size_t kCount = (size_t{3} << 20) + 5;  // several blocks' worth and a ragged tail
    std::vector<uint16_t> bits(kCount);
    std::mt19937 engine(11);
    // Ordinary magnitudes up to 2.0 (bits 0x4000), both signs.
    for (uint16_t& b : bits) b = static_cast<uint16_t>(engine() % 0x4000) | static_cast<uint16_t>(engine() & 0x8000);
    auto buffer = backend->allocate(kCount * sizeof(uint16_t), 0);
    const auto on_device = [&](size_t offset, size_t count, Stream* s) {
        backend->copy_from_host(buffer->data(), bits.data(), kCount * sizeof(uint16_t), 0, nullptr);
        return backend->largest_f16_magnitude(static_cast<uint16_t*>(buffer->data()) + offset, count, 0, s);
    };
    const auto on_host = [&](size_t offset, size_t count) {
        uint16_t largest = 0;
        for (size_t i = offset; i < offset + count; ++i) largest = std::max<uint16_t>(largest, bits[i] & 0x7fff);
        return largest;
    };
    for (const size_t offset : {size_t{0}, size_t{1}, size_t{3}, size_t{8}})
        for (const size_t count : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{1000}, kCount - offset}) {
            INFO("offset " << offset << ", count " << count);
            CHECK(on_device(offset, count, stream.get()) == on_host(offset, count));
        }
    // One value out of range anywhere is found: infinity, a NaN, negative or not, last or first.
    for (const auto& [where, value] : std::vector<std::pair<size_t, uint16_t>>{
             {kCount - 1, 0x7c00}, {0, 0xfc00}, {kCount / 2, 0x7e01}, {12345, 0xffff}}) {
        INFO("value " << value << " at " << where);
        const uint16_t kept = bits[where];
        bits[where] = value;
        CHECK(on_device(0, kCount, stream.get()) == (value & 0x7fff));
        CHECK(on_device(0, kCount, nullptr) == (value & 0x7fff));
        bits[where] = kept;
    }
    // All zeros, negative zeros and subnormals: the largest is 0 or a subnormal's bits.
    std::fill(bits.begin(), bits.end(), uint16_t{0x8000});
    CHECK(on_device(0, kCount, stream.get()) == 0);
    bits[77] = 0x0123;
    CHECK(on_device(0, kCount, stream.get()) == 0x0123);
    CHECK(backend->largest_f16_magnitude(buffer->data(), 0, 0, stream.get()) == 0);
}
