// Moving data between the host and a CUDA device: pageable and pinned memory, synchronous and
// stream-ordered copies, odd sizes, and views; the batcher's page-locked output staging. Every
// round trip must be bit-exact.
#include "test_util.hpp"

#include "core/serving/pinned_staging.hpp"

#include <infer/backend.hpp>
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <future>

using namespace infer;
using cuda_test::random_bytes;
using cuda_test::random_values;

namespace {
std::shared_ptr<Backend> cuda_backend() { return backend_for(Device::CUDA); }
}  // namespace

TEST_CASE("pageable round trips are exact at odd sizes", "[cuda][transfer]") {
    for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{1000003}}) {
        INFO(n << " bytes");
        const std::vector<uint8_t> bytes = random_bytes(static_cast<size_t>(n), 7);
        const Tensor device = Tensor::from_host(bytes.data(), DType::u8, {n}, Device::CUDA);
        CHECK(device.device() == Device::CUDA);
        CHECK(device.to(Device::CPU).to_vector<uint8_t>() == bytes);
    }
}

TEST_CASE("float tensors keep every bit through the device", "[cuda][transfer]") {
    const std::vector<float> values = random_values(4099, 11);
    const Tensor host = Tensor::from_vector(values, {4099});
    const Tensor back = host.to(Device::CUDA).to(Device::CPU);
    REQUIRE(back.nbytes() == host.nbytes());
    CHECK(std::memcmp(back.raw_data(), host.raw_data(), host.nbytes()) == 0);
}

TEST_CASE("pinned buffers copy asynchronously on a stream", "[cuda][transfer]") {
    auto backend = cuda_backend();
    for (size_t n : {size_t{1}, size_t{3}, size_t{1000003}}) {
        INFO(n << " bytes");
        Tensor source = Tensor::empty_pinned(DType::u8, {static_cast<int64_t>(n)}, Device::CUDA);
        Tensor target = Tensor::empty_pinned(DType::u8, {static_cast<int64_t>(n)}, Device::CUDA);
        CHECK(source.is_pinned());
        CHECK(source.device().is_cpu());
        const std::vector<uint8_t> bytes = random_bytes(n, 13);
        std::memcpy(source.raw_data(), bytes.data(), n);
        std::memset(target.raw_data(), 0, n);

        auto stream = backend->create_stream(0);
        REQUIRE(stream->native_handle() != nullptr);
        auto first = backend->allocate(n, 0);
        auto second = backend->allocate(n, 0);
        backend->copy_from_host(first->data(), source.raw_data(), n, 0, stream.get());
        backend->copy_on_device(second->data(), first->data(), n, 0, stream.get());
        backend->copy_to_host(target.raw_data(), second->data(), n, 0, stream.get());
        stream->synchronize();
        CHECK(std::memcmp(target.raw_data(), bytes.data(), n) == 0);
    }
}

TEST_CASE("pageable memory also copies through a stream", "[cuda][transfer]") {
    auto backend = cuda_backend();
    const size_t n = 1000003;
    const std::vector<uint8_t> bytes = random_bytes(n, 17);
    std::vector<uint8_t> back(n, 0);
    auto stream = backend->create_stream(0);
    auto buffer = backend->allocate(n, 0);
    CHECK_FALSE(buffer->host_accessible());
    CHECK(buffer->device() == Device::CUDA);
    backend->copy_from_host(buffer->data(), bytes.data(), n, 0, stream.get());
    backend->copy_to_host(back.data(), buffer->data(), n, 0, stream.get());
    stream->synchronize();
    CHECK(back == bytes);
}

TEST_CASE("synchronous copies complete before they return", "[cuda][transfer]") {
    auto backend = cuda_backend();
    const std::vector<uint8_t> bytes = random_bytes(3, 19);
    std::vector<uint8_t> back(3, 0);
    auto buffer = backend->allocate(3, 0);
    backend->copy_from_host(buffer->data(), bytes.data(), 3, 0, nullptr);
    backend->copy_to_host(back.data(), buffer->data(), 3, 0, nullptr);
    CHECK(back == bytes);
    backend->copy_from_host(buffer->data(), bytes.data(), 0, 0, nullptr);  // nothing to do
}

