// Op test cases of the math family: axis-wise ops, reductions, variadic and logical
// elementwise ops, maps and activations, CumSum, Size and Einsum.
#include "op_case.hpp"
#include "reference_math.hpp"

#include <cmath>

namespace ops {

namespace {

using Fn1 = std::function<double(double)>;
using Fn2 = std::function<double(double, double)>;
using infer::Attributes;

ReferenceFn unary_ref(Fn1 f) {
    return [f](const std::vector<RefTensor>& in, DType) { return std::vector{ref::unary(in[0], f)}; };
}
ReferenceFn binary_ref(Fn2 f) {
    return [f](const std::vector<RefTensor>& in, DType) { return std::vector{ref::binary(in[0], in[1], f)}; };
}

Case typed(Case c, std::vector<DType> dtypes) {
    c.dtypes = std::move(dtypes);
    return c;
}
Case accumulating(Case c) {
    c.accumulates = true;
    return c;
}

// A map over a small tensor, odd sizes, a scalar, and one large enough to split over threads.
void add_map(std::vector<Case>& cases, const std::string& op, Fn1 f, InputSpec input,
             Attributes attrs = {}, const std::string& note = "") {
    for (const Shape& s : {Shape{2, 3, 5}, Shape{17}, Shape{}, Shape{129, 257}}) {
        input.shape = s;
        cases.push_back({op, note + s.to_string(), {input}, node(op, attrs), unary_ref(f)});
    }
}

InputSpec shifted(InputSpec spec, double offset) {
    spec.offset = offset;
    return spec;
}

void add_trigonometry(std::vector<Case>& cases) {
    add_map(cases, "Sin", [](double v) { return std::sin(v); }, x("X", {}, 3.0));
    add_map(cases, "Cos", [](double v) { return std::cos(v); }, x("X", {}, 3.0));
    add_map(cases, "Tan", [](double v) { return std::tan(v); }, x("X", {}, 0.7));  // |x| < pi/2
    add_map(cases, "Asin", [](double v) { return std::asin(v); }, x("X", {}, 0.45));
    add_map(cases, "Acos", [](double v) { return std::acos(v); }, x("X", {}, 0.45));
    add_map(cases, "Atan", [](double v) { return std::atan(v); }, x("X", {}, 3.0));
    add_map(cases, "Sinh", [](double v) { return std::sinh(v); }, x("X", {}, 2.0));
    add_map(cases, "Cosh", [](double v) { return std::cosh(v); }, x("X", {}, 2.0));
    add_map(cases, "Asinh", [](double v) { return std::asinh(v); }, x("X", {}, 3.0));
    add_map(cases, "Acosh", [](double v) { return std::acosh(v); }, shifted(positive("X", {}), 1.0));
    add_map(cases, "Atanh", [](double v) { return std::atanh(v); }, x("X", {}, 0.45));
}

void add_rounding(std::vector<Case>& cases) {
    // f16 and bf16 inputs of this size land on exact halves, which exercises ties to even.
    add_map(cases, "Floor", [](double v) { return std::floor(v); }, x("X", {}, 4.0));
    add_map(cases, "Ceil", [](double v) { return std::ceil(v); }, x("X", {}, 4.0));
    add_map(cases, "Round", ref::round_half_even, x("X", {}, 4.0));
    const Fn1 sign = [](double v) { return double((v > 0) - (v < 0)); };
    add_map(cases, "Sign", sign, x("X", {}));
    cases.push_back(typed({"Sign", "i64 [3,7]", {integers("X", {3, 7}, -3, 3)}, node("Sign"), unary_ref(sign)},
                          {DType::i64}));
    const Fn1 never = [](double) { return 0.0; };  // inputs are finite
    add_map(cases, "IsNaN", never, x("X", {}));
    add_map(cases, "IsInf", never, x("X", {}));
    add_map(cases, "IsInf", never, x("X", {}), {{"detect_positive", int64_t{0}}}, "negative only ");
}

void add_activations(std::vector<Case>& cases) {
    const InputSpec in = x("X", {}, 3.0);
    // Attributes are f32: defaults such as 0.01 reach an f64 kernel rounded to f32.
    const double leaky_alpha = 0.01f, sigmoid_alpha = 0.2f;
    add_map(cases, "LeakyRelu", [=](double v) { return v >= 0 ? v : leaky_alpha * v; }, in);
    add_map(cases, "LeakyRelu", [](double v) { return v >= 0 ? v : 0.125 * v; }, in, {{"alpha", 0.125f}},
            "alpha=0.125 ");
    add_map(cases, "Elu", [](double v) { return v >= 0 ? v : std::exp(v) - 1; }, in);
    add_map(cases, "Elu", [](double v) { return v >= 0 ? v : 0.5 * (std::exp(v) - 1); }, in, {{"alpha", 0.5f}},
            "alpha=0.5 ");
    const double selu_alpha = 1.67326319217681884765625, selu_gamma = 1.05070102214813232421875;
    add_map(cases, "Selu", [=](double v) { return v > 0 ? selu_gamma * v : selu_gamma * (selu_alpha * std::exp(v) - selu_alpha); },
            in);
    add_map(cases, "Selu", [](double v) { return v > 0 ? 1.5 * v : 1.5 * (2 * std::exp(v) - 2); }, in,
            {{"alpha", 2.0f}, {"gamma", 1.5f}}, "alpha=2 gamma=1.5 ");
    add_map(cases, "Celu", [](double v) { return std::max(0.0, v) + std::min(0.0, std::exp(v) - 1); }, in);
    add_map(cases, "Celu", [](double v) { return std::max(0.0, v) + std::min(0.0, 2 * (std::exp(v / 2) - 1)); }, in,
            {{"alpha", 2.0f}}, "alpha=2 ");
    add_map(cases, "ThresholdedRelu", [](double v) { return v > 1 ? v : 0.0; }, in);
    add_map(cases, "ThresholdedRelu", [](double v) { return v > 0.5 ? v : 0.0; }, in, {{"alpha", 0.5f}},
            "alpha=0.5 ");
    add_map(cases, "HardSigmoid", [=](double v) { return std::max(0.0, std::min(1.0, sigmoid_alpha * v + 0.5)); }, in);
    add_map(cases, "HardSigmoid", [](double v) { return std::max(0.0, std::min(1.0, 0.25 * v + 0.375)); }, in,
            {{"alpha", 0.25f}, {"beta", 0.375f}}, "alpha=0.25 beta=0.375 ");
    add_map(cases, "HardSwish", [](double v) { return v * std::max(0.0, std::min(1.0, v / 6 + 0.5)); },
            x("X", {}, 5.0));
    add_map(cases, "Softplus", ref::softplus, in);
    add_map(cases, "Softsign", [](double v) { return v / (1 + std::fabs(v)); }, in);
    add_map(cases, "Shrink", [](double v) { return v < -0.5 ? v : v > 0.5 ? v : 0.0; }, in);
    add_map(cases, "Shrink", [](double v) { return v < -0.75 ? v + 0.25 : v > 0.75 ? v - 0.25 : 0.0; }, in,
            {{"lambd", 0.75f}, {"bias", 0.25f}}, "lambd=0.75 bias=0.25 ");
    add_map(cases, "Mish", [](double v) { return v * std::tanh(ref::softplus(v)); }, in);
}

void add_axis_ops(std::vector<Case>& cases) {
    for (const auto& [shape, axis] : {std::pair<Shape, int64_t>{{3, 4, 5}, 1}, {{2, 17}, -1}, {{5, 3}, 0}}) {
        const std::string label = shape.to_string() + " axis=" + std::to_string(axis);
        InputSpec in = x("X", shape, 3.0);
        in.offset = 50.0;  // naive exp would lose everything; the kernel must subtract the max
        cases.push_back({"LogSoftmax", label, {in}, node("LogSoftmax", {{"axis", axis}}),
                         [axis](const auto& v, DType) { return std::vector{ref::log_softmax(v[0], axis)}; }});
        cases.push_back({"Hardmax", label, {x("X", shape)}, node("Hardmax", {{"axis", axis}}),
                         [axis](const auto& v, DType) { return std::vector{ref::hardmax(v[0], axis)}; }});
    }
    cases.push_back({"LogSoftmax", "[129,257] default axis", {x("X", {129, 257}, 3.0)}, node("LogSoftmax"),
                     [](const auto& v, DType) { return std::vector{ref::log_softmax(v[0], -1)}; }});
    cases.push_back({"Hardmax", "ties [4,6]", {integers("X", {4, 6}, -2, 2, std::nullopt)}, node("Hardmax"),
                     [](const auto& v, DType) { return std::vector{ref::hardmax(v[0], -1)}; }});

    for (const bool largest : {true, false}) {
        const std::string op = largest ? "ArgMax" : "ArgMin";
        const auto arg_case = [&](const std::string& label, InputSpec in, int64_t axis, bool keepdims, bool last,
                                  bool axis_given = true) {
            Attributes attrs{{"keepdims", int64_t{keepdims}}, {"select_last_index", int64_t{last}}};
            if (axis_given) attrs.set("axis", axis);
            return Case{op, label, {std::move(in)}, node(op, attrs), [=](const auto& v, DType) {
                            return std::vector{ref::arg_extreme(v[0], axis, keepdims, last, largest)};
                        }};
        };
        cases.push_back(arg_case("[3,4,5] axis=1", x("X", {3, 4, 5}), 1, true, false));
        cases.push_back(arg_case("[2,17] axis=-1 no keepdims", x("X", {2, 17}), -1, false, false));
        cases.push_back(arg_case("[5,3] default axis", x("X", {5, 3}), 0, true, false, false));
        // Lines long enough for a block of threads to share each (a vocabulary's logits), and strided.
        cases.push_back(arg_case("[3,5000] axis=-1", x("X", {3, 5000}), -1, true, false));
        cases.push_back(arg_case("[2,1500,3] axis=1 last", x("X", {2, 1500, 3}), 1, false, true));
        // A vocabulary row (the 1024-thread block, four loads per thread in flight), and ties
        // spread over such a row.
        cases.push_back(arg_case("[2,50257] axis=-1", x("X", {2, 50257}), -1, true, false));
        cases.push_back(arg_case("ties [2,20001] axis=-1", integers("X", {2, 20001}, -2, 2, std::nullopt), -1, true, false));
        cases.push_back(arg_case("ties [2,20001] axis=-1 last", integers("X", {2, 20001}, -2, 2, std::nullopt), -1, true, true));
        cases.push_back(arg_case("ties [4,6] axis=1", integers("X", {4, 6}, -2, 2, std::nullopt), 1, true, false));
        cases.push_back(arg_case("ties [4,6] axis=0 last", integers("X", {4, 6}, -2, 2, std::nullopt), 0, false, true));
        cases.push_back(typed(arg_case("i64 [3,7] axis=1 last", integers("X", {3, 7}, -3, 3), 1, true, true),
                              {DType::i64}));
    }

    const auto cumsum_case = [](const std::string& label, InputSpec in, int64_t axis, bool exclusive, bool reverse) {
        return accumulating({"CumSum", label, {std::move(in)},
                             node("CumSum", {{"exclusive", int64_t{exclusive}}, {"reverse", int64_t{reverse}}},
                                  {arg(0), ints({axis})}),
                             [=](const auto& v, DType) {
                                 return std::vector{ref::cumsum(v[0], axis, exclusive, reverse)};
                             }});
    };
    cases.push_back(cumsum_case("[3,4,5] axis=1", x("X", {3, 4, 5}), 1, false, false));
    cases.push_back(cumsum_case("[2,17] axis=-1 exclusive", x("X", {2, 17}), -1, true, false));
    cases.push_back(cumsum_case("[17] reverse", x("X", {17}), 0, false, true));
    cases.push_back(cumsum_case("[5,3] axis=0 reverse exclusive", x("X", {5, 3}), 0, true, true));
    cases.push_back(typed(cumsum_case("i64 [4,6] axis=1", integers("X", {4, 6}, -50, 50), 1, false, false),
                          {DType::i64}));
}

void add_reductions(std::vector<Case>& cases) {
    using ref::MathReduction;
    const std::vector<std::tuple<std::string, MathReduction, Fill, bool>> ops{
        {"ReduceMin", MathReduction::min, Fill::signed_values, true},
        {"ReduceProd", MathReduction::prod, Fill::signed_values, true},
        {"ReduceSumSquare", MathReduction::sum_square, Fill::signed_values, true},
        {"ReduceLogSumExp", MathReduction::log_sum_exp, Fill::signed_values, false},
        {"ReduceLogSum", MathReduction::log_sum, Fill::positive, false},
        {"ReduceL1", MathReduction::l1, Fill::signed_values, true},
        {"ReduceL2", MathReduction::l2, Fill::signed_values, false},
    };
    for (const auto& [op, kind, fill, integer] : ops) {
        const auto reduce_case = [&, kind = kind](const std::string& label, InputSpec in, Dims axes, bool keepdims) {
            if (in.fill != Fill::integers) in.fill = fill;
            std::vector<Operand> operands{arg(0)};
            if (!axes.empty()) operands.push_back(ints(axes));
            return accumulating({op, label, {std::move(in)}, node(op, {{"keepdims", int64_t{keepdims}}}, operands),
                                 [=](const auto& v, DType) {
                                     return std::vector{ref::reduce_math(v[0], kind, axes, keepdims)};
                                 }});
        };
        cases.push_back(reduce_case("[3,4,5] axes=1", x("X", {3, 4, 5}), {1}, true));
        cases.push_back(reduce_case("[3,4,5] axes=-1,0 no keepdims", x("X", {3, 4, 5}), {-1, 0}, false));
        cases.push_back(reduce_case("[2,17] all axes", x("X", {2, 17}), {}, true));
        cases.push_back(reduce_case("[33,65] axes=0", x("X", {33, 65}, 0.5), {0}, false));
        if (integer)
            cases.push_back(typed(reduce_case("i64 [3,4] axes=0", integers("X", {3, 4}, -5, 5), {0}, true),
                                  {DType::i64}));
    }
}

void add_variadic(std::vector<Case>& cases) {
    const Fn2 min = [](double a, double b) { return std::min(a, b); };
    const Fn2 max = [](double a, double b) { return std::max(a, b); };
    const Fn2 sum = [](double a, double b) { return a + b; };
    for (const auto& [op, f] : {std::pair<std::string, Fn2>{"Min", min}, {"Max", max}, {"Sum", sum}, {"Mean", sum}}) {
        const bool mean = op == "Mean";
        const ReferenceFn reference = [f = f, mean](const std::vector<RefTensor>& in, DType) {
            RefTensor out = ref::fold(in, f);
            const auto n = static_cast<double>(in.size());
            if (mean) out = ref::unary(out, [n](double v) { return v / n; });
            return std::vector{out};
        };
        cases.push_back({op, "[2,3,4] [4] [3,1]", {x("A", {2, 3, 4}), x("B", {4}), x("C", {3, 1})}, node(op),
                         reference});
        cases.push_back({op, "one input [17]", {x("A", {17})}, node(op), reference});
        cases.push_back({op, "[1,33] [17,1]", {x("A", {1, 33}), x("B", {17, 1})}, node(op), reference});
        if (!mean)
            cases.push_back(typed({op, "i64 [2,3] [3]", {integers("A", {2, 3}, -9, 9), integers("B", {3}, -9, 9)},
                                   node(op), reference},
                                  {DType::i64}));
        if (op == "Min" || op == "Max")  // the other integer types; values ≥ 0 so that unsigned ones hold them
            cases.push_back(typed({op, "integers [2,3] [3]",
                                   {integers("A", {2, 3}, 0, 30000, std::nullopt), integers("B", {3}, 0, 30000, std::nullopt)},
                                   node(op), reference},
                                  {DType::i16, DType::u16, DType::u32, DType::u64}));
    }
}

void add_binary_ops(std::vector<Case>& cases) {
    const Fn2 c_mod = [](double a, double b) { return std::fmod(a, b); };
    cases.push_back({"Mod", "fmod [2,3,4] [4]", {x("A", {2, 3, 4}, 5.0), x("B", {4})}, node("Mod", {{"fmod", int64_t{1}}}),
                     binary_ref(c_mod)});
    cases.push_back({"Mod", "fmod [17] []", {x("A", {17}, 5.0), x("B", {})}, node("Mod", {{"fmod", int64_t{1}}}),
                     binary_ref(c_mod)});
    cases.push_back(typed({"Mod", "positive divisor [3,5] [5]", {integers("A", {3, 5}, -20, 20, std::nullopt),
                                                                 integers("B", {5}, 1, 7, std::nullopt)},
                           node("Mod"), binary_ref(ref::python_mod)},
                          {DType::i64, DType::i32, DType::i16}));
    cases.push_back(typed({"Mod", "unsigned [3,5] [5]", {integers("A", {3, 5}, 0, 60000, std::nullopt),
                                                          integers("B", {5}, 1, 300, std::nullopt)},
                           node("Mod"), binary_ref(ref::python_mod)},
                          {DType::u16, DType::u32, DType::u64}));
    // Negating the divisor in the graph gives negative divisors without drawing a zero.
    cases.push_back(typed({"Mod", "negative divisor [3,5] [5]",
                           {integers("A", {3, 5}, -20, 20, std::nullopt), integers("B", {5}, 1, 7, std::nullopt)},
                           [](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType) {
                               return std::vector{b.op1("Mod", {in[0], b.op1("Neg", {in[1]})})};
                           },
                           [](const auto& in, DType) {
                               return std::vector{ref::binary(in[0], in[1], [](double a, double d) { return ref::python_mod(a, -d); })};
                           }},
                          {DType::i64, DType::i32}));
    cases.push_back(typed({"Mod", "fmod i64 [17] [17]", {integers("A", {17}, -20, 20), integers("B", {17}, 1, 7)},
                           node("Mod", {{"fmod", int64_t{1}}}), binary_ref(c_mod)},
                          {DType::i64}));

    const auto clip = [](const std::vector<RefTensor>& in, int lo, int hi) {
        RefTensor y = in[0];
        if (lo >= 0) y = ref::binary(y, in[static_cast<size_t>(lo)], [](double v, double l) { return std::max(v, l); });
        if (hi >= 0) y = ref::binary(y, in[static_cast<size_t>(hi)], [](double v, double h) { return std::min(v, h); });
        return std::vector{y};
    };
    cases.push_back({"Clip", "min max [3,4,5]", {x("X", {3, 4, 5}, 2.0), x("lo", {}), positive("hi", {})}, node("Clip"),
                     [clip](const auto& in, DType) { return clip(in, 1, 2); }});
    cases.push_back({"Clip", "max only [17]", {x("X", {17}, 2.0), positive("hi", {})},
                     node("Clip", {}, {arg(0), absent(), arg(1)}),
                     [clip](const auto& in, DType) { return clip(in, -1, 1); }});
    cases.push_back({"Clip", "min only [2,17]", {x("X", {2, 17}, 2.0), x("lo", {})}, node("Clip"),
                     [clip](const auto& in, DType) { return clip(in, 1, -1); }});
    cases.push_back({"Clip", "no bounds [17]", {x("X", {17})}, node("Clip"),
                     [clip](const auto& in, DType) { return clip(in, -1, -1); }});
    cases.push_back(typed({"Clip", "i64 [3,7]", {integers("X", {3, 7}, -9, 9), integers("lo", {}, -5, 0),
                                                 integers("hi", {}, 0, 5)},
                           node("Clip"), [clip](const auto& in, DType) { return clip(in, 1, 2); }},
                          {DType::i64}));

    const Fn2 prelu = [](double v, double slope) { return v < 0 ? slope * v : v; };
    for (const auto& [xs, ss] : {std::pair<Shape, Shape>{{2, 3, 4}, {4}}, {{3, 4, 5}, {3, 1, 1}}, {{17}, {1}}})
        cases.push_back({"PRelu", xs.to_string() + " " + ss.to_string(), {x("X", xs), x("slope", ss)}, node("PRelu"),
                         binary_ref(prelu)});

    const std::vector<std::pair<Shape, Shape>> shapes{{{2, 3, 4}, {2, 3, 4}}, {{2, 1, 4}, {3, 1}}, {{17}, {}}};
    for (const auto& [op, f] : {std::pair<std::string, Fn2>{"And", [](double a, double b) { return double(a && b); }},
                                {"Or", [](double a, double b) { return double(a || b); }},
                                {"Xor", [](double a, double b) { return double((a != 0) != (b != 0)); }}})
        for (const auto& [sa, sb] : shapes)
            cases.push_back(typed({op, sa.to_string() + " " + sb.to_string(), {booleans("A", sa), booleans("B", sb)},
                                   node(op), binary_ref(f)},
                                  {DType::boolean}));
    for (const auto& [op, f] : {std::pair<std::string, Fn2>{"GreaterOrEqual", [](double a, double b) { return double(a >= b); }},
                                {"LessOrEqual", [](double a, double b) { return double(a <= b); }}}) {
        for (const auto& [sa, sb] : shapes)
            cases.push_back({op, sa.to_string() + " " + sb.to_string(),
                             {integers("A", sa, -3, 3, std::nullopt), integers("B", sb, -3, 3, std::nullopt)}, node(op),
                             binary_ref(f)});
        cases.push_back(typed({op, "i64 [2,3] [3]", {integers("A", {2, 3}, -2, 2), integers("B", {3}, -2, 2)},
                               node(op), binary_ref(f)},
                              {DType::i64}));
    }
}

void add_size_and_einsum(std::vector<Case>& cases) {
    const ReferenceFn size = [](const std::vector<RefTensor>& in, DType) {
        return std::vector{RefTensor{Shape(std::vector<int64_t>{}), {static_cast<double>(ref::numel(in[0].shape))}}};
    };
    cases.push_back({"Size", "[3,4,5]", {x("X", {3, 4, 5})}, node("Size"), size});
    cases.push_back({"Size", "scalar", {x("X", {})}, node("Size"), size});
    cases.push_back(typed({"Size", "i64 [2,7]", {integers("X", {2, 7}, 0, 9)}, node("Size"), size}, {DType::i64}));

    const auto einsum = [](const std::string& equation, std::vector<InputSpec> in, ReferenceFn reference) {
        return accumulating({"Einsum", "'" + equation + "'", std::move(in), node("Einsum", {{"equation", equation}}),
                             std::move(reference)});
    };
    const ReferenceFn matmul = [](const auto& in, DType) { return std::vector{ref::matmul(in[0], in[1])}; };
    cases.push_back(einsum("ij,jk->ik", {x("A", {3, 5}), x("B", {5, 4})}, matmul));
    cases.push_back(einsum("ij,jk", {x("A", {3, 5}), x("B", {5, 4})}, matmul));
    cases.push_back(einsum("bij, bjk -> bik", {x("A", {2, 3, 5}), x("B", {2, 5, 4})}, matmul));
    cases.push_back(einsum("ij->ji", {x("A", {3, 5})}, [](const auto& in, DType) {
        return std::vector{ref::transpose(in[0], {1, 0})};
    }));
    cases.push_back(einsum("ij->i", {x("A", {3, 17})}, [](const auto& in, DType) {
        return std::vector{ref::reduce(in[0], ref::Reduction::sum, {1}, false)};
    }));
    cases.push_back(einsum("i,i", {x("A", {17}), x("B", {17})}, [](const auto& in, DType) {
        const RefTensor products = ref::binary(in[0], in[1], [](double a, double b) { return a * b; });
        return std::vector{ref::reduce(products, ref::Reduction::sum, {}, false)};
    }));
    cases.push_back(einsum("...ii->...i", {x("A", {3, 5, 5})}, [](const auto& in, DType) {
        return std::vector{ref::batch_diagonal(in[0])};
    }));
}

// Det by cofactor expansion along the first row: another method than the kernel's LU.
double cofactor_det(const std::vector<double>& a, int64_t n) {
    if (n == 1) return a[0];
    double det = 0;
    for (int64_t col = 0; col < n; ++col) {
        std::vector<double> minor;
        for (int64_t r = 1; r < n; ++r)
            for (int64_t c = 0; c < n; ++c)
                if (c != col) minor.push_back(a[static_cast<size_t>(r * n + c)]);
        det += (col % 2 ? -1 : 1) * a[static_cast<size_t>(col)] * cofactor_det(minor, n - 1);
    }
    return det;
}

void add_det_and_shifts(std::vector<Case>& cases) {
    for (const Shape& s : {Shape{3, 3}, Shape{2, 4, 4}, Shape{1, 1}, Shape{2, 2, 5, 5}})
        cases.push_back({"Det", s.to_string(), {x("X", s)}, node("Det"), [](const auto& in, DType) {
                             const Shape& shape = in[0].shape;
                             const int64_t n = shape[shape.rank() - 1];
                             RefTensor out{Shape(std::vector<int64_t>(shape.dims().begin(), shape.dims().end() - 2)), {}};
                             for (size_t m = 0; m * n * n < in[0].data.size(); ++m)
                                 out.data.push_back(cofactor_det(
                                     std::vector<double>(in[0].data.begin() + static_cast<std::ptrdiff_t>(m * n * n),
                                                         in[0].data.begin() + static_cast<std::ptrdiff_t>((m + 1) * n * n)),
                                     n));
                             return std::vector{out};
                         }});
    for (const std::string direction : {"LEFT", "RIGHT"}) {
        const bool left = direction == "LEFT";
        Case shift{"BitShift", "u8 " + direction + " [2,5] [5]",
                   {integers("X", {2, 5}, 0, left ? 7 : 255, DType::u8), integers("Y", {5}, 0, 5, DType::u8)},
                   node("BitShift", {{"direction", direction}}), [left](const auto& in, DType) {
                       return std::vector{ref::binary(in[0], in[1], [left](double a, double b) {
                           return left ? a * std::pow(2.0, b) : std::floor(a / std::pow(2.0, b));
                       })};
                   }};
        shift.dtypes = {DType::u8};
        cases.push_back(shift);
        // The wider unsigned types, with shifts that carry bits past 8 and past the type's width.
        Case wide{"BitShift", "wide " + direction + " [2,5] [5]",
                  {integers("X", {2, 5}, 0, 60000, std::nullopt), integers("Y", {5}, 0, 20, std::nullopt)},
                  node("BitShift", {{"direction", direction}}), [left](const auto& in, DType type) {
                      const double width = type == DType::u16 ? 16 : type == DType::u32 ? 32 : 64;
                      return std::vector{ref::binary(in[0], in[1], [left, width](double a, double b) {
                          return left ? std::fmod(a * std::pow(2.0, b), std::pow(2.0, width)) : std::floor(a / std::pow(2.0, b));
                      })};
                  }};
        wide.dtypes = {DType::u16, DType::u32, DType::u64};
        cases.push_back(wide);
    }
}

}  // namespace

std::vector<Case> math_cases() {
    std::vector<Case> cases;
    add_trigonometry(cases);
    add_det_and_shifts(cases);
    add_rounding(cases);
    add_activations(cases);
    add_axis_ops(cases);
    add_reductions(cases);
    add_variadic(cases);
    add_binary_ops(cases);
    add_size_and_einsum(cases);
    return cases;
}

}  // namespace ops
