// TensorScatter as a key/value cache: functional when its output is a new tensor (the past cache
// is left as it was), in place when the caller binds the past cache as the output too (only the
// update's rows change, nothing is allocated or copied), and bad write positions are errors.
#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <numeric>

using namespace infer;

namespace {

Graph cache_update_graph() {
    GraphBuilder b("cache");
    const Value past = b.input("past", DType::f32, {kDynamic, kDynamic, 4});
    const Value update = b.input("update", DType::f32, {kDynamic, kDynamic, 4});
    const Value write_indices = b.input("write_indices", DType::i64, {kDynamic});
    b.output("present", b.op1("TensorScatter", {past, update, write_indices}, {{"axis", int64_t{1}}}));
    return b.build();
}

Tensor counting(const Shape& shape, float start) {
    std::vector<float> values(static_cast<size_t>(shape.numel()));
    std::iota(values.begin(), values.end(), start);
    return Tensor::from_vector(values, shape);
}

}  // namespace

TEST_CASE("TensorScatter updates a bound cache in place, and a fresh output functionally", "[kv_cache]") {
    Session session(cache_update_graph());
    Tensor cache = counting({2, 8, 4}, 0.0f);
    const std::vector<float> before = cache.to_vector<float>();
    const Tensor update = counting({2, 3, 4}, 1000.0f);
    const Tensor where = Tensor::from_vector(std::vector<int64_t>{0, 5}, {2});
    const Batch inputs{{"past", cache}, {"update", update}, {"write_indices", where}};

    const Tensor fresh = session.run(inputs)["present"];
    CHECK(cache.to_vector<float>() == before);  // the past cache is an input, left alone

    Batch outputs{{"present", cache}};
    RunProfile profile;
    session.run(inputs, outputs);  // the plan's first run
    session.run(inputs, outputs, profile);
    CHECK(profile.allocations == 0);
    CHECK(profile.copies == 0);
    CHECK(outputs["present"].raw_data() == cache.raw_data());

    const std::vector<float> after = cache.to_vector<float>(), want = fresh.to_vector<float>();
    CHECK(after == want);
    const std::vector<float> rows = update.to_vector<float>();
    for (int64_t b = 0; b < 2; ++b)
        for (int64_t slot = 0; slot < 8; ++slot) {
            const int64_t start = b == 0 ? 0 : 5;
            for (int64_t d = 0; d < 4; ++d) {
                const size_t at = static_cast<size_t>((b * 8 + slot) * 4 + d);
                const bool written = slot >= start && slot < start + 3;
                CHECK(after[at] == (written ? rows[static_cast<size_t>((b * 3 + slot - start) * 4 + d)] : before[at]));
            }
        }
}

TEST_CASE("TensorScatter refuses writes outside the cache and the session stays usable", "[kv_cache]") {
    Session session(cache_update_graph());
    const Tensor cache = counting({2, 8, 4}, 0.0f);
    const Tensor update = counting({2, 3, 4}, 1000.0f);
    CHECK_THROWS_AS(session.run({{"past", cache}, {"update", update}, {"write_indices", Tensor::from_vector(std::vector<int64_t>{0, 6}, {2})}}),
                    InvalidArgument);
    CHECK_THROWS_AS(session.run({{"past", cache}, {"update", update}, {"write_indices", Tensor::from_vector(std::vector<int64_t>{-1, 0}, {2})}}),
                    InvalidArgument);
    // An update longer than the cache fails the shape check of the plan (as any node's shapes do).
    CHECK_THROWS_AS(session.run({{"past", cache}, {"update", counting({2, 9, 4}, 0.0f)}, {"write_indices", Tensor::from_vector(std::vector<int64_t>{0, 0}, {2})}}),
                    ModelError);
    CHECK_NOTHROW(session.run({{"past", cache}, {"update", update}, {"write_indices", Tensor::from_vector(std::vector<int64_t>{5, 5}, {2})}}));
}
