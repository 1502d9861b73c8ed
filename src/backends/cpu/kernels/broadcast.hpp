#pragma once
// Walks a dense output and N strided inputs together, in rows: the innermost dimension after
// merging every run of dimensions that all operands traverse contiguously. Broadcast inputs
// have stride 0 along the dimensions they repeat, so one loop serves elementwise ops,
// Expand, Transpose and Slice alike; parallel_pieces spreads the rows over the thread pool.
#include "backends/cpu/kernels/parallel.hpp"

#include <infer/shape.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace infer::cpu {

// Element strides that read a tensor of `in` as if it had shape `out` (NumPy broadcasting).
inline std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
    std::vector<int64_t> strides(out.rank(), 0);
    int64_t stride = 1;
    for (size_t i = 0; i < in.rank(); ++i) {
        const size_t in_axis = in.rank() - 1 - i, out_axis = out.rank() - 1 - i;
        if (in[in_axis] != 1) strides[out_axis] = stride;
        stride *= in[in_axis];
    }
    return strides;
}

template <size_t N>
class StridedRows {
public:
    using Offsets = std::array<int64_t, N>;

    // `dims` is the dense output's shape; strides[k] are input k's element strides over it.
    StridedRows(const std::vector<int64_t>& dims,
                const std::array<std::vector<int64_t>, N>& strides) {
        std::vector<int64_t> kept;
        std::array<std::vector<int64_t>, N> kept_strides;
        for (size_t d = 0; d < dims.size(); ++d) {
            if (dims[d] == 1) continue;
            if (dims[d] == 0) empty_ = true;
            if (!kept.empty() && mergeable(kept_strides, strides, d, dims[d])) {
                kept.back() *= dims[d];
                for (size_t k = 0; k < N; ++k) kept_strides[k].back() = strides[k][d];
                continue;
            }
            kept.push_back(dims[d]);
            for (size_t k = 0; k < N; ++k) kept_strides[k].push_back(strides[k][d]);
        }
        if (kept.empty()) {  // a single element
            kept.push_back(1);
            for (size_t k = 0; k < N; ++k) kept_strides[k].push_back(0);
        }
        row_length_ = kept.back();
        for (size_t k = 0; k < N; ++k) inner_strides_[k] = kept_strides[k].back();
        kept.pop_back();
        outer_dims_ = kept;
        for (size_t k = 0; k < N; ++k) {
            kept_strides[k].pop_back();
            outer_strides_[k] = kept_strides[k];
        }
        rows_ = empty_ ? 0 : 1;
        for (int64_t d : outer_dims_) rows_ *= d;
    }

    // The common case: a dense output of shape `out` and N inputs broadcast to it.
    static StridedRows broadcast(const Shape& out, const std::array<const Shape*, N>& inputs) {
        std::array<std::vector<int64_t>, N> strides;
        for (size_t k = 0; k < N; ++k) strides[k] = broadcast_strides(*inputs[k], out);
        return StridedRows(out.dims(), strides);
    }

    int64_t rows() const { return rows_; }
    int64_t row_length() const { return row_length_; }
    // Each input's stride along a row: 1 when contiguous, 0 when one value repeats.
    const Offsets& inner_strides() const { return inner_strides_; }

    // Calls row(output_offset, input_offsets) for rows [begin, end).
    template <class Row>
    void for_rows(int64_t begin, int64_t end, Row&& row) const {
        if (begin >= end) return;
        const size_t rank = outer_dims_.size();
        std::vector<int64_t> index(rank);
        Offsets offsets{};
        for (size_t d = rank, rest = static_cast<size_t>(begin); d-- > 0;) {
            index[d] = static_cast<int64_t>(rest) % outer_dims_[d];
            rest /= static_cast<size_t>(outer_dims_[d]);
            for (size_t k = 0; k < N; ++k) offsets[k] += index[d] * outer_strides_[k][d];
        }
        for (int64_t r = begin; r < end; ++r) {
            row(r * row_length_, offsets);
            for (size_t d = rank; d-- > 0;) {
                for (size_t k = 0; k < N; ++k) offsets[k] += outer_strides_[k][d];
                if (++index[d] < outer_dims_[d]) break;
                for (size_t k = 0; k < N; ++k) offsets[k] -= outer_dims_[d] * outer_strides_[k][d];
                index[d] = 0;
            }
        }
    }

