// The kernel registry and compiled kernels, seen through the public backend API: a kernel under
// an unknown op name is refused, a node is compiled once per plan (not per run), and constant
// inputs are prepacked once per session however many plans use them.
#include "core/ops/op_schema.hpp"

#include "host_test_backend.hpp"

#include <infer/backend.hpp>
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>

using namespace infer;

namespace {

struct Counters {
    std::atomic<int> compiles{0}, runs{0}, prepacks{0};
};

// y[i, j] = sum_k x[i, k] * w[k, j], with w prepacked (here: simply copied) at compile time.
class PrepackedMatMul final : public CompiledKernel {
public:
    PrepackedMatMul(Tensor w, Counters& counters) : w_(std::move(w)), counters_(counters) {}
    size_t workspace_bytes() const override { return 128; }
    void run(KernelContext& ctx) const override {
        ++counters_.runs;
        const Tensor& x = ctx.input(0);
        const int64_t m = x.shape()[0], k = x.shape()[1], n = w_.shape()[1];
        const float* px = x.data<float>();
        const float* pw = w_.data<float>();
        float* py = ctx.output(0).data<float>();
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double sum = 0;
                for (int64_t t = 0; t < k; ++t) sum += double(px[i * k + t]) * pw[t * n + j];
                py[i * n + j] = static_cast<float>(sum);
            }
    }

private:
    Tensor w_;
    Counters& counters_;
};

class CompilingBackend final : public test_support::HostTestBackend {
public:
    explicit CompilingBackend(Counters& counters) : HostTestBackend("compiling") {
        kernels_.add_compiled("MatMul", DType::f32, [&counters](const CompileContext& c) -> std::unique_ptr<CompiledKernel> {
            ++counters.compiles;
            if (!c.constant(1)) throw Unsupported("this test backend multiplies by constant weights only");
            Tensor w = c.prepacked(1, "copy", [&counters](const Tensor& host) {
                ++counters.prepacks;
                return host.clone();
            });
            return std::make_unique<PrepackedMatMul>(w, counters);
        });
    }
};

}  // namespace

TEST_CASE("a kernel under an op name the op table lacks is refused", "[kernels][errors]") {
    KernelRegistry registry;
    const Kernel nothing = [](KernelContext&) {};
    CHECK_THROWS_AS(registry.add("MatMull", DType::f32, nothing), InvalidArgument);
    CHECK_THROWS_WITH(registry.add("MatMull", DType::f32, nothing), Catch::Contains("'MatMull'"));
    CHECK(registry.find("MatMull", DType::f32) == nullptr);
    registry.add("MatMul", DType::f32, nothing);
    CHECK(registry.find("MatMul", DType::f32) != nullptr);
}

TEST_CASE("op ids are the table's indices and name every op once", "[kernels]") {
    const auto& ops = detail::all_ops();
    for (size_t i = 0; i < ops.size(); ++i) {
        CHECK(ops[i].id == i);
        CHECK(detail::find_op(ops[i].name) == &ops[i]);
    }
    CHECK(detail::op_schema(detail::op_id("MatMul")).traits.precision == detail::PrecisionClass::low);
    CHECK(detail::op_schema(detail::op_id("Reshape")).traits.view_of == 0);
    CHECK(detail::op_schema(detail::op_id("Shape")).traits.reads_shape_only);
    CHECK_THROWS_AS(detail::op_id("NoSuchOp"), std::logic_error);
}

