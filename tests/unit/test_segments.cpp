// Segments through the public backend API: a backend is offered the runs of consecutive nodes
// placed on it, the executor runs what it claims with one call per run (each node exactly once,
// in order), a segment's state survives between runs of one context, a profiled run goes node
// by node, SessionOptions::graph_capture reaches the offer, and a malformed claim is an error.
#include "host_test_backend.hpp"

#include <infer/backend.hpp>
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

using namespace infer;

namespace {

struct Record {
    std::atomic<int> offers{0}, segment_runs{0}, node_runs{0}, state_runs{0}, states_made{0};
    std::vector<size_t> offer_sizes;
    bool allow_capture = false;
    enum class Claim { whole, tail, overlapping } claim = Claim::whole;
};

struct CountingState final : SegmentState {
    int runs = 0;
};

class RecordingSegment final : public CompiledSegment {
public:
    explicit RecordingSegment(Record& record) : record_(record) {}
    void run(SegmentRun& run) const override {
        ++record_.segment_runs;
        if (!run.state()) {
            run.state() = std::make_unique<CountingState>();
            ++record_.states_made;
        }
        auto& state = static_cast<CountingState&>(*run.state());
        record_.state_runs = ++state.runs;
        for (size_t i = 0; i < run.size(); ++i) {
            REQUIRE(run.outputs(i).size() == 1);
            run.run_step(i);
        }
    }

private:
    Record& record_;
};

// Elementwise f32 kernels on host-addressable memory, plus segments claimed as the record says.
class SegmentingBackend final : public test_support::HostTestBackend {
public:
    explicit SegmentingBackend(Record& record) : HostTestBackend("segmenting"), record_(record) {
        kernels_.add("Relu", DType::f32, [&record](KernelContext& ctx) {
            ++record.node_runs;
            const float* x = ctx.input(0).data<float>();
            float* y = ctx.output(0).data<float>();
            for (int64_t i = 0; i < ctx.output(0).numel(); ++i) y[i] = x[i] > 0 ? x[i] : 0;
        });
        kernels_.add("Add", DType::f32, [&record](KernelContext& ctx) {
            ++record.node_runs;
            const float* a = ctx.input(0).data<float>();
            const float* b = ctx.input(1).data<float>();
            float* y = ctx.output(0).data<float>();
            for (int64_t i = 0; i < ctx.output(0).numel(); ++i) y[i] = a[i] + b[i];
        });
    }
    std::vector<SegmentClaim> compile_segments(const SegmentOffer& offer) const override {
        ++record_.offers;
        record_.offer_sizes.push_back(offer.nodes.size());
        record_.allow_capture = offer.allow_capture;
        std::vector<SegmentClaim> claims;
        const size_t n = offer.nodes.size();
        switch (record_.claim) {
            case Record::Claim::whole: claims.push_back({0, n, std::make_unique<RecordingSegment>(record_)}); break;
            case Record::Claim::tail: claims.push_back({1, n, std::make_unique<RecordingSegment>(record_)}); break;
            case Record::Claim::overlapping:
                claims.push_back({0, 2, std::make_unique<RecordingSegment>(record_)});
                claims.push_back({1, n, std::make_unique<RecordingSegment>(record_)});
                break;
        }
        return claims;
    }

private:
    Record& record_;
};

struct Registered {
    explicit Registered(Record& record) { register_backend(std::make_shared<SegmentingBackend>(record)); }
    ~Registered() { unregister_backend("segmenting"); }
};

// y = relu(relu(x) + x) + x: four nodes in a row on the test device.
Graph chain(int64_t length = 4) {
    GraphBuilder b("chain");
    auto x = b.input("x", DType::f32, {length});
    b.output("y", b.add(b.relu(b.add(b.relu(x), x)), x));
    return b.build();
}

std::vector<float> expected(const std::vector<float>& x) {
    std::vector<float> y;
    for (float v : x) {
        const float inner = (v > 0 ? v : 0) + v;
        y.push_back((inner > 0 ? inner : 0) + v);
    }
    return y;
}

SessionOptions on_test_device() {
    SessionOptions options;
    options.device = Device("segmenting", 0);
    options.strict = true;
    return options;
}

}  // namespace

