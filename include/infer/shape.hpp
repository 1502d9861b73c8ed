#pragma once
// A tensor's dimensions. In graph declarations a dimension may be kDynamic (-1): its size is
// only known when a batch arrives (batch size, sequence length).
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace infer {

inline constexpr int64_t kDynamic = -1;

class Shape {
public:
    Shape() = default;  // a scalar: rank 0, one element
    Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
    explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}

    size_t rank() const { return dims_.size(); }
    int64_t operator[](size_t axis) const { return dims_[axis]; }
    int64_t& operator[](size_t axis) { return dims_[axis]; }
    const std::vector<int64_t>& dims() const { return dims_; }
    auto begin() const { return dims_.begin(); }
    auto end() const { return dims_.end(); }

    // Number of elements; throws InvalidArgument when a dimension is dynamic.
    int64_t numel() const;
    bool is_static() const;  // no dynamic dimension
    // Element strides of a dense row-major layout of this shape.
    std::vector<int64_t> contiguous_strides() const;
    // An axis in [-rank, rank) made non-negative; throws InvalidArgument naming `what` otherwise.
    size_t normalize_axis(int64_t axis, const char* what = "axis") const;

    // NumPy broadcasting of two shapes; throws InvalidArgument when they do not broadcast.
    // Dynamic dimensions broadcast with anything and stay dynamic unless the other side fixes them.
    static Shape broadcast(const Shape& a, const Shape& b);
    // Whether a tensor of this shape is acceptable where `declared` (possibly dynamic) is expected.
    bool matches(const Shape& declared) const;

    std::string to_string() const;  // "[2,3,?]"
    friend bool operator==(const Shape&, const Shape&) = default;

private:
    std::vector<int64_t> dims_;
};

}  // namespace infer
