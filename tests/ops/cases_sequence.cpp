// Op test cases of the sequence family: each graph makes a sequence or optional from its
// tensor inputs, applies the op under test, and turns the result back into tensors (an
// element, a length, a concatenation), compared with the float64 reference.
#include "op_case.hpp"

#include <infer/graph.hpp>

namespace ops {

namespace {

using infer::GraphBuilder;
using infer::Value;
const Shape kScalar(std::vector<int64_t>{});

Value i64_scalar(GraphBuilder& b, int64_t v) {
    return b.constant(infer::Tensor::from_vector(std::vector<int64_t>{v}, kScalar));
}

Value concat_all(GraphBuilder& b, Value sequence, int64_t axis, bool new_axis = false) {
    return b.op1("ConcatFromSequence", {sequence}, {{"axis", axis}, {"new_axis", int64_t{new_axis}}});
}

RefTensor with_unit_axis(RefTensor t, size_t axis) {
    std::vector<int64_t> dims = t.shape.dims();
    dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(axis), 1);
    t.shape = Shape(dims);
    return t;
}

RefTensor scalar(double v) { return RefTensor{kScalar, {v}}; }

// Tensors of every dtype the sequence ops move (they copy elements and never compute).
const std::vector<DType> kSequenceTypes{DType::f32, DType::f16, DType::bf16, DType::f64, DType::i64, DType::i32, DType::u8};

// Small whole numbers, which every one of those types holds exactly.
InputSpec whole(std::string name, Shape shape) { return integers(std::move(name), std::move(shape), 0, 100, std::nullopt); }

Case moving(Case c) {
    c.dtypes = kSequenceTypes;
    return c;
}

}  // namespace

