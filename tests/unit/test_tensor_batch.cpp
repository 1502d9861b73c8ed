#include <infer/infer.hpp>

#include <catch2/catch.hpp>

#include <numeric>

using namespace infer;

namespace {
Tensor iota_tensor(const Shape& shape) {
    std::vector<float> v(static_cast<size_t>(shape.numel()));
    std::iota(v.begin(), v.end(), 1.0f);
    return Tensor::from_vector(v, shape);
}
}  // namespace

TEST_CASE("tensors own a copy of host data and give typed access", "[tensor]") {
    std::vector<float> v{1, 2, 3, 4, 5, 6};
    Tensor t = Tensor::from_host(v.data(), DType::f32, {2, 3});
    v[0] = 100;  // the tensor copied the data
    CHECK(t.data<float>()[0] == 1);
    CHECK(t.numel() == 6);
    CHECK(t.nbytes() == 24);
    CHECK(t.device() == Device::CPU);
    CHECK(t.is_contiguous());
    CHECK(t.describe() == "f32[2,3] on cpu");
    CHECK_THROWS_AS(t.data<int32_t>(), InvalidArgument);
    CHECK_THROWS_AS(Tensor::from_vector(v, {4}), InvalidArgument);
    CHECK_FALSE(Tensor().defined());
}

TEST_CASE("reshape and slice are views that share the buffer", "[tensor]") {
    Tensor t = iota_tensor({2, 3, 4});
    Tensor r = t.reshape({6, -1});
    CHECK(r.shape() == Shape({6, 4}));
    CHECK(r.buffer() == t.buffer());
    CHECK_THROWS_AS(t.reshape({5, -1}), InvalidArgument);

    Tensor s = t.slice(2, 1, 4, 2);  // columns 1 and 3
    CHECK(s.shape() == Shape({2, 3, 2}));
    CHECK(s.buffer() == t.buffer());
    CHECK_FALSE(s.is_contiguous());
    const std::vector<float> picked = s.to_vector<float>();
    CHECK(picked == std::vector<float>{2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24});
    Tensor dense = s.contiguous();
    CHECK(dense.is_contiguous());
    CHECK(dense.to_vector<float>() == picked);
    CHECK(t.slice(-1, -2, 100).shape() == Shape({2, 3, 2}));  // negative indices, clamped end
}

TEST_CASE("to() copies only when the device differs, and clone copies", "[tensor]") {
    Tensor t = iota_tensor({3});
    CHECK(t.to(Device::CPU).buffer() == t.buffer());
    Tensor c = t.clone();
    CHECK(c.buffer() != t.buffer());
    c.data<float>()[0] = 42;
    CHECK(t.data<float>()[0] == 1);
    Tensor dst = Tensor::empty(DType::f32, {3});
    dst.copy_from(t);
    CHECK(dst.to_vector<float>() == t.to_vector<float>());
    CHECK_THROWS_AS(dst.copy_from(iota_tensor({4})), InvalidArgument);
}

TEST_CASE("to_vector converts between dtypes", "[tensor]") {
    Tensor t = Tensor::from_vector(std::vector<int64_t>{-3, 0, 7}, {3});
    CHECK(t.to_vector<float>() == std::vector<float>{-3, 0, 7});
    CHECK(t.to_vector<int32_t>() == std::vector<int32_t>{-3, 0, 7});
    Tensor h = Tensor::from_vector(std::vector<half>{half(0.5f), half(-2.0f)}, {2});
    CHECK(h.to_vector<float>() == std::vector<float>{0.5f, -2.0f});
}

TEST_CASE("stack, split, pad and pad_and_stack assemble batches", "[batch]") {
    Tensor a = Tensor::from_vector(std::vector<int64_t>{1, 2, 3}, {3});
    Tensor b = Tensor::from_vector(std::vector<int64_t>{4, 5}, {2});
    Tensor padded = pad_and_stack({a, b}, 0);
    CHECK(padded.shape() == Shape({2, 3}));
    CHECK(padded.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3, 4, 5, 0});

    // To a longer length, rows of several values, a view (a slice) among the items.
    Tensor rows = stack_padded({iota_tensor({2, 2}), iota_tensor({3, 2}).slice(0, 1, 2)}, 3, -1.0);
    CHECK(rows.shape() == Shape({2, 3, 2}));
    CHECK(rows.to_vector<float>() == std::vector<float>{1, 2, 3, 4, -1, -1, 3, 4, -1, -1, -1, -1});
    CHECK_THROWS_WITH(stack_padded({iota_tensor({3})}, 2), Catch::Contains("longer than the length 2"));
    CHECK_THROWS_WITH(stack_padded({iota_tensor({2, 2}), iota_tensor({2, 3})}, 2),
                      Catch::Contains("may differ only along axis 0"));
    CHECK_THROWS_AS(stack_padded({iota_tensor({2}), Tensor::from_vector(std::vector<int64_t>{1}, {1})}, 2),
                    InvalidArgument);
    CHECK_THROWS_AS(stack_padded({}, 2), InvalidArgument);

    Tensor p = pad(iota_tensor({2, 2}), 1, 3, -1.0);
    CHECK(p.to_vector<float>() == std::vector<float>{1, 2, -1, 3, 4, -1});
    CHECK_THROWS_AS(pad(iota_tensor({2, 2}), 1, 1), InvalidArgument);

    Tensor s = stack({iota_tensor({2}), iota_tensor({2})});
    CHECK(s.shape() == Shape({2, 2}));
    CHECK_THROWS_AS(stack({iota_tensor({2}), iota_tensor({3})}), InvalidArgument);

    auto pieces = split(iota_tensor({5, 2}), {2, 3});
    REQUIRE(pieces.size() == 2);
    CHECK(pieces[1].shape() == Shape({3, 2}));
    CHECK(pieces[1].to_vector<float>()[0] == 5);
    CHECK_THROWS_AS(split(iota_tensor({5, 2}), {2, 2}), InvalidArgument);

    Batch x{{"ids", a}, {"more", a}};
    Batch y{{"ids", a}, {"more", a}};
    Batch both = stack(std::vector<Batch>{x, y});
    CHECK(both["ids"].shape() == Shape({2, 3}));
    auto back = split(both, {1, 1});
    CHECK(back[1]["more"].shape() == Shape({1, 3}));
}

TEST_CASE("a batch names what it holds when asked for something else", "[batch][errors]") {
    Batch batch{{"input_ids", iota_tensor({1})}};
    try {
        (void)batch["attention_mask"];
        FAIL("expected an error");
    } catch (const InvalidArgument& e) {
        const std::string message = e.what();
        CHECK(message.find("attention_mask") != std::string::npos);
        CHECK(message.find("input_ids") != std::string::npos);
    }
}
