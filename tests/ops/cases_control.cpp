// Op test cases of the control-flow family: If, Loop and Scan with bodies built here, each
// reading a tensor of the enclosing graph through an implicit input.
#include "op_case.hpp"

#include <infer/graph.hpp>

namespace ops {

namespace {

using infer::GraphBuilder;
using infer::Value;
const Shape kScalar(std::vector<int64_t>{});

std::shared_ptr<const infer::Graph> finish(GraphBuilder& b) { return std::make_shared<const infer::Graph>(b.build()); }

infer::Tensor bool_scalar(bool v) {
    infer::Tensor t = infer::Tensor::empty(DType::boolean, kScalar);
    *static_cast<uint8_t*>(t.raw_data()) = v;
    return t;
}

RefTensor map2(const RefTensor& a, const RefTensor& b, double (*f)(double, double)) {
    return ref::binary(a, b, [f](double x, double y) { return f(x, y); });
}

// If(cond) with then = X * X and else = X + X, X read from the enclosing graph.
Case if_case(bool condition) {
    return {"If", std::string("[3,5] cond ") + (condition ? "true" : "false"), {x("X", {3, 5})},
            [condition](GraphBuilder& b, const std::vector<Value>& in, DType dt) {
                GraphBuilder then_branch("then"), else_branch("else");
                const Value tx = then_branch.input("X", dt, Shape{3, 5});
                then_branch.output("y", then_branch.mul(tx, tx));
                const Value ex = else_branch.input("X", dt, Shape{3, 5});
                else_branch.output("y", else_branch.add(ex, ex));
                const infer::Attributes attrs{{"then_branch", finish(then_branch)},
                                              {"else_branch", finish(else_branch)},
                                              {"implicit_inputs", int64_t{1}}};
                return b.op("If", {b.constant(bool_scalar(condition)), in[0]}, attrs, 1);
            },
            [condition](const auto& v, DType) {
                return std::vector{condition ? map2(v[0], v[0], [](double a, double c) { return a * c; })
                                             : map2(v[0], v[0], [](double a, double c) { return a + c; })};
            }};
}

// Loop over `trips` iterations: acc += X (X implicit); scan output acc * X each iteration.
Case loop_case(int64_t trips) {
    return {"Loop", "[3,4] trips " + std::to_string(trips), {x("X", {3, 4})},
            [trips](GraphBuilder& b, const std::vector<Value>& in, DType dt) {
                GraphBuilder body("body");
                body.input("i", DType::i64, kScalar);
                const Value cond = body.input("cond", DType::boolean, kScalar);
                const Value acc = body.input("acc", dt, Shape{3, 4});
                const Value outer = body.input("X", dt, Shape{3, 4});
                const Value next = body.add(acc, outer);
                body.output("cond_out", body.op1("Identity", {cond}));
                body.output("acc_out", next);
                body.output("scan", body.mul(next, outer));
                const infer::Attributes attrs{{"body", finish(body)}, {"implicit_inputs", int64_t{1}}};
                const Value m = b.constant(infer::Tensor::from_vector(std::vector<int64_t>{trips}, kScalar));
                return b.op("Loop", {m, b.constant(bool_scalar(true)), in[0], in[0]}, attrs, 2);
            },
            [trips](const auto& v, DType) {
                RefTensor acc = v[0];
                std::vector<double> stacked;
                for (int64_t i = 0; i < trips; ++i) {
                    acc = map2(acc, v[0], [](double a, double c) { return a + c; });
                    const RefTensor s = map2(acc, v[0], [](double a, double c) { return a * c; });
                    stacked.insert(stacked.end(), s.data.begin(), s.data.end());
                }
                return std::vector{acc, RefTensor{Shape{trips, 3, 4}, stacked}};
            }};
}

// Scan over the rows of X [5,4]: state s += row; scan output s * row * W (W implicit).
Case scan_case() {
    Case c{"Scan", "state [4] over X [5,4]", {x("S", {4}), x("X", {5, 4}), x("W", {4})},
            [](GraphBuilder& b, const std::vector<Value>& in, DType dt) {
                GraphBuilder body("body");
                const Value s = body.input("s", dt, Shape{4});
                const Value row = body.input("row", dt, Shape{4});
                const Value w = body.input("W", dt, Shape{4});
                const Value next = body.add(s, row);
                body.output("s_out", next);
                body.output("y", body.mul(body.mul(next, row), w));
                const infer::Attributes attrs{{"body", finish(body)}, {"num_scan_inputs", int64_t{1}},
                                              {"implicit_inputs", int64_t{1}}};
                return b.op("Scan", {in[0], in[1], in[2]}, attrs, 2);
            },
            [](const auto& v, DType) {
                std::vector<double> s = v[0].data, stacked;
                for (int64_t t = 0; t < 5; ++t)
                    for (size_t j = 0; j < 4; ++j) {
                        const double row = v[1].data[static_cast<size_t>(t) * 4 + j];
                        s[j] += row;
                        stacked.push_back(s[j] * row * v[2].data[j]);
                    }
                return std::vector{RefTensor{Shape{4}, s}, RefTensor{Shape{5, 4}, stacked}};
            }};
    c.accumulates = true;  // five running sums, rounded in f16/bf16 at every step
    return c;
}

}  // namespace

std::vector<Case> control_cases() {
    std::vector<Case> c{if_case(true), if_case(false), loop_case(4), loop_case(1), loop_case(0), scan_case()};
    return c;
}

}  // namespace ops