TEST_CASE("nodes compile once per plan and constants prepack once per session", "[kernels]") {
    Counters counters;
    register_backend(std::make_shared<CompilingBackend>(counters));
    struct Unregister {
        ~Unregister() { unregister_backend("compiling"); }
    } unregister;

    GraphBuilder b("prepack");
    auto x = b.input("x", DType::f32, {kDynamic, 2});
    auto w = b.constant(Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}), "w");
    b.output("y", b.matmul(x, w));
    SessionOptions options;
    options.device = Device("compiling", 0);
    options.strict = true;
    Session session(b.build(), options);

    for (int rows : {1, 1, 4, 1, 4}) {
        std::vector<float> xs(static_cast<size_t>(rows) * 2);
        for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.5f + static_cast<float>(i);
        const std::vector<float> y = session.run({{"x", Tensor::from_vector(xs, {rows, 2})}})["y"].to_vector<float>();
        REQUIRE(y.size() == static_cast<size_t>(rows) * 3);
        for (int i = 0; i < rows; ++i)
            for (int j = 0; j < 3; ++j) CHECK(y[i * 3 + j] == Approx(xs[i * 2] * (1 + j) + xs[i * 2 + 1] * (4 + j)));
    }
    CHECK(counters.runs == 5);
    CHECK(counters.compiles == 2);  // one plan per input shape
    CHECK(counters.prepacks == 1);  // shared by both plans
    CHECK(session.memory().workspace_bytes >= 128);
    CHECK(session.memory().weights_bytes >= 2 * 6 * sizeof(float));  // the weight and its prepacked copy
}

TEST_CASE("bad RoiAlign, STFT and DFT inputs are clear errors and the session stays usable", "[kernels][errors]") {
    using namespace infer;
    {
        GraphBuilder b("roi");
        const Value x = b.input("x", DType::f32, {kDynamic, 2, 6, 6});
        const Value rois = b.input("rois", DType::f32, {kDynamic, 4});
        const Value images = b.input("images", DType::i64, {kDynamic});
        b.output("y", b.op1("RoiAlign", {x, rois, images}, {{"output_height", int64_t{2}}, {"output_width", int64_t{2}}}));
        const Session session(b.build());
        const Tensor map = Tensor::from_vector(std::vector<float>(2 * 2 * 36, 1.0f), {2, 2, 6, 6});
        const Tensor boxes = Tensor::from_vector(std::vector<float>{0, 0, 4, 4}, {1, 4});
        try {
            session.run({{"x", map}, {"rois", boxes}, {"images", Tensor::from_vector(std::vector<int64_t>{5}, {1})}});
            FAIL("an image index past the batch was accepted");
        } catch (const InvalidArgument& e) {
            CHECK_THAT(std::string(e.what()), Catch::Contains("outside the batch of 2"));
        }
        const Batch out = session.run({{"x", map}, {"rois", boxes}, {"images", Tensor::from_vector(std::vector<int64_t>{1}, {1})}});
        CHECK(out["y"].shape() == Shape{1, 2, 2, 2});
        CHECK(out["y"].to_vector<float>() == std::vector<float>(8, 1.0f));  // the average of ones
    }
    {
        GraphBuilder b("stft");
        const Value signal = b.input("signal", DType::f32, {1, kDynamic, 1});
        b.output("y", b.op1("STFT", {signal, b.constant_i64({4}), Value{}, b.constant_i64({16})}));
        const Session session(b.build());
        try {
            session.run({{"signal", Tensor::from_vector(std::vector<float>(10, 0.5f), {1, 10, 1})}});
            FAIL("a signal shorter than a frame was accepted");
        } catch (const Error& e) {
            CHECK_THAT(std::string(e.what()), Catch::Contains("shorter than a frame"));
        }
        CHECK(session.run({{"signal", Tensor::from_vector(std::vector<float>(24, 0.5f), {1, 24, 1})}})["y"].shape() ==
              Shape{1, 3, 9, 2});
    }
    {
        GraphBuilder b("dft");
        const Value x = b.input("x", DType::f32, {2, 8, 1});
        b.output("y", b.op1("DFT", {x}, {{"axis", int64_t{2}}}));  // the real/imaginary axis is no signal axis
        CHECK_THROWS_WITH(Session(b.build()), Catch::Contains("must be a signal axis"));
    }
}
