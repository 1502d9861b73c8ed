// Op test cases of the indexing family's movement ops (reshaping, transposing, joining,
// cutting, gathering) and of the shape-making ops Shape, ConstantOfShape and Range (whose value-carrying inputs are constants).
#include "op_case.hpp"
#include "precision.hpp"

#include <limits>

namespace ops {

namespace {
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

std::string dims_label(const Dims& d) { return Shape(d).to_string(); }

// A single-output case whose reference maps the first input.
Case unary_case(const std::string& op, const std::string& label, InputSpec input, BuildFn build,
                std::function<RefTensor(const RefTensor&)> f) {
    return {op, label, {std::move(input)}, std::move(build),
            [f](const auto& in, DType) { return std::vector{f(in[0])}; }};
}

// A scalar constant of `type` holding `value` (exactly representable there).
infer::Value scalar(infer::GraphBuilder& b, DType type, double value) {
    const Shape shape;  // rank 0
    switch (type) {
        case DType::i64: return b.constant(infer::Tensor::from_vector<int64_t>({static_cast<int64_t>(value)}, shape));
        case DType::i32: return b.constant(infer::Tensor::from_vector<int32_t>({static_cast<int32_t>(value)}, shape));
        case DType::f16: {
            const uint16_t bits = ref::half_bits(value);
            return b.constant(infer::Tensor::from_host(&bits, type, shape));
        }
        case DType::bf16: {
            const uint16_t bits = ref::bfloat16_bits(value);
            return b.constant(infer::Tensor::from_host(&bits, type, shape));
        }
        default: return b.constant(infer::Tensor::from_vector<float>({static_cast<float>(value)}, shape));
    }
}
}  // namespace

std::vector<Case> indexing_movement_cases() {
    std::vector<Case> c;
    for (const auto& [in, target] : {std::pair<Shape, Dims>{{2, 3, 4}, {4, -1}}, {{2, 3, 4}, {0, 12}},
                                     {{2, 3, 4}, {24}}, {{17}, {1, 17, 1}}, {{6, 1, 5}, {-1, 0, 3, 2}}, {{1}, {}}})
        c.push_back(unary_case("Reshape", in.to_string() + " to " + dims_label(target), x("X", in),
                               node("Reshape", {}, {arg(0), ints(target)}),
                               [target](const RefTensor& v) { return ref::reshape(v, target); }));

    for (int64_t axis : {0, 1, 2, 3, -1})
        c.push_back(unary_case("Flatten", "[2,3,4,5] axis " + std::to_string(axis), x("X", {2, 3, 4, 5}),
                               node("Flatten", {{"axis", axis}}),
                               [axis](const RefTensor& v) { return ref::flatten(v, axis); }));

    for (const auto& [in, perm] : {std::pair<Shape, Dims>{{3, 17}, {}}, {{2, 3, 4}, {}}, {{2, 3, 4, 5}, {0, 2, 1, 3}},
                                   {{2, 3, 4, 5}, {3, 0, 1, 2}}, {{1, 33, 3}, {2, 0, 1}}, {{5}, {0}},
                                   {{33, 65, 17}, {2, 0, 1}},
                                   // a CNN's channel-last ends (4-byte values: 4x4 blocks in
                                   // 16x16 ones, edges past them, batches)
                                   {{2, 35, 17, 40}, {0, 3, 1, 2}}, {{2, 3, 17, 35}, {0, 2, 3, 1}},
                                   // attention's head split: rows of 8 stay whole, so a GPU moves
                                   // them with vector accesses
                                   {{2, 16, 3, 8}, {0, 2, 1, 3}}}) {
        infer::Attributes attrs;
        if (!perm.empty()) attrs.set("perm", perm);
        c.push_back(unary_case("Transpose", in.to_string() + " perm " + dims_label(perm), x("X", in),
                               node("Transpose", attrs), [perm](const RefTensor& v) { return ref::transpose(v, perm); }));
    }

    // Bytes: perms that move a trailing run of axes ahead (an 8-bit CNN's channel-last ends)
    // take 16x16 block transposes, here with edges past the blocks and batches; others the
    // strided copy.
    for (const auto& [in, perm] : {std::pair<Shape, Dims>{{2, 3, 17, 35}, {0, 2, 3, 1}}, {{2, 35, 17, 40}, {0, 3, 1, 2}},
                                   {{33, 40}, {}}, {{2, 18, 33}, {1, 2, 0}}, {{2, 3, 4, 5}, {0, 2, 1, 3}}}) {
        infer::Attributes attrs;
        if (!perm.empty()) attrs.set("perm", perm);
        Case bytes = unary_case("Transpose", in.to_string() + " perm " + dims_label(perm) + " bytes",
                                integers("X", in, 0, 127, std::nullopt), node("Transpose", attrs),
                                [perm](const RefTensor& v) { return ref::transpose(v, perm); });
        bytes.dtypes = {DType::u8, DType::i8};
        bytes.cpu_optional = true;
        c.push_back(bytes);
    }

    for (const auto& [shapes, axis] : {std::pair<std::vector<Shape>, int64_t>{{{2, 3}, {4, 3}}, 0},
                                       {{{2, 3, 4}, {2, 1, 4}, {2, 5, 4}}, 1},
                                       {{{3, 1}, {3, 17}, {3, 2}}, -1},
                                       {{{5, 7}}, 1}, {{{64, 100}, {64, 37}}, 1}}) {
        std::vector<InputSpec> inputs;
        std::string label;
        for (size_t i = 0; i < shapes.size(); ++i) {
            inputs.push_back(x("X" + std::to_string(i), shapes[i]));
            label += shapes[i].to_string() + " ";
        }
        c.push_back({"Concat", label + "axis " + std::to_string(axis), inputs, node("Concat", {{"axis", axis}}),
                     [axis](const auto& in, DType) { return std::vector{ref::concat(in, axis)}; }});
    }
    Case concat_i64{"Concat", "i64 [2] [1] [3]", {integers("A", {2}, -9, 9), integers("B", {1}, -9, 9), integers("C", {3}, -9, 9)},
                    node("Concat", {{"axis", int64_t{0}}}),
                    [](const auto& in, DType) { return std::vector{ref::concat(in, 0)}; }};
    concat_i64.dtypes = {DType::i64};
    concat_i64.cpu_optional = true;
    c.push_back(concat_i64);

    // Split with explicit sizes (input 1) and evenly (num_outputs; the last part smaller).
    for (const auto& [in, axis, sizes] : {std::tuple<Shape, int64_t, Dims>{{6, 4}, 0, {2, 4}},
                                          {{2, 17, 3}, 1, {5, 1, 11}}, {{3, 7}, -1, {7}}}) {
        const size_t parts = sizes.size();
        c.push_back({"Split", in.to_string() + " axis " + std::to_string(axis) + " sizes " + dims_label(sizes),
                     {x("X", in)}, node("Split", {{"axis", axis}}, {arg(0), ints(sizes)}, parts),
                     [axis, sizes](const auto& v, DType) { return ref::split(v[0], axis, sizes); }});
    }
    for (const auto& [in, axis, parts] : {std::tuple<Shape, int64_t, int64_t>{{6, 4}, 0, 2},
                                          {{2, 7, 3}, 1, 3}, {{4, 33}, -1, 4}}) {
        const Dims sizes = ref::even_split_sizes(in[static_cast<size_t>(ref::normalize_axis(axis, in.rank()))], parts);
        c.push_back({"Split", in.to_string() + " axis " + std::to_string(axis) + " num_outputs " + std::to_string(parts),
                     {x("X", in)}, node("Split", {{"axis", axis}, {"num_outputs", parts}}, {arg(0)}, static_cast<size_t>(parts)),
                     [axis, sizes](const auto& v, DType) { return ref::split(v[0], axis, sizes); }});
    }

    struct SliceSpec { Shape in; Dims starts, ends, axes, steps; };
    for (const auto& s : std::vector<SliceSpec>{
             {{5, 7}, {1, 2}, {4, 6}, {}, {}},                      // no axes, no steps
             {{5, 7}, {-3}, {kMax}, {1}, {}},                       // negative start, INT_MAX end
             {{17}, {-1}, {kMin}, {0}, {-1}},                       // full reversal
             {{4, 17}, {15, 3}, {1, 0}, {-1, 0}, {-3, -1}},         // negative steps, out-of-order axes
             {{2, 3, 33}, {0, 1}, {33, 100}, {2, 1}, {4, 1}},       // step 4, clamped end
             {{3, 5, 4}, {-100, 1}, {100, -1}, {-3, -1}, {1, 2}},   // clamping at both ends
             {{65, 129}, {-1, 3}, {kMin, 120}, {0, 1}, {-2, 5}}})   // larger
    {
        std::vector<Operand> operands{arg(0), ints(s.starts), ints(s.ends)};
        if (!s.axes.empty()) operands.push_back(ints(s.axes));
        if (!s.steps.empty()) operands.push_back(ints(s.steps));
        c.push_back(unary_case("Slice", s.in.to_string() + " starts " + dims_label(s.starts) + " ends " + dims_label(s.ends) +
                                            " axes " + dims_label(s.axes) + " steps " + dims_label(s.steps),
                               x("X", s.in), node("Slice", {}, operands),
                               [s](const RefTensor& v) { return ref::slice(v, s.starts, s.ends, s.axes, s.steps); }));
    }

    // Gather: indices drawn per run over [-dim, dim), so negative indices occur.
    for (const auto& [data, indices, axis, type] :
         {std::tuple<Shape, Shape, int64_t, DType>{{5, 4}, {3}, 0, DType::i64}, {{3, 17}, {2, 2}, 1, DType::i64},
          {{2, 7, 3}, {}, 1, DType::i64}, {{33, 2}, {4}, -2, DType::i32}, {{2, 3, 5}, {6}, -1, DType::i64},
          {{1000, 64}, {37}, 0, DType::i64}, {{1, 6, 3}, {2, 5}, 1, DType::i32}}) {
        const int64_t dim = data[static_cast<size_t>(ref::normalize_axis(axis, data.rank()))];
        c.push_back({"Gather", data.to_string() + " " + std::string(infer::dtype_name(type)) + indices.to_string() +
                                   " axis " + std::to_string(axis),
                     {x("X", data), integers("I", indices, -dim, dim - 1, type)}, node("Gather", {{"axis", axis}}),
                     [axis](const auto& in, DType) { return std::vector{ref::gather(in[0], in[1], axis)}; }});
    }

    for (const auto& [in, axes] : {std::pair<Shape, Dims>{{3, 4}, {0}}, {{3, 4}, {-1}}, {{3, 4}, {1, 3}},
                                   {{17}, {0, -1}}, {{}, {0}}})
        c.push_back(unary_case("Unsqueeze", in.to_string() + " axes " + dims_label(axes), x("X", in),
                               node("Unsqueeze", {}, {arg(0), ints(axes)}),
                               [axes](const RefTensor& v) { return ref::unsqueeze(v, axes); }));
    for (const auto& [in, axes] : {std::pair<Shape, Dims>{{1, 3, 1, 4}, {}}, {{1, 3, 1, 4}, {0}},
                                   {{1, 3, 1, 4}, {-2}}, {{3, 1, 17, 1}, {1, 3}}, {{1}, {}}}) {
        std::vector<Operand> operands{arg(0)};
        if (!axes.empty()) operands.push_back(ints(axes));
        c.push_back(unary_case("Squeeze", in.to_string() + " axes " + dims_label(axes), x("X", in),
                               node("Squeeze", {}, operands),
                               [axes](const RefTensor& v) { return ref::squeeze(v, axes); }));
    }

    // Expand broadcasts both ways: the target may be smaller than the input in a dimension.
    for (const auto& [in, target] : {std::pair<Shape, Dims>{{3, 1}, {3, 4}}, {{3, 1}, {2, 1, 17}},
                                     {{4}, {2, 3, 4}}, {{2, 1, 5}, {3, 1}}, {{}, {5, 3}}, {{1, 1000}, {64, 1000}},
                                     {{1, 40001}, {3, 40001}}, {{3, 1}, {3, 16}}})
        c.push_back(unary_case("Expand", in.to_string() + " to " + dims_label(target), x("X", in),
                               node("Expand", {}, {arg(0), ints(target)}),
                               [target](const RefTensor& v) { return ref::expand(v, target); }));

    for (const auto& [start, end] : {std::pair<std::optional<int64_t>, std::optional<int64_t>>{{}, {}},
                                     {1, {}}, {-2, {}}, {0, -1}, {1, 100}, {-100, 2}}) {
        infer::Attributes attrs;
        if (start) attrs.set("start", *start);
        if (end) attrs.set("end", *end);
        const Shape shape{2, 3, 5, 1};
        const std::string label = "[2,3,5,1] start " + (start ? std::to_string(*start) : "-") + " end " +
                                  (end ? std::to_string(*end) : "-");
        c.push_back(unary_case("Shape", label, x("X", shape), node("Shape", attrs), [=](const RefTensor&) {
            return ref::shape_of(shape, start.value_or(0), end.value_or(4));
        }));
    }

    // ConstantOfShape: the value attribute is a one-element tensor of the output dtype.
    for (const Dims& shape : {Dims{2, 3, 4}, Dims{17}, Dims{}}) {
        Case k{"ConstantOfShape", "value 1.5 shape " + dims_label(shape), {},
               [shape](infer::GraphBuilder& b, const std::vector<infer::Value>&, DType dt) {
                   infer::Attributes attrs;
                   const double value = dt == DType::i64 ? 7.0 : 1.5;
                   if (dt == DType::i64)
                       attrs.set("value", infer::Tensor::from_vector<int64_t>({7}, Shape{1}));
                   else if (dt == DType::f32)
                       attrs.set("value", infer::Tensor::from_vector<float>({static_cast<float>(value)}, Shape{1}));
                   else {
                       const uint16_t bits = dt == DType::f16 ? ref::half_bits(value) : ref::bfloat16_bits(value);
                       attrs.set("value", infer::Tensor::from_host(&bits, dt, Shape{1}));
                   }
                   return std::vector{b.op1("ConstantOfShape", {b.constant_i64(shape)}, attrs)};
               },
               [shape](const auto&, DType dt) { return std::vector{ref::constant_of_shape(shape, dt == DType::i64 ? 7.0 : 1.5)}; }};
        k.dtypes = {DType::f32, DType::f16, DType::bf16, DType::i64};
        c.push_back(k);
    }
    Case zeros{"ConstantOfShape", "default value (f32 zeros) [3,5]", {},
               [](infer::GraphBuilder& b, const std::vector<infer::Value>&, DType) {
                   return std::vector{b.op1("ConstantOfShape", {b.constant_i64({3, 5})})};
               },
               [](const auto&, DType) { return std::vector{ref::constant_of_shape({3, 5}, 0.0)}; }};
    zeros.dtypes = {DType::f32};
    c.push_back(zeros);

    // Range: ONNX defines it for f32 and integers (not f16/bf16). The bounds must be constants
    // because the output shape depends on them.
    for (const auto& [start, limit, delta, dtypes] :
         {std::tuple<double, double, double, std::vector<DType>>{1.5, 9.3, 0.7, {DType::f32}},
          {10, -3, -1.5, {DType::f32}}, {0.25, 8.5, 0.5, {DType::f32}},
          {-5, 17, 3, {DType::i64, DType::i32}}, {20, 3, -4, {DType::i64, DType::i32}}, {0, 33, 1, {DType::i64}}}) {
        Case r{"Range", std::to_string(start) + " " + std::to_string(limit) + " " + std::to_string(delta), {},
               [=](infer::GraphBuilder& b, const std::vector<infer::Value>&, DType dt) {
                   return std::vector{b.op1("Range", {scalar(b, dt, start), scalar(b, dt, limit), scalar(b, dt, delta)})};
               },
               [=](const auto&, DType dt) {
                   // Bounds as the graph holds them (f32 constants).
                   const auto as = [dt](double v) { return dt == DType::f32 ? double(static_cast<float>(v)) : v; };
                   return std::vector{ref::range(as(start), as(limit), as(delta))};
               }};
        r.dtypes = dtypes;
        c.push_back(r);
    }
    return c;
}

}  // namespace ops