TEST_CASE("views move to and from the device", "[cuda][transfer]") {
    std::vector<float> values(4 * 6);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) + 0.5f;
    const Tensor host = Tensor::from_vector(values, {4, 6});

    SECTION("a strided host view uploads as its elements") {
        const Tensor view = host.slice(1, 1, 5, 2);  // columns 1 and 3
        const std::vector<float> expected{1.5f, 3.5f, 7.5f, 9.5f, 13.5f, 15.5f, 19.5f, 21.5f};
        CHECK(view.to(Device::CUDA).to(Device::CPU).to_vector<float>() == expected);
    }
    SECTION("a row slice of a device tensor downloads") {
        const Tensor device = host.to(Device::CUDA);
        const Tensor rows = device.slice(0, 1, 3);
        CHECK(rows.to(Device::CPU).to_vector<float>() ==
              std::vector<float>(values.begin() + 6, values.begin() + 18));
    }
    SECTION("a strided device view downloads") {
        const Tensor device = host.to(Device::CUDA);
        const std::vector<float> expected{1.5f, 3.5f, 5.5f, 19.5f, 21.5f, 23.5f};
        CHECK(device.slice(0, 0, 4, 3).slice(1, 1, 6, 2).to_vector<float>() == expected);
    }
    SECTION("copy_from fills a device tensor from the host") {
        Tensor device = Tensor::empty(DType::f32, {4, 6}, Device::CUDA);
        device.copy_from(host);
        CHECK(device.to_vector<float>() == values);
        CHECK(device.clone().to_vector<float>() == values);
    }
}

TEST_CASE("16-bit tensors convert on the way back", "[cuda][transfer]") {
    const std::vector<float> values{0.5f, -1.25f, 3.0f, 1024.0f};
    for (DType type : {DType::f16, DType::bf16}) {
        INFO(dtype_name(type));
        std::vector<uint16_t> bits;
        for (float v : values)
            bits.push_back(type == DType::f16 ? float_to_half_bits(v) : float_to_bfloat16_bits(v));
        const Tensor device = Tensor::from_host(bits.data(), type, {4}, Device::CUDA);
        CHECK(device.to_vector<float>() == values);  // all exactly representable
    }
}

TEST_CASE("with bound inputs and outputs on the GPU a steady run allocates and copies nothing",
          "[cuda][binding]") {
    // x [8, 64] @ w → + b → Relu → Reshape (a view) → Softmax, and a second output beside it.
    GraphBuilder b("bound_on_gpu");
    auto x = b.input("x", DType::f32, {8, 64});
    auto w = b.constant(Tensor::from_vector(cuda_test::random_values(64 * 96, 7), {64, 96}), "w");
    auto bias = b.constant(Tensor::from_vector(cuda_test::random_values(96, 8), {96}), "b");
    auto h = b.relu(b.add(b.matmul(x, w), bias));
    b.output("p", b.softmax(b.reshape(h, {8, 4, 24}), -1));
    b.output("h", h);
    const Graph graph = b.build();
    const Tensor host_x = Tensor::from_vector(cuda_test::random_values(8 * 64, 9), {8, 64});
    const Batch expected = Session(graph).run({{"x", host_x}});

    SessionOptions options;
    options.device = Device::CUDA;
    options.strict = true;
    Session session(graph, options);
    const Tensor x_gpu = host_x.to(Device::CUDA);
    Batch outputs{{"p", Tensor::empty(DType::f32, {8, 4, 24}, Device::CUDA)},
                  {"h", Tensor::empty(DType::f32, {8, 96}, Device::CUDA)}};
    const Tensor p = outputs["p"];
    session.run({{"x", x_gpu}}, outputs);  // first run: arena, workspaces, cuBLAS handle
    for (int i = 0; i < 5; ++i) {
        RunProfile profile;
        session.run({{"x", x_gpu}}, outputs, profile);
        CHECK(profile.allocations == 0);
        CHECK(profile.copies == 0);
        for (const StepTiming& step : profile.steps) CHECK(step.kind == StepKind::kernel);
    }
    CHECK(outputs["p"].buffer() == p.buffer());
    CHECK(cuda_test::relative_error(p.to_vector<float>(), expected["p"].to_vector<float>()) < 1e-5);
    CHECK(cuda_test::relative_error(outputs["h"].to_vector<float>(), expected["h"].to_vector<float>()) < 1e-5);
}

