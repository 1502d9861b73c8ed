#pragma once
// Walks a dense output and N strided inputs together, in rows: the innermost dimension after
// merging every run of dimensions that all operands traverse contiguously. Broadcast inputs
// have stride 0 along the dimensions they repeat, so one loop serves elementwise ops,
// Expand, Transpose and Slice alike; rows can be handed to parallel_for.
#include <infer/shape.hpp>

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

}  // namespace infer::cpu
