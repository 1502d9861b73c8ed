#pragma once
// Tensors of uniformly drawn integers (8-bit activations and weights, i32 biases) for the unit
// tests of the integer paths, and of normally drawn floats, reproducible from a seed.
#include <infer/tensor.hpp>

#include <cstdint>
#include <random>
#include <vector>

namespace infer_test {

template <class T>
infer::Tensor random_ints(const infer::Shape& shape, int lo, int hi, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> d(lo, hi);
    std::vector<T> v(static_cast<size_t>(shape.numel()));
    for (T& x : v) x = static_cast<T>(d(rng));
    return infer::Tensor::from_vector(v, shape);
}

inline infer::Tensor random_floats(const infer::Shape& shape, float stddev, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, stddev);
    std::vector<float> v(static_cast<size_t>(shape.numel()));
    for (float& x : v) x = d(rng);
    return infer::Tensor::from_vector(v, shape);
}

}  // namespace infer_test
