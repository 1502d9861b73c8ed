// Ops that place every output element by copying one input element (or a fill value): Tile,
// Pad, DepthToSpace, SpaceToDepth, Trilu, ReverseSequence, Compress. Each gives a function
// from an output position to the flat source offset, or -1 for the fill value.
#include "backends/cpu/kernels/indexing_kernels.hpp"
#include "backends/cpu/kernels/parallel.hpp"
#include "core/ops/shapes_indexing.hpp"

#include <cstring>
#include <string>

namespace infer::cpu {

namespace {

using Position = std::vector<int64_t>;

// Fills `out` element by element: source(position) is a flat offset into `in`, or -1 to
// write `fill` (one element's bytes; nullptr means zero).
template <class Source>
void place_elements(const KernelContext& ctx, const Tensor& in, Tensor& out, Source&& source,
                    const void* fill = nullptr) {
    const Shape& shape = out.shape();
    const int64_t inner = shape.rank() == 0 ? 1 : shape[shape.rank() - 1];
    if (out.numel() == 0) return;
    const int64_t rows = out.numel() / inner;
    visit_word(ctx, out.dtype(), [&](auto word) {
        using W = decltype(word);
        W fill_word{};
        if (fill != nullptr) std::memcpy(&fill_word, fill, sizeof(W));
        const W* src = static_cast<const W*>(in.raw_data());
        W* dst = static_cast<W*>(out.raw_data());
        parallel_for(rows, grain_for(inner), [&](int64_t begin, int64_t end) {
            Position position(shape.rank(), 0);
            for (int64_t row = begin; row < end; ++row) {
                int64_t rest = row;
                for (size_t d = shape.rank() - (shape.rank() > 0 ? 1 : 0); d-- > 0;) {
                    position[d] = rest % shape[d];
                    rest /= shape[d];
                }
                for (int64_t j = 0; j < inner; ++j) {
                    if (shape.rank() > 0) position[shape.rank() - 1] = j;
                    const int64_t from = source(position);
                    dst[row * inner + j] = from < 0 ? fill_word : src[from];
                }
            }
        });
    });
}

int64_t offset_of(const Position& p, const std::vector<int64_t>& strides) {
    int64_t o = 0;
    for (size_t d = 0; d < p.size(); ++d) o += p[d] * strides[d];
    return o;
}

void tile_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const Shape& s = in.shape();
    const std::vector<int64_t> strides = strides_of(s);
    place_elements(ctx, in, ctx.output(0), [&](const Position& p) {
        int64_t o = 0;
        for (size_t d = 0; d < p.size(); ++d) o += (p[d] % s[d]) * strides[d];
        return o;
    });
}

void pad_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const Shape& s = in.shape();
    const std::string mode = ctx.attrs().get_string("mode", "constant");
    std::vector<int64_t> axes;
    if (ctx.has_input(3)) axes = read_ints(ctx, 3);
    std::string error;
    const detail::PadAmounts pads =
        detail::resolve_pads(read_ints(ctx, 1), axes, ctx.has_input(3), s.rank(), &error);
    if (!error.empty()) invalid_argument(ctx, error);
    const void* fill = nullptr;
    if (mode == "constant" && ctx.has_input(2) && ctx.input(2).numel() > 0) {
        if (ctx.input(2).dtype() != in.dtype()) invalid_argument(ctx, "constant_value differs in dtype from data");
        fill = ctx.input(2).raw_data();
    }
    const std::vector<int64_t> strides = strides_of(s);
    place_elements(ctx, in, ctx.output(0), [&](const Position& p) -> int64_t {
        int64_t o = 0;
        for (size_t d = 0; d < p.size(); ++d) {
            int64_t i = p[d] - pads.begin[d];
            const int64_t n = s[d];
            if (i < 0 || i >= n) {
                if (mode == "constant") return -1;
                if (mode == "edge") {
                    i = i < 0 ? 0 : n - 1;
                } else {  // reflect, without repeating the edge element
                    i = i < 0 ? -i : 2 * (n - 1) - i;
                }
            }
            o += i * strides[d];
        }
        return o;
    }, fill);
}