TEST_CASE("a claimed run of nodes runs as one segment, each node once per run", "[segments]") {
    Record record;
    Registered registered(record);
    Session session(chain(), on_test_device());
    for (int run = 1; run <= 3; ++run) {
        const std::vector<float> x{-1.5f, 0.25f * run, 2.0f, -0.5f};
        CHECK(session.run({{"x", Tensor::from_vector(x, {4})}})["y"].to_vector<float>() == expected(x));
        CHECK(record.segment_runs == run);
        CHECK(record.node_runs == 4 * run);
        CHECK(record.state_runs == run);  // the same state object, run after run
    }
    CHECK(record.offers == 1);
    REQUIRE(record.offer_sizes.size() == 1);
    CHECK(record.offer_sizes[0] == 4);
    CHECK(record.allow_capture);

    SECTION("a profiled run times node by node, outside the segment") {
        RunProfile profile;
        const std::vector<float> x{1, -2, 3, -4};
        CHECK(session.run({{"x", Tensor::from_vector(x, {4})}}, profile)["y"].to_vector<float>() == expected(x));
        CHECK(record.segment_runs == 3);
        CHECK(record.node_runs == 16);
        size_t kernels = 0;
        for (const StepTiming& step : profile.steps) kernels += step.kind == StepKind::kernel;
        CHECK(kernels == 4);
    }
}

// A service cycles through its batch shapes (infer-serve: 6 batch sizes x 5 length buckets).
// Each plan's segment state (on CUDA its captured graph, and its first run's warm-up and f16
// range checks) must survive the cycle: losing it costs every batch its warm-up again.
TEST_CASE("segment states survive a cycle through every cached plan", "[segments]") {
    Record record;
    Registered registered(record);
    SessionOptions options = on_test_device();
    options.max_cached_plans = 8;
    Session session(chain(kDynamic), options);
    for (int round = 0; round < 3; ++round)
        for (int64_t n = 1; n <= 6; ++n) {
            const std::vector<float> x(static_cast<size_t>(n), 0.5f * static_cast<float>(round) - 0.25f);
            CHECK(session.run({{"x", Tensor::from_vector(x, {n})}})["y"].to_vector<float>() == expected(x));
        }
    CHECK(record.segment_runs == 18);
    CHECK(record.states_made == 6);  // one per plan, made on its first run only
}

TEST_CASE("a segment may cover part of an offer; the rest runs node by node", "[segments]") {
    Record record;
    record.claim = Record::Claim::tail;
    Registered registered(record);
    Session session(chain(), on_test_device());
    const std::vector<float> x{3, -1, 0.5f, -7};
    CHECK(session.run({{"x", Tensor::from_vector(x, {4})}})["y"].to_vector<float>() == expected(x));
    CHECK(record.segment_runs == 1);
    CHECK(record.node_runs == 4);
}

TEST_CASE("graph_capture reaches the offer", "[segments]") {
    Record record;
    Registered registered(record);
    SessionOptions options = on_test_device();
    options.graph_capture = false;
    Session session(chain(), options);
    const std::vector<float> x{1, 2, 3, 4};
    CHECK(session.run({{"x", Tensor::from_vector(x, {4})}})["y"].to_vector<float>() == expected(x));
    CHECK_FALSE(record.allow_capture);
}

TEST_CASE("overlapping claims are refused with an error naming the backend", "[segments][errors]") {
    Record record;
    record.claim = Record::Claim::overlapping;
    Registered registered(record);
    CHECK_THROWS_WITH(Session(chain(), on_test_device()), Catch::Contains("segmenting") && Catch::Contains("overlapping"));
}
