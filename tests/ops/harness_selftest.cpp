// Tests of the harness itself: a user backend ("optest_mutant") with deliberately wrong Add
// kernels must be caught, and ops it lacks must be reported as unsupported, not passed.
#include <catch2/catch.hpp>

#include "runner.hpp"

#include <infer/backend.hpp>

#include <cstdlib>
#include <map>
#include <mutex>

namespace {

// Host memory with a free list, as a pooled device allocator behaves: a freed block comes
// back with its old contents, so unwritten outputs show stale values.
class MutantBackend : public infer::Backend {
public:
    explicit MutantBackend(bool skip_last_after_first_call) {
        kernels().add("Add", infer::DType::f32, [this, skip_last_after_first_call](infer::KernelContext& ctx) {
            const float* a = ctx.input(0).data<float>();
            const float* b = ctx.input(1).data<float>();
            float* y = ctx.output(0).data<float>();
            int64_t n = ctx.output(0).numel();
            if (skip_last_after_first_call ? calls_++ > 0 : false) --n;  // the last element stays stale
            for (int64_t i = 0; i < n; ++i) y[i] = a[i] + (skip_last_after_first_call ? b[i] : b[i] * 1.001f);
        });
    }
    // Buffers come back to free_ when their last tensor goes (their deleters need this backend,
    // so none outlives it); what is left there is freed with the backend.
    ~MutantBackend() override {
        for (const auto& [bytes, p] : free_) std::free(p);
    }
    std::string name() const override { return "optest_mutant"; }
    infer::DeviceProperties properties(int) const override {
        return {.name = "mutant", .cores = 1, .host_accessible = true};
    }
    std::shared_ptr<infer::Buffer> allocate(size_t bytes, int) override {
        std::lock_guard lock(mutex_);
        void* p = nullptr;
        auto it = free_.find(bytes);
        if (it != free_.end()) {
            p = it->second;
            free_.erase(it);
        } else {
            p = std::malloc(bytes ? bytes : 1);
        }
        return std::make_shared<infer::Buffer>(p, bytes, infer::Device{"optest_mutant", 0},
                                               [this, bytes](void* q) {
                                                   std::lock_guard relock(mutex_);
                                                   free_.emplace(bytes, q);
                                               },
                                               infer::Buffer::Flags{true, false});
    }

private:
    int calls_ = 0;
    std::mutex mutex_;
    std::multimap<size_t, void*> free_;  // buffers given back, for reuse by later allocations
};

ops::Outcome run_on_mutant(bool skip_last, const ops::Case& c, infer::DType dtype) {
    infer::register_backend(std::make_shared<MutantBackend>(skip_last));
    ops::Outcome outcome;
    try {
        outcome = ops::run_case(c, infer::Device{"optest_mutant", 0}, dtype);
    } catch (...) {
        infer::unregister_backend("optest_mutant");
        throw;
    }
    infer::unregister_backend("optest_mutant");
    return outcome;
}

const ops::Case& case_named(const std::string& op, const std::string& label) {
    for (const ops::Case& c : ops::all_cases())
        if (c.op == op && c.label == label) return c;
    throw std::runtime_error("no case " + op + " " + label);
}

}  // namespace

TEST_CASE("harness catches wrong, stale and unsupported kernels", "[ops][harness]") {
    const ops::Case& add = case_named("Add", "[2,3,4] [2,3,4]");
    SECTION("a wrong value fails") {
        const ops::Outcome o = run_on_mutant(false, add, infer::DType::f32);
        INFO(o.detail);
        CHECK(o.kind == ops::Outcome::failed);
    }
    SECTION("an element left from the previous run fails") {
        const ops::Outcome o = run_on_mutant(true, add, infer::DType::f32);
        INFO(o.detail);
        CHECK(o.kind == ops::Outcome::failed);
        CHECK(o.detail.find("run 2") != std::string::npos);
    }
    SECTION("an op or dtype without a kernel is unsupported, not passed") {
        CHECK(run_on_mutant(false, add, infer::DType::f16).kind == ops::Outcome::unsupported);
        CHECK(run_on_mutant(false, case_named("Relu", "[17]"), infer::DType::f32).kind == ops::Outcome::unsupported);
    }
}