void depth_to_space_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const int64_t b = ctx.attrs().get_int("blocksize");
    const bool crd = ctx.attrs().get_string("mode", "DCR") == "CRD";
    const int64_t channels = ctx.output(0).shape()[1];
    const std::vector<int64_t> strides = strides_of(in.shape());
    place_elements(ctx, in, ctx.output(0), [&](const Position& p) {
        const int64_t i = p[2] % b, j = p[3] % b;
        const int64_t c = crd ? p[1] * b * b + i * b + j : (i * b + j) * channels + p[1];
        return p[0] * strides[0] + c * strides[1] + (p[2] / b) * strides[2] + (p[3] / b) * strides[3];
    });
}

void space_to_depth_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const int64_t b = ctx.attrs().get_int("blocksize");
    const int64_t channels = in.shape()[1];
    const std::vector<int64_t> strides = strides_of(in.shape());
    place_elements(ctx, in, ctx.output(0), [&](const Position& p) {
        const int64_t block = p[1] / channels, c = p[1] % channels;
        const int64_t i = block / b, j = block % b;
        return p[0] * strides[0] + c * strides[1] + (p[2] * b + i) * strides[2] + (p[3] * b + j) * strides[3];
    });
}

void trilu_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const bool upper = ctx.attrs().get_int("upper", 1) != 0;
    int64_t k = 0;
    if (ctx.has_input(1)) {
        const std::vector<int64_t> ks = read_ints(ctx, 1);
        if (ks.size() != 1) invalid_argument(ctx, "k must hold one value");
        k = ks[0];
    }
    const std::vector<int64_t> strides = strides_of(in.shape());
    const size_t r = in.shape().rank();
    place_elements(ctx, in, ctx.output(0), [&](const Position& p) -> int64_t {
        const int64_t diagonal = p[r - 1] - p[r - 2];
        const bool keep = upper ? diagonal >= k : diagonal <= k;
        return keep ? offset_of(p, strides) : -1;
    });
}

void reverse_sequence_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const size_t batch_axis = in.shape().normalize_axis(ctx.attrs().get_int("batch_axis", 1));
    const size_t time_axis = in.shape().normalize_axis(ctx.attrs().get_int("time_axis", 0));
    const std::vector<int64_t> lengths = read_ints(ctx, 1);
    if (static_cast<int64_t>(lengths.size()) != in.shape()[batch_axis])
        invalid_argument(ctx, "sequence_lens must have one length per batch entry");
    for (int64_t length : lengths)
        if (length < 0 || length > in.shape()[time_axis])
            invalid_argument(ctx, "sequence length " + std::to_string(length) + " out of range");
    const std::vector<int64_t> strides = strides_of(in.shape());
    place_elements(ctx, in, ctx.output(0), [&](const Position& p) {
        const int64_t length = lengths[static_cast<size_t>(p[batch_axis])];
        const int64_t t = p[time_axis];
        const int64_t from = t < length ? length - 1 - t : t;
        return offset_of(p, strides) + (from - t) * strides[time_axis];
    });
}

void compress_kernel(KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    std::vector<int64_t> kept;  // indices where the condition holds
    const std::vector<double> condition = ctx.input(1).to_vector<double>();
    for (size_t i = 0; i < condition.size(); ++i)
        if (condition[i] != 0) kept.push_back(static_cast<int64_t>(i));
    if (!ctx.attrs().has("axis")) {
        place_elements(ctx, in, ctx.output(0), [&](const Position& p) { return kept[static_cast<size_t>(p[0])]; });
        return;
    }
    const size_t axis = in.shape().normalize_axis(ctx.attrs().get_int("axis"));
    const std::vector<int64_t> strides = strides_of(in.shape());
    place_elements(ctx, in, ctx.output(0), [&](const Position& p) {
        return offset_of(p, strides) + (kept[static_cast<size_t>(p[axis])] - p[axis]) * strides[axis];
    });
}

}  // namespace

void register_indexing_layout(KernelRegistry& r) {
    for (DType t : kAllDTypes) {
        r.add("Tile", t, tile_kernel);
        r.add("Pad", t, pad_kernel);
        r.add("DepthToSpace", t, depth_to_space_kernel);
        r.add("SpaceToDepth", t, space_to_depth_kernel);
        r.add("Trilu", t, trilu_kernel);
        r.add("ReverseSequence", t, reverse_sequence_kernel);
        r.add("Compress", t, compress_kernel);
    }
}

}  // namespace infer::cpu