    // Calls piece(output_offset, input_offsets, length) over the whole output, spread over the
    // thread pool. Rows longer than two pieces are cut into pieces: operands that merge into a
    // single row (two tensors of one shape, a tensor and a scalar) must still use every thread.
    template <class Piece>
    void parallel_pieces(Piece&& piece) const {
        constexpr int64_t kPiece = 16384;  // elements: large enough to hide the scheduling cost
        const int64_t n = row_length_;
        if (n <= 2 * kPiece) {
            parallel_for(rows_, grain_for(n, kPiece), [&](int64_t begin, int64_t end) {
                for_rows(begin, end, [&](int64_t o, const Offsets& in) { piece(o, in, n); });
            });
            return;
        }
        const int64_t per_row = (n + kPiece - 1) / kPiece;
        const int64_t length = (n + per_row - 1) / per_row;
        parallel_for(rows_ * per_row, 1, [&](int64_t begin, int64_t end) {
            for (int64_t p = begin; p < end; ++p) {
                const int64_t row = p / per_row, start = (p % per_row) * length;
                for_rows(row, row + 1, [&](int64_t o, const Offsets& in) {
                    Offsets shifted = in;
                    for (size_t k = 0; k < N; ++k) shifted[k] += start * inner_strides_[k];
                    piece(o + start, shifted, std::min(length, n - start));
                });
            }
        });
    }

private:
    // Whether dimension d folds into the previous kept one for every operand (the dense
    // output always folds).
    static bool mergeable(const std::array<std::vector<int64_t>, N>& kept_strides,
                          const std::array<std::vector<int64_t>, N>& strides, size_t d,
                          int64_t extent) {
        for (size_t k = 0; k < N; ++k)
            if (kept_strides[k].back() != strides[k][d] * extent) return false;
        return true;
    }

    std::vector<int64_t> outer_dims_;
    std::array<std::vector<int64_t>, N> outer_strides_;
    Offsets inner_strides_{};
    int64_t row_length_ = 1;
    int64_t rows_ = 0;
    bool empty_ = false;
};

// out = op(a, b) over the broadcast of `a` and `b` to `out_shape`, in parallel. The loops are
// split by stride so the common cases (both contiguous, one operand fixed along the row)
// compile to vector code.
template <class T, class R, class Op>
void broadcast_apply(const T* a, const Shape& a_shape, const T* b, const Shape& b_shape, R* out,
                     const Shape& out_shape, Op op) {
    const auto rows = StridedRows<2>::broadcast(out_shape, {&a_shape, &b_shape});
    // Plain variables, not a structured binding: clang before 16 cannot capture bindings.
    const auto strides = rows.inner_strides();
    const int64_t sa = strides[0], sb = strides[1];
    rows.parallel_pieces([&](int64_t o, const StridedRows<2>::Offsets& in, int64_t n) {
        const T* x = a + in[0];
        const T* y = b + in[1];
        R* z = out + o;
        if (sa == 1 && sb == 1) {
            for (int64_t i = 0; i < n; ++i) z[i] = op(x[i], y[i]);
        } else if (sa == 1) {
            const T v = *y;
            for (int64_t i = 0; i < n; ++i) z[i] = op(x[i], v);
        } else if (sb == 1) {
            const T v = *x;
            for (int64_t i = 0; i < n; ++i) z[i] = op(v, y[i]);
        } else {  // inner strides are 1 or 0 only (see inner_strides), so both are 0 here
            const R v = op(*x, *y);
            for (int64_t i = 0; i < n; ++i) z[i] = v;
        }
    });
}

}  // namespace infer::cpu