TEST_CASE("the batcher's page-locked staging reuses buffers only once they are released", "[cuda][transfer][batcher]") {
    detail::PinnedStaging staging(2);
    Tensor a = staging.take(DType::f32, {1000}, Device::CUDA);
    REQUIRE(a.defined());
    CHECK(a.is_pinned());
    CHECK(a.device() == Device::CPU);
    const void* a_memory = a.raw_data();
    Tensor b = staging.take(DType::f32, {10}, Device::CUDA);
    REQUIRE(b.defined());
    CHECK(b.raw_data() != a_memory);
    // Both held and the capacity reached: nothing to give, the caller uses ordinary memory.
    CHECK_FALSE(staging.take(DType::f32, {10}, Device::CUDA).defined());
    // A released buffer large enough comes back, as the shape asked for; a view keeps it held.
    Tensor view = a.slice(0, 0, 10);
    a = Tensor();
    CHECK_FALSE(staging.take(DType::f32, {10}, Device::CUDA).defined());
    view = Tensor();
    Tensor again = staging.take(DType::i64, {200}, Device::CUDA);
    REQUIRE(again.defined());
    CHECK(again.raw_data() == a_memory);
    CHECK(again.shape() == Shape({200}));
    // A free buffer too small is replaced by a larger one.
    b = Tensor();
    Tensor larger = staging.take(DType::f32, {5000}, Device::CUDA);
    REQUIRE(larger.defined());
    CHECK(larger.is_pinned());
    CHECK(larger.nbytes() == 20000);
}

TEST_CASE("a batcher over a CUDA session answers from page-locked copies, equal to the CPU's", "[cuda][transfer][batcher]") {
    GraphBuilder b("tokens");
    auto x = b.input("x", DType::f32, {kDynamic, kDynamic, 4});
    const std::vector<float> w = random_values(4 * 8, 5);
    b.output("y", b.relu(b.matmul(x, b.constant(Tensor::from_vector(w, {4, 8})))));
    const Graph graph = b.build();
    const Session cpu(graph), gpu(graph, {.device = Device::CUDA});
    for (bool pinned : {true, false}) {
        INFO("pinned outputs " << pinned);
        Batcher batcher(gpu, {.max_batch = 8, .workers = 2, .trim_outputs = {"y"}, .pinned_outputs = pinned});
        std::vector<Batch> items;
        std::vector<std::future<Batch>> answers;
        for (int64_t i = 0; i < 40; ++i) {
            const int64_t length = 1 + i % 5;
            items.push_back({{"x", Tensor::from_vector(random_values(static_cast<size_t>(length * 4), 100 + uint32_t(i)),
                                                       {length, 4})}});
            answers.push_back(batcher.submit(items.back()).result);
        }
        for (size_t i = 0; i < items.size(); ++i) {
            const Tensor got = answers[i].get()["y"];
            CHECK(got.device() == Device::CPU);
            const Tensor x_batch = items[i]["x"].reshape(Shape({1, items[i]["x"].shape()[0], 4}));
            const Tensor want = cpu.run({{"x", x_batch}})["y"];
            CHECK(cuda_test::relative_error(got.to_vector<float>(), want.to_vector<float>()) < 1e-5);
        }
    }
}
