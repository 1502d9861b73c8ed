// Shapes of the math family: axis-wise normalizations, arg-reductions, the extra reductions,
// Clip, PRelu, CumSum, Size and Einsum.
#include "core/ops/shapes_math.hpp"

#include <algorithm>

namespace infer::detail {

namespace {

size_t normalized_axis(const InferenceContext& ctx, const Shape& in, int64_t axis) {
    try {
        return in.normalize_axis(axis);
    } catch (const InvalidArgument& e) {
        ctx.fail(e.what());
    }
}

// Whether `shape` holds exactly one element (a scalar, or [1], [1,1], ...), dynamic dims aside.
bool single_element(const Shape& shape) {
    return std::all_of(shape.dims().begin(), shape.dims().end(),
                       [](int64_t d) { return d == 1 || d == kDynamic; });
}

}  // namespace

std::vector<Shape> shape_along_axis(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    normalized_axis(ctx, in, ctx.attrs().get_int("axis", -1));
    return {in};
}

std::vector<Shape> shape_arg_reduce(const InferenceContext& ctx) {
    const Shape& in = ctx.shape(0);
    const size_t axis = normalized_axis(ctx, in, ctx.attrs().get_int("axis", 0));
    const bool keepdims = ctx.attrs().get_int("keepdims", 1) != 0;
    std::vector<int64_t> dims;
    for (size_t d = 0; d < in.rank(); ++d) {
        if (d != axis)
            dims.push_back(in[d]);
        else if (keepdims)
            dims.push_back(1);
    }
    return {Shape(dims)};
}

// With empty axes and noop_with_empty_axes, ONNX's text calls the op an identity while its
// reference code squares for ReduceSumSquare; rather than pick one, infer refuses the forms
// where the two readings differ. ReduceMin and ReduceProd of one element are that element.
std::vector<Shape> shape_math_reduce(const InferenceContext& ctx) {
    const std::string& op = ctx.node().op;
    const bool noop_attribute = ctx.attrs().get_int("noop_with_empty_axes", 0) != 0;
    const bool empty_axes = !ctx.has_input(1) || ctx.ints(1).empty();
    if (noop_attribute && empty_axes && op != "ReduceMin" && op != "ReduceProd")
        throw Unsupported("node '" + ctx.node().name + "' (" + op +
                          "): noop_with_empty_axes with empty axes is not supported");
    return shape_reduce(ctx);
}

std::vector<Shape> shape_mod(const InferenceContext& ctx) {
    if (is_floating(ctx.dtype(0)) && ctx.attrs().get_int("fmod", 0) == 0)
        ctx.fail("fmod must be 1 for floating-point inputs");
    return shape_broadcast(ctx);
}

std::vector<Shape> shape_clip(const InferenceContext& ctx) {
    check_same_dtypes(ctx, 0);
    for (size_t i : {size_t{1}, size_t{2}})
        if (ctx.has_input(i) && !single_element(ctx.shape(i)))
            ctx.fail((i == 1 ? "min " : "max ") + ctx.shape(i).to_string() + " is not a scalar");
    return {ctx.shape(0)};
}

// The slope broadcasts to X one way: the output always has X's shape.
std::vector<Shape> shape_prelu(const InferenceContext& ctx) {
    check_same_dtypes(ctx, 0);
    const Shape& x = ctx.shape(0);
    const Shape& slope = ctx.shape(1);
    bool fits = slope.rank() <= x.rank();
    for (size_t i = 0; fits && i < slope.rank(); ++i) {
        const int64_t s = slope[slope.rank() - 1 - i], d = x[x.rank() - 1 - i];
        fits = s == 1 || s == d || s == kDynamic || d == kDynamic;
    }
    if (!fits) ctx.fail("slope " + slope.to_string() + " does not broadcast to X " + x.to_string());
    return {x};
}

std::vector<Shape> shape_cumsum(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    if (ctx.dtype(1) != DType::i64 && ctx.dtype(1) != DType::i32)
        ctx.fail("axis must be i64 or i32");
    std::vector<int64_t> axis;
    try {
        axis = ctx.ints(1);
    } catch (const ShapeUnknown&) {
        return {x};  // the output keeps X's shape whatever the axis; the kernel checks it
    }
    if (axis.size() != 1) ctx.fail("axis must hold one value");
    normalized_axis(ctx, x, axis[0]);
    return {x};
}

std::vector<Shape> shape_det(const InferenceContext& ctx) {
    const Shape& x = ctx.shape(0);
    const size_t rank = x.rank();
    if (rank < 2 || (x[rank - 1] != x[rank - 2] && x[rank - 1] != kDynamic && x[rank - 2] != kDynamic))
        ctx.fail("input must be square matrices [..., M, M], got " + x.to_string());
    return {Shape(std::vector<int64_t>(x.dims().begin(), x.dims().end() - 2))};
}

std::vector<Shape> shape_size(const InferenceContext&) { return {Shape(std::vector<int64_t>{})}; }

namespace {

constexpr int kLetterLabels = 52;
constexpr int kEllipsis = -1;
constexpr int64_t kUnseen = -2;

int letter_label(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
    throw InvalidArgument(std::string("equation has an invalid character '") + c + "'");
}

// A term's labels in order, kEllipsis where "..." stands.
std::vector<int> parse_term(const std::string& term) {
    std::vector<int> tokens;
    for (size_t i = 0; i < term.size(); ++i) {
        if (term[i] == '.') {
            if (term.compare(i, 3, "...") != 0) throw InvalidArgument("equation has a stray '.'");
            if (std::count(tokens.begin(), tokens.end(), kEllipsis) != 0)
                throw InvalidArgument("a term has two ellipses");
            tokens.push_back(kEllipsis);
            i += 2;
        } else {
            tokens.push_back(letter_label(term[i]));
        }
    }
    return tokens;
}

std::string label_name(int label) {
    if (label < 26) return std::string(1, static_cast<char>('A' + label));
    if (label < kLetterLabels) return std::string(1, static_cast<char>('a' + label - 26));
    return "...";
}

// Joins one more occurrence of a label's extent; size-1 axes broadcast.
void join_size(int64_t& size, int64_t dim, int label) {
    if (size == kUnseen || size == 1 || (size == kDynamic && dim != 1)) {
        size = dim;
        return;
    }
    if (dim == size || dim == 1 || dim == kDynamic) return;
    throw InvalidArgument("label '" + label_name(label) + "' has extents " + std::to_string(size) +
                          " and " + std::to_string(dim));
}

}  // namespace

EinsumPlan plan_einsum(const std::string& equation, const std::vector<Shape>& operands) {
    std::string text;
    for (char c : equation)
        if (c != ' ') text += c;
    const size_t arrow = text.find("->");
    const std::string lhs = text.substr(0, arrow);
    std::vector<std::vector<int>> terms;
    for (size_t begin = 0;;) {
        const size_t comma = lhs.find(',', begin);
        terms.push_back(parse_term(lhs.substr(begin, comma - begin)));
        if (comma == std::string::npos) break;
        begin = comma + 1;
    }
    if (terms.size() != operands.size())
        throw InvalidArgument("equation has " + std::to_string(terms.size()) + " terms for " +
                              std::to_string(operands.size()) + " inputs");
    // Each operand's ellipsis rank; the widest sets how many ellipsis labels there are.
    std::vector<size_t> ellipsis_rank(terms.size(), 0);
    size_t widest = 0;
    for (size_t k = 0; k < terms.size(); ++k) {
        const bool has_ellipsis = std::count(terms[k].begin(), terms[k].end(), kEllipsis) != 0;
        const size_t letters = terms[k].size() - (has_ellipsis ? 1 : 0);
        const size_t rank = operands[k].rank();
        if (rank < letters || (!has_ellipsis && rank != letters))
            throw InvalidArgument("term " + std::to_string(k) + " does not match input rank " +
                                  std::to_string(rank));
        ellipsis_rank[k] = rank - letters;
        widest = std::max(widest, ellipsis_rank[k]);
    }
    EinsumPlan plan;
    plan.label_sizes.assign(kLetterLabels + widest, kUnseen);
    std::vector<int> occurrences(plan.label_sizes.size(), 0);
    for (size_t k = 0; k < terms.size(); ++k) {
        std::vector<int> labels;
        for (int token : terms[k]) {
            if (token != kEllipsis) {
                labels.push_back(token);
                continue;
            }
            for (size_t e = widest - ellipsis_rank[k]; e < widest; ++e)
                labels.push_back(kLetterLabels + static_cast<int>(e));
        }
        for (size_t axis = 0; axis < labels.size(); ++axis) {
            const auto label = static_cast<size_t>(labels[axis]);
            join_size(plan.label_sizes[label], operands[k][axis], labels[axis]);
            ++occurrences[label];
        }
        plan.operand_labels.push_back(std::move(labels));
    }
    // Ellipsis axes lead the output; an implicit output then lists the letters seen once.
    if (arrow == std::string::npos) {
        for (size_t e = 0; e < widest; ++e) plan.output_labels.push_back(kLetterLabels + static_cast<int>(e));
        for (int label = 0; label < kLetterLabels; ++label)
            if (occurrences[static_cast<size_t>(label)] == 1) plan.output_labels.push_back(label);
        return plan;
    }
    for (int token : parse_term(text.substr(arrow + 2))) {
        if (token == kEllipsis) {
            for (size_t e = 0; e < widest; ++e) plan.output_labels.push_back(kLetterLabels + static_cast<int>(e));
            continue;
        }
        if (occurrences[static_cast<size_t>(token)] == 0)
            throw InvalidArgument("output label '" + label_name(token) + "' is in no input");
        if (std::count(plan.output_labels.begin(), plan.output_labels.end(), token) != 0)
            throw InvalidArgument("output repeats label '" + label_name(token) + "'");
        plan.output_labels.push_back(token);
    }
    return plan;
}

std::vector<Shape> shape_einsum(const InferenceContext& ctx) {
    check_same_dtypes(ctx, 0);
    std::vector<Shape> operands;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) operands.push_back(ctx.shape(i));
    EinsumPlan plan;
    try {
        plan = plan_einsum(ctx.attrs().get_string("equation"), operands);
    } catch (const InvalidArgument& e) {
        ctx.fail(e.what());
    }
    std::vector<int64_t> dims;
    for (int label : plan.output_labels) dims.push_back(plan.label_sizes[static_cast<size_t>(label)]);
    return {Shape(dims)};
}

}  // namespace infer::detail
