#include <infer/error.hpp>
#include <infer/shape.hpp>

namespace infer {

int64_t Shape::numel() const {
    int64_t n = 1;
    for (int64_t d : dims_) {
        if (d < 0) throw InvalidArgument("shape " + to_string() + " has a dynamic dimension");
        n *= d;
    }
    return n;
}

bool Shape::is_static() const {
    for (int64_t d : dims_)
        if (d < 0) return false;
    return true;
}

std::vector<int64_t> Shape::contiguous_strides() const {
    std::vector<int64_t> strides(dims_.size(), 1);
    for (size_t i = dims_.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(dims_[i], 1);
    return strides;
}

size_t Shape::normalize_axis(int64_t axis, const char* what) const {
    const int64_t r = static_cast<int64_t>(rank());
    if (axis < -r || axis >= r)
        throw InvalidArgument(std::string(what) + " " + std::to_string(axis) +
                              " is out of range for shape " + to_string());
    return static_cast<size_t>(axis < 0 ? axis + r : axis);
}

Shape Shape::broadcast(const Shape& a, const Shape& b) {
    const size_t rank = std::max(a.rank(), b.rank());
    std::vector<int64_t> out(rank);
    for (size_t i = 0; i < rank; ++i) {
        const int64_t da = i < rank - a.rank() ? 1 : a[i - (rank - a.rank())];
        const int64_t db = i < rank - b.rank() ? 1 : b[i - (rank - b.rank())];
        if (da == db || db == 1) out[i] = da;
        else if (da == 1) out[i] = db;
        else if (da == kDynamic) out[i] = db;
        else if (db == kDynamic) out[i] = da;
        else
            throw InvalidArgument("shapes " + a.to_string() + " and " + b.to_string() +
                                  " do not broadcast");
    }
    return Shape(out);
}

bool Shape::matches(const Shape& declared) const {
    if (rank() != declared.rank()) return false;
    for (size_t i = 0; i < rank(); ++i)
        if (declared[i] != kDynamic && declared[i] != dims_[i]) return false;
    return true;
}

std::string Shape::to_string() const {
    std::string s = "[";
    for (size_t i = 0; i < dims_.size(); ++i) {
        if (i) s += ",";
        s += dims_[i] == kDynamic ? "?" : std::to_string(dims_[i]);
    }
    return s + "]";
}

}  // namespace infer
