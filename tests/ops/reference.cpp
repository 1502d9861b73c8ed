// Index helpers shared by the references. They avoid infer's own Shape helpers (except the
// container itself) so that a bug there cannot hide in both the kernel and its reference.
#include "reference.hpp"

#include <algorithm>
#include <stdexcept>

namespace ref {

int64_t numel(const infer::Shape& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

Dims strides_of(const infer::Shape& shape) {
    Dims strides(shape.rank(), 1);
    for (size_t i = shape.rank(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    return strides;
}

Dims unravel(int64_t flat, const infer::Shape& shape) {
    Dims index(shape.rank(), 0);
    for (size_t i = shape.rank(); i-- > 0;) {
        index[i] = flat % shape[i];
        flat /= shape[i];
    }
    return index;
}

int64_t ravel(const Dims& index, const infer::Shape& shape) {
    int64_t flat = 0;
    for (size_t i = 0; i < shape.rank(); ++i) flat = flat * shape[i] + index[i];
    return flat;
}

int64_t normalize_axis(int64_t axis, int64_t rank) {
    if (axis < -rank || axis >= rank) throw std::invalid_argument("reference: axis out of range");
    return axis < 0 ? axis + rank : axis;
}

infer::Shape broadcast_shapes(const infer::Shape& a, const infer::Shape& b) {
    const size_t rank = std::max(a.rank(), b.rank());
    Dims out(rank);
    for (size_t i = 0; i < rank; ++i) {
        // Align from the right; a missing dimension acts as 1.
        const int64_t da = i < rank - a.rank() ? 1 : a[i - (rank - a.rank())];
        const int64_t db = i < rank - b.rank() ? 1 : b[i - (rank - b.rank())];
        if (da != db && da != 1 && db != 1) throw std::invalid_argument("reference: no broadcast");
        out[i] = da == 1 ? db : da;
    }
    return infer::Shape(out);
}

double broadcast_at(const RefTensor& t, const Dims& out_index) {
    const size_t offset = out_index.size() - t.shape.rank();
    int64_t flat = 0;
    for (size_t i = 0; i < t.shape.rank(); ++i) {
        const int64_t d = t.shape[i];
        flat = flat * d + (d == 1 ? 0 : out_index[offset + i]);
    }
    return t.data[static_cast<size_t>(flat)];
}

}  // namespace ref