std::vector<Case> sequence_cases() {
    std::vector<Case> c;
    const std::vector<InputSpec> abc{whole("A", {2, 3}), whole("B", {4, 3}), whole("C", {1, 3})};

    c.push_back(moving({"SequenceConstruct", "[2,3] [4,3] [1,3], concatenated on axis 0", abc,
                        [](GraphBuilder& b, const std::vector<Value>& in, DType) {
                            return std::vector{concat_all(b, b.op1("SequenceConstruct", {in[0], in[1], in[2]}), 0)};
                        },
                        [](const auto& v, DType) { return std::vector{ref::concat(v, 0)}; }}));

    for (const int64_t axis : {int64_t{1}, int64_t{-1}, int64_t{0}})
        c.push_back(moving({"ConcatFromSequence", "two [2,3] stacked on new axis " + std::to_string(axis),
                            {whole("A", {2, 3}), whole("B", {2, 3})},
                            [axis](GraphBuilder& b, const std::vector<Value>& in, DType) {
                                return std::vector{concat_all(b, b.op1("SequenceConstruct", {in[0], in[1]}), axis, true)};
                            },
                            [axis](const auto& v, DType) {
                                const size_t at = static_cast<size_t>(ref::normalize_axis(axis, 3));
                                return std::vector{ref::concat({with_unit_axis(v[0], at), with_unit_axis(v[1], at)},
                                                               static_cast<int64_t>(at))};
                            }}));
    c.push_back(moving({"ConcatFromSequence", "[3,2] [3,5] on axis -1", {whole("A", {3, 2}), whole("B", {3, 5})},
                        [](GraphBuilder& b, const std::vector<Value>& in, DType) {
                            return std::vector{concat_all(b, b.op1("SequenceConstruct", {in[0], in[1]}), -1)};
                        },
                        [](const auto& v, DType) { return std::vector{ref::concat(v, 1)}; }}));

    for (const int64_t position : {int64_t{-2}, int64_t{0}, int64_t{2}})
        c.push_back(moving({"SequenceAt", "of three at " + std::to_string(position), abc,
                            [position](GraphBuilder& b, const std::vector<Value>& in, DType) {
                                const Value s = b.op1("SequenceConstruct", {in[0], in[1], in[2]});
                                return std::vector{b.op1("SequenceAt", {s, i64_scalar(b, position)})};
                            },
                            [position](const auto& v, DType) {
                                return std::vector{v[static_cast<size_t>(position < 0 ? position + 3 : position)]};
                            }}));

    c.push_back(moving({"SequenceInsert", "into (A, C) at 1, and at the back", abc,
                        [](GraphBuilder& b, const std::vector<Value>& in, DType) {
                            const Value s = b.op1("SequenceConstruct", {in[0], in[2]});
                            const Value middle = b.op1("SequenceInsert", {s, in[1], i64_scalar(b, 1)});
                            const Value back = b.op1("SequenceInsert", {s, in[1]});
                            return std::vector{concat_all(b, middle, 0), concat_all(b, back, 0)};
                        },
                        [](const auto& v, DType) {
                            return std::vector{ref::concat({v[0], v[1], v[2]}, 0), ref::concat({v[0], v[2], v[1]}, 0)};
                        }}));

    c.push_back(moving({"SequenceErase", "from (A, B, C) at 0, and the last", abc,
                        [](GraphBuilder& b, const std::vector<Value>& in, DType) {
                            const Value s = b.op1("SequenceConstruct", {in[0], in[1], in[2]});
                            return std::vector{concat_all(b, b.op1("SequenceErase", {s, i64_scalar(b, 0)}), 0),
                                               concat_all(b, b.op1("SequenceErase", {s}), 0)};
                        },
                        [](const auto& v, DType) {
                            return std::vector{ref::concat({v[1], v[2]}, 0), ref::concat({v[0], v[1]}, 0)};
                        }}));

    c.push_back(moving({"SequenceLength", "of three, and of one erased", abc,
                        [](GraphBuilder& b, const std::vector<Value>& in, DType) {
                            const Value s = b.op1("SequenceConstruct", {in[0], in[1], in[2]});
                            return std::vector{b.op1("SequenceLength", {s}),
                                               b.op1("SequenceLength", {b.op1("SequenceErase", {s})})};
                        },
                        [](const auto&, DType) { return std::vector{scalar(3), scalar(2)}; }}));

    c.push_back(moving({"SequenceEmpty", "with A and B inserted", {whole("A", {2, 3}), whole("B", {4, 3})},
                        [](GraphBuilder& b, const std::vector<Value>& in, DType dt) {
                            Value s = b.op1("SequenceEmpty", {}, {{"dtype", onnx_type(dt)}});
                            s = b.op1("SequenceInsert", {s, in[0]});
                            s = b.op1("SequenceInsert", {s, in[1]});
                            return std::vector{concat_all(b, s, 0)};
                        },
                        [](const auto& v, DType) { return std::vector{ref::concat(v, 0)}; }}));

    c.push_back(moving({"SplitToSequence", "[10,3] in pieces of 4: the last has 2", {whole("X", {10, 3})},
                        [](GraphBuilder& b, const std::vector<Value>& in, DType) {
                            const Value s = b.op1("SplitToSequence", {in[0], i64_scalar(b, 4)}, {{"axis", int64_t{0}}});
                            return std::vector{b.op1("SequenceAt", {s, i64_scalar(b, -1)}),
                                               b.op1("SequenceLength", {s})};
                        },
                        [](const auto& v, DType) {
                            return std::vector{ref::slice(v[0], {8}, {10}, {0}, {}), scalar(3)};
                        }}));
    c.push_back(moving({"SplitToSequence", "[3,5] sizes (1, 4) on axis 1", {whole("X", {3, 5})},
                        [](GraphBuilder& b, const std::vector<Value>& in, DType) {
                            const Value s = b.op1("SplitToSequence", {in[0], b.constant_i64({1, 4})}, {{"axis", int64_t{1}}});
                            return std::vector{b.op1("SequenceAt", {s, i64_scalar(b, 0)}),
                                               b.op1("SequenceAt", {s, i64_scalar(b, 1)})};
                        },
                        [](const auto& v, DType) { return ref::split(v[0], 1, {1, 4}); }}));
    c.push_back(moving({"SplitToSequence", "[3,5] on axis 1 without keepdims, restacked", {whole("X", {3, 5})},
                        [](GraphBuilder& b, const std::vector<Value>& in, DType) {
                            const Value s = b.op1("SplitToSequence", {in[0]}, {{"axis", int64_t{1}}, {"keepdims", int64_t{0}}});
                            return std::vector{concat_all(b, s, 0, true)};
                        },
                        [](const auto& v, DType) { return std::vector{ref::transpose(v[0], {1, 0})}; }}));

    c.push_back({"SequenceMap", "(A, B) times W [3]", {x("A", {2, 3}), x("B", {4, 3}), x("W", {3})},
                 [](GraphBuilder& b, const std::vector<Value>& in, DType dt) {
                     GraphBuilder body("body");
                     const Value element = body.input("element", dt, Shape{infer::kDynamic, 3});
                     const Value w = body.input("w", dt, Shape{3});
                     body.output("scaled", body.mul(element, w));
                     const Value s = b.op1("SequenceConstruct", {in[0], in[1]});
                     const Value mapped = b.op1("SequenceMap", {s, in[2]},
                                                {{"body", std::make_shared<const infer::Graph>(body.build())}});
                     return std::vector{concat_all(b, mapped, 0)};
                 },
                 [](const auto& v, DType) {
                     const auto times_w = [&](const RefTensor& t) {
                         return ref::binary(t, v[2], [](double a, double w) { return a * w; });
                     };
                     return std::vector{ref::concat({times_w(v[0]), times_w(v[1])}, 0)};
                 }});

    c.push_back(moving({"Optional", "of A, and empty", {whole("A", {2, 3})},
                        [](GraphBuilder& b, const std::vector<Value>& in, DType dt) {
                            const Value held = b.op1("Optional", {in[0]});
                            const Value none = b.op1("Optional", {}, {{"type", onnx_type(dt)}, {"type_is_sequence", int64_t{0}}});
                            return std::vector{b.op1("OptionalGetElement", {held}), b.op1("OptionalHasElement", {none})};
                        },
                        [](const auto& v, DType) { return std::vector{v[0], scalar(0)}; }}));
    c.push_back(moving({"OptionalHasElement", "of A, of a sequence, of nothing", {whole("A", {2, 3})},
                        [](GraphBuilder& b, const std::vector<Value>& in, DType dt) {
                            const Value sequence = b.op1("SequenceConstruct", {in[0]});
                            const Value none = b.op1("Optional", {}, {{"type", onnx_type(dt)}, {"type_is_sequence", int64_t{1}}});
                            return std::vector{b.op1("OptionalHasElement", {b.op1("Optional", {in[0]})}),
                                               b.op1("OptionalHasElement", {b.op1("Optional", {sequence})}),
                                               b.op1("OptionalHasElement", {none})};
                        },
                        [](const auto&, DType) { return std::vector{scalar(1), scalar(1), scalar(0)}; }}));
    c.push_back(moving({"OptionalGetElement", "of a sequence (A, B)", {whole("A", {2, 3}), whole("B", {4, 3})},
                        [](GraphBuilder& b, const std::vector<Value>& in, DType) {
                            const Value held = b.op1("Optional", {b.op1("SequenceConstruct", {in[0], in[1]})});
                            return std::vector{concat_all(b, b.op1("OptionalGetElement", {held}), 0)};
                        },
                        [](const auto& v, DType) { return std::vector{ref::concat(v, 0)}; }}));
    return c;
}

}  // namespace ops
