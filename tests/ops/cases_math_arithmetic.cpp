// Op test cases of the math family's arithmetic: unary maps, broadcasting binary ops,
// comparisons, Where and Cast, the matrix products and the core reductions.
#include "op_case.hpp"
#include "precision.hpp"

#include <cmath>

namespace ops {

namespace {
using Fn1 = std::function<double(double)>;
using Fn2 = std::function<double(double, double)>;

std::string pair_label(const Shape& a, const Shape& b) { return a.to_string() + " " + b.to_string(); }

// Same shapes, trailing and leading broadcasts, both-sided broadcast, a scalar, odd sizes.
const std::vector<std::pair<Shape, Shape>> kBinaryShapes{
    {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {4}},      {{2, 1, 4}, {3, 1}},
    {{17}, {}},             {{1, 33}, {17, 1}},    {{3, 1, 17}, {1, 5, 1}},
    {{64, 1000}, {1000}},   {{7, 1, 4099}, {1, 5, 1}},  // large: vector loops, threads, tails
    // Rows long enough to be cut into pieces across threads: one merged row of 120003, a
    // scalar operand, and several long rows against a broadcast one.
    {{3, 40001}, {3, 40001}}, {{70001}, {}}, {{2, 3, 33001}, {33001}},
    // An attention mask's shape: broadcast along a middle axis, rows of 16 that the GPU reads
    // 4 (f32) or 8 (f16) elements per access.
    {{4, 2, 16}, {4, 1, 16}},
};

void add_binary(std::vector<Case>& cases, const std::string& op, Fn2 f, Fill a_fill = Fill::signed_values,
                Fill b_fill = Fill::signed_values) {
    for (const auto& [sa, sb] : kBinaryShapes) {
        InputSpec a = x("A", sa), b = x("B", sb);
        a.fill = a_fill;
        b.fill = b_fill;
        cases.push_back({op, pair_label(sa, sb), {a, b}, node(op),
                         [f](const auto& in, DType) { return std::vector{ref::binary(in[0], in[1], f)}; }});
    }
}

// Integer variants used by shape arithmetic in exported models; optional on the CPU.
void add_integer_binary(std::vector<Case>& cases, const std::string& op, Fn2 f) {
    Case c{op, "i64 [2,3] [3]", {integers("A", {2, 3}, -9, 9), integers("B", {3}, -9, 9)}, node(op),
           [f](const auto& in, DType) { return std::vector{ref::binary(in[0], in[1], f)}; }};
    c.dtypes = {DType::i64};
    c.cpu_optional = true;
    cases.push_back(c);
}

void add_comparison(std::vector<Case>& cases, const std::string& op, Fn2 f) {
    // Small integers so that ties occur (and survive rounding to f16/bf16 exactly).
    for (const auto& [sa, sb] : {std::pair<Shape, Shape>{{2, 3, 4}, {2, 3, 4}}, {{2, 1, 4}, {3, 1}}, {{17}, {}}})
        cases.push_back({op, pair_label(sa, sb),
                         {integers("A", sa, -3, 3, std::nullopt), integers("B", sb, -3, 3, std::nullopt)}, node(op),
                         [f](const auto& in, DType) { return std::vector{ref::binary(in[0], in[1], f)}; }});
}

void add_unary(std::vector<Case>& cases, const std::string& op, Fn1 f, Fill fill = Fill::signed_values,
               double scale = 1.0, infer::Attributes attrs = {}, const std::string& note = "") {
    for (const Shape& s : {Shape{2, 3, 4}, Shape{17}, Shape{1, 33}, Shape{5, 1, 7}, Shape{}, Shape{129, 257}}) {
        InputSpec in = x("X", s, scale);
        in.fill = fill;
        cases.push_back({op, note + s.to_string(), {in}, node(op, attrs),
                         [f](const auto& v, DType) { return std::vector{ref::unary(v[0], f)}; }});
    }
}

Case cast_case(const std::string& label, InputSpec input, std::optional<DType> to,
               std::vector<DType> dtypes, Fn1 f = [](double v) { return v; }) {
    // `to` empty: cast into the case's dtype (the input has a fixed type); else the input
    // has the case's dtype and is cast to `to`.
    Case c{"Cast", label, {std::move(input)},
           [to](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType dt) {
               return std::vector{b.op1("Cast", {in[0]}, {{"to", onnx_type(to.value_or(dt))}})};
           },
           [f](const auto& in, DType) { return std::vector{ref::unary(in[0], f)}; }};
    c.dtypes = std::move(dtypes);
    return c;
}
std::string dims_label(const Dims& d) { return Shape(d).to_string(); }

Case accumulating(Case c) {
    c.accumulates = true;
    return c;
}

void add_reduce(std::vector<Case>& c, const std::string& op, ref::Reduction kind) {
    struct Spec { Shape in; std::optional<Dims> axes; bool keepdims; };
    for (const auto& s : std::vector<Spec>{{{2, 3, 4}, Dims{1}, true}, {{2, 3, 4}, Dims{-1}, false},
                                           {{2, 3, 4}, Dims{0, 2}, true}, {{3, 17, 33}, Dims{-2, -1}, false},
                                           {{2, 3, 4}, std::nullopt, true}, {{5, 7}, std::nullopt, false},
                                           {{33, 17}, Dims{0}, false}, {{1, 5, 1}, Dims{2}, true},
                                           {{8, 4097}, Dims{1}, false}, {{1025, 64}, Dims{0}, true}}) {
        infer::Attributes attrs{{"keepdims", int64_t{s.keepdims}}};
        std::vector<Operand> operands{arg(0)};
        if (s.axes) operands.push_back(ints(*s.axes));
        const Dims axes = s.axes.value_or(Dims{});
        c.push_back(accumulating({op, s.in.to_string() + " axes " + (s.axes ? dims_label(*s.axes) : "none") +
                                          " keepdims " + std::to_string(s.keepdims),
                                  {x("X", s.in)}, node(op, attrs, operands),
                                  [=, keep = s.keepdims](const auto& v, DType) {
                                      return std::vector{ref::reduce(v[0], kind, axes, keep)};
                                  }}));
    }
    // noop_with_empty_axes: no axes means identity rather than "reduce everything".
    c.push_back({op, "[3,4] noop_with_empty_axes", {x("X", {3, 4})}, node(op, {{"noop_with_empty_axes", int64_t{1}}}),
                 [](const auto& v, DType) { return std::vector{v[0]}; }});
}
}  // namespace

std::vector<Case> math_arithmetic_cases() {
    std::vector<Case> cases;
    add_binary(cases, "Add", [](double a, double b) { return a + b; });
    add_binary(cases, "Sub", [](double a, double b) { return a - b; });
    add_binary(cases, "Mul", [](double a, double b) { return a * b; });
    add_binary(cases, "Div", [](double a, double b) { return a / b; });
    add_binary(cases, "Pow", [](double a, double b) { return std::pow(a, b); }, Fill::positive);
    // A negative base needs an integral exponent.
    cases.push_back({"Pow", "negative base, integral exponent [2,3,4] [4]",
                     {x("A", {2, 3, 4}), integers("B", {4}, 1, 3, std::nullopt)}, node("Pow"),
                     [](const auto& in, DType) {
                         return std::vector{ref::binary(in[0], in[1], [](double a, double b) { return std::pow(a, b); })};
                     }});
    // The exponent in another dtype than the base (ONNX's T1, T2): integer bases truncate.
    const auto pow_truncated = [](const auto& in, DType dt) {
        return std::vector{ref::binary(in[0], in[1], [dt](double a, double b) {
            return infer::is_floating(dt) ? std::pow(a, b) : std::trunc(std::pow(a, b));
        })};
    };
    for (DType exponent : {DType::i32, DType::i64, DType::u32, DType::u64}) {
        Case c{"Pow", "f32 base, " + std::string(infer::dtype_name(exponent)) + " exponent [2,3,4] [4]",
               {x("A", {2, 3, 4}), integers("B", {4}, 0, 3, exponent)}, node("Pow"), pow_truncated};
        c.dtypes = {DType::f32};
        cases.push_back(c);
    }
    for (DType base : {DType::i32, DType::i64}) {
        InputSpec exponent = positive("B", {3}, 2.0);
        exponent.dtype = DType::f32;
        Case mixed{"Pow", std::string(infer::dtype_name(base)) + " base, f32 exponent [2,3] [3]",
                   {integers("A", {2, 3}, 1, 6, base), exponent}, node("Pow"), pow_truncated};
        mixed.dtypes = {base};
        cases.push_back(mixed);
        Case same{"Pow", std::string(infer::dtype_name(base)) + " base and exponent [2,3] [3]",
                  {integers("A", {2, 3}, -4, 4, base), integers("B", {3}, 0, 4, base)}, node("Pow"), pow_truncated};
        same.dtypes = {base};
        cases.push_back(same);
    }
    // u8 arithmetic, with operands that keep every result in [0, 255].
    for (const auto& [op, f] : std::vector<std::pair<std::string, Fn2>>{
             {"Add", [](double a, double b) { return a + b; }},
             {"Sub", [](double a, double b) { return a - b; }},
             {"Mul", [](double a, double b) { return a * b; }},
             {"Div", [](double a, double b) { return std::trunc(a / b); }}}) {
        Case c{op, "u8 [2,3] [3]", {integers("A", {2, 3}, 10, 25, DType::u8), integers("B", {3}, 1, 9, DType::u8)}, node(op),
               [f](const auto& in, DType) { return std::vector{ref::binary(in[0], in[1], f)}; }};
        c.dtypes = {DType::u8};
        cases.push_back(c);
    }
    add_integer_binary(cases, "Add", [](double a, double b) { return a + b; });
    add_integer_binary(cases, "Sub", [](double a, double b) { return a - b; });
    add_integer_binary(cases, "Mul", [](double a, double b) { return a * b; });

    add_comparison(cases, "Equal", [](double a, double b) { return double(a == b); });
    add_comparison(cases, "Less", [](double a, double b) { return double(a < b); });
    add_comparison(cases, "Greater", [](double a, double b) { return double(a > b); });
    Case equal_i64{"Equal", "i64 [2,3] [3]", {integers("A", {2, 3}, -2, 2), integers("B", {3}, -2, 2)}, node("Equal"),
                   [](const auto& in, DType) {
                       return std::vector{ref::binary(in[0], in[1], [](double a, double b) { return double(a == b); })};
                   }};
    equal_i64.dtypes = {DType::i64};
    equal_i64.cpu_optional = true;
    cases.push_back(equal_i64);

    for (const auto& [c, a, b] : {std::tuple<Shape, Shape, Shape>{{2, 3, 4}, {2, 3, 4}, {2, 3, 4}},
                                  {{2, 3, 4}, {4}, {}}, {{3, 1}, {2, 1, 17}, {17}}, {{33}, {1}, {33}},
                                  {{64, 1000}, {64, 1000}, {1000}}, {{2, 40001}, {2, 40001}, {}}})
        cases.push_back({"Where", c.to_string() + " " + pair_label(a, b), {booleans("C", c), x("X", a), x("Y", b)},
                         node("Where"),
                         [](const auto& in, DType) { return std::vector{ref::where(in[0], in[1], in[2])}; }});

    add_unary(cases, "Sqrt", [](double v) { return std::sqrt(v); }, Fill::positive);
    add_unary(cases, "Reciprocal", [](double v) { return 1 / v; });
    add_unary(cases, "Exp", [](double v) { return std::exp(v); }, Fill::signed_values, 3.0);
    add_unary(cases, "Log", [](double v) { return std::log(v); }, Fill::positive, 3.0);
    add_unary(cases, "Tanh", [](double v) { return std::tanh(v); }, Fill::signed_values, 3.0);
    add_unary(cases, "Erf", [](double v) { return std::erf(v); }, Fill::signed_values, 1.5);
    add_unary(cases, "Relu", [](double v) { return v > 0 ? v : 0.0; });
    add_unary(cases, "Sigmoid", [](double v) { return ref::sigmoid(v); }, Fill::signed_values, 4.0);
    add_unary(cases, "Gelu", [](double v) { return ref::gelu(v, false); }, Fill::signed_values, 3.0);
    add_unary(cases, "Gelu", [](double v) { return ref::gelu(v, false); }, Fill::signed_values, 3.0,
              {{"approximate", std::string("none")}}, "none ");
    add_unary(cases, "Gelu", [](double v) { return ref::gelu(v, true); }, Fill::signed_values, 3.0,
              {{"approximate", std::string("tanh")}}, "tanh ");
    add_unary(cases, "Neg", [](double v) { return -v; });
    add_unary(cases, "Abs", [](double v) { return std::fabs(v); });
    add_unary(cases, "Identity", [](double v) { return v; });
    for (const Shape& s : {Shape{2, 3, 4}, Shape{17}, Shape{}}) {
        Case c{"Not", s.to_string(), {booleans("X", s)}, node("Not"),
               [](const auto& in, DType) { return std::vector{ref::unary(in[0], [](double v) { return double(v == 0); })}; }};
        c.dtypes = {DType::boolean};
        cases.push_back(c);
    }
    Case identity_i64{"Identity", "i64 [3,5]", {integers("X", {3, 5}, -100, 100)}, node("Identity"),
                      [](const auto& in, DType) { return std::vector{in[0]}; }};
    identity_i64.dtypes = {DType::i64};
    cases.push_back(identity_i64);

    // Cast: between float types (the result is the input rounded to the target), float to
    // integers (truncation toward zero), float to bool (nonzero), and back.
    const auto trunc = [](double v) { return std::trunc(v); };
    for (DType to : kFloatTypes)
        cases.push_back(cast_case(std::string("to ") + std::string(infer::dtype_name(to)) + " [2,3,17]",
                                  x("X", {2, 3, 17}), to, kFloatTypes,
                                  [to](double v) { return ref::round_to(to, static_cast<float>(v)); }));
    cases.push_back(cast_case("to i64 [3,17]", x("X", {3, 17}, 50.0), DType::i64, kFloatTypes, trunc));
    cases.push_back(cast_case("to i32 [33]", x("X", {33}, 50.0), DType::i32, kFloatTypes, trunc));
    cases.push_back(cast_case("to bool [3,17]", integers("X", {3, 17}, -2, 2, std::nullopt), DType::boolean,
                              kFloatTypes, [](double v) { return double(v != 0); }));
    cases.push_back(cast_case("from i64 [3,17]", integers("X", {3, 17}, -100, 100), std::nullopt, kFloatTypes));
    cases.push_back(cast_case("from i32 [17]", integers("X", {17}, -100, 100, DType::i32), std::nullopt, kFloatTypes));
    cases.push_back(cast_case("from bool [3,17]", booleans("X", {3, 17}), std::nullopt, kFloatTypes));
    cases.push_back(cast_case("i64 to i32 [17]", integers("X", {17}, -1000, 1000), DType::i32, {DType::i64}));
    cases.push_back(cast_case("i32 to i64 [17]", integers("X", {17}, -1000, 1000, DType::i32), DType::i64, {DType::i32}));
    auto& c = cases;  // the products and reductions below
    for (const auto& [a, b] : {std::pair<Shape, Shape>{{3, 4}, {4, 5}}, {{2, 3, 4}, {4, 5}}, {{2, 1, 3, 4}, {3, 4, 5}},
                               {{4}, {4, 5}}, {{3, 4}, {4}}, {{33}, {33}}, {{2, 3, 17}, {17}}, {{17, 33}, {33, 17}},
                               {{1, 64}, {64, 33}}, {{2, 3, 5}, {2, 5, 3}}, {{4, 65, 129}, {129, 67}},
                               {{1, 1000}, {1000, 64}},
                               // Few rows by a weight past the caches: the CPU's gemv (1 row) and
                               // streamed (up to 8 rows, k not a multiple of 4) paths.
                               {{1, 523}, {523, 1030}}, {{5, 523}, {523, 1030}}, {{2, 3, 523}, {523, 1030}},
                               // Whole 16-byte rows of B: CUDA's skinny kernel with vector loads.
                               {{3, 128}, {128, 256}}, {{2, 4, 40}, {40, 24}}})
        c.push_back(accumulating({"MatMul", a.to_string() + " " + b.to_string(), {x("A", a), x("B", b)}, node("MatMul"),
                                  [](const auto& v, DType) { return std::vector{ref::matmul(v[0], v[1])}; }}));
    // By a constant weight (the CPU's packed kernels, packed_float_gemm.hpp), A of rank 1 to 3.
    for (const auto& [a, b] : {std::pair<Shape, Shape>{{9}, {9, 20}}, {{6, 33}, {33, 64}}, {{2, 7, 40}, {40, 17}},
                               {{1, 523}, {523, 1030}}})
        c.push_back(accumulating({"MatMul", a.to_string() + " " + b.to_string() + " constant weight",
                                  {x("A", a), weight("B", b)}, node("MatMul"),
                                  [](const auto& v, DType) { return std::vector{ref::matmul(v[0], v[1])}; }}));

    struct GemmSpec { int64_t m, k, n; bool ta, tb; float alpha, beta; std::optional<Shape> c; };
    for (const auto& g : std::vector<GemmSpec>{{3, 4, 5, false, false, 1, 1, std::nullopt},
                                               {3, 4, 5, true, false, 1, 1, Shape{5}},
                                               {3, 4, 5, false, true, 1, 1, Shape{3, 1}},
                                               {17, 33, 5, true, true, 0.5f, 2.0f, Shape{17, 5}},
                                               {1, 17, 33, false, true, 1, 0.5f, Shape{1, 33}},
                                               {5, 3, 7, false, false, 2.0f, 1, Shape{1}},
                                               {4, 6, 2, false, false, 1, 1, Shape{}},
                                               {130, 70, 90, false, true, 1, 1, Shape{90}},
                                               {6, 523, 1030, false, false, 0.5f, 2.0f, Shape{6, 1030}},
                                               // beta 1 with a bias row ([n] or [1,n]): CUDA's
                                               // cuBLASLt bias epilogue, with transposes and alpha
                                               {3, 4, 5, false, false, 1, 1, Shape{1, 5}},
                                               {17, 33, 24, true, true, 1.5f, 1, Shape{24}},
                                               {64, 48, 40, true, false, 0.5f, 1, Shape{1, 40}},
                                               {1, 17, 33, false, true, -2.0f, 1, Shape{33}},
                                               {6, 5, 1, false, true, 1, 1, Shape{1}},
                                               // few rows by B [n, k] with k whole 16-byte
                                               // vectors: CUDA's skinny kernel along k
                                               {2, 64, 40, false, true, 1, 1, Shape{40}},
                                               {5, 256, 24, false, true, 0.5f, 0, std::nullopt},
                                               {1, 768, 33, false, true, 1, 1, Shape{33}},
                                               // one row by Bᵀ large enough to share (the CPU's
                                               // gemv over blocks of B's rows), A transposed too
                                               {1, 1024, 600, false, true, 0.5f, 2.0f, Shape{1, 600}},
                                               {1, 2048, 1000, true, true, 1, 1, Shape{1000}}}) {
        const Shape sa = g.ta ? Shape{g.k, g.m} : Shape{g.m, g.k}, sb = g.tb ? Shape{g.n, g.k} : Shape{g.k, g.n};
        std::vector<InputSpec> inputs{x("A", sa), x("B", sb)};
        if (g.c) inputs.push_back(x("C", *g.c));
        const infer::Attributes attrs{{"transA", int64_t{g.ta}}, {"transB", int64_t{g.tb}}, {"alpha", g.alpha}, {"beta", g.beta}};
        c.push_back(accumulating(
            {"Gemm", sa.to_string() + " " + sb.to_string() + " C " + (g.c ? g.c->to_string() : "none") + " transA " +
                         std::to_string(g.ta) + " transB " + std::to_string(g.tb) + " alpha " + std::to_string(g.alpha) +
                         " beta " + std::to_string(g.beta),
             inputs, node("Gemm", attrs), [g](const auto& v, DType) {
                 return std::vector{ref::gemm(v[0], v[1], v.size() > 2 ? &v[2] : nullptr, g.ta, g.tb, g.alpha, g.beta)};
             }}));
    }

    add_reduce(c, "ReduceMean", ref::Reduction::mean);
    add_reduce(c, "ReduceSum", ref::Reduction::sum);
    add_reduce(c, "ReduceMax", ref::Reduction::max);
    return cases;
}

}  // namespace ops
