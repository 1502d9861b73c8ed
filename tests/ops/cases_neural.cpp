// Op test cases of the neural-network layers family.
#include "op_case.hpp"
#include "reference_neural.hpp"

#include <algorithm>
#include <cmath>

namespace ops {

namespace {

Case accumulating(Case c) {
    c.accumulates = true;
    return c;
}

void add_losses(std::vector<Case>& c) {
    struct Spec { Shape x; std::string reduction; bool weight; std::optional<int64_t> ignore; DType target; };
    for (const auto& s : std::vector<Spec>{{{3, 5}, "mean", false, std::nullopt, DType::i64},
                                           {{2, 4, 7}, "none", true, 1, DType::i64},
                                           {{2, 3, 2, 5}, "sum", true, std::nullopt, DType::i32},
                                           {{4, 6, 9}, "mean", true, -1, DType::i64}}) {
        Dims target_dims{s.x[0]};
        for (size_t i = 2; i < s.x.rank(); ++i) target_dims.push_back(s.x[i]);
        const int64_t classes = s.x[1];
        std::vector<InputSpec> inputs{x("X", s.x, 2.0), integers("T", Shape(target_dims), s.ignore == -1 ? -1 : 0, classes - 1, s.target)};
        if (s.weight) inputs.push_back(positive("W", {classes}));
        infer::Attributes attrs{{"reduction", s.reduction}};
        if (s.ignore) attrs.set("ignore_index", *s.ignore);
        const std::string label = s.x.to_string() + " " + s.reduction + (s.weight ? " weighted" : "") +
                                  (s.ignore ? " ignore " + std::to_string(*s.ignore) : "") + " " +
                                  std::string(infer::dtype_name(s.target));
        for (size_t outputs : {size_t{1}, size_t{2}})
            c.push_back(accumulating({"SoftmaxCrossEntropyLoss", label + " outputs " + std::to_string(outputs), inputs,
                                      node("SoftmaxCrossEntropyLoss", attrs, {}, outputs), [=](const auto& v, DType) {
                                          auto out = ref::softmax_cross_entropy(v[0], v[1], s.weight ? &v[2] : nullptr,
                                                                                s.reduction, s.ignore);
                                          out.resize(outputs);
                                          return out;
                                      }}));
        c.push_back(accumulating({"NegativeLogLikelihoodLoss", label, inputs, node("NegativeLogLikelihoodLoss", attrs),
                                  [=](const auto& v, DType) {
                                      return std::vector{ref::nll_loss(v[0], v[1], s.weight ? &v[2] : nullptr, s.reduction, s.ignore)};
                                  }}));
    }
}

void add_conv_transpose(std::vector<Case>& c) {
    struct Spec { Shape x, w; ref::TransposedWindow win; bool bias; std::optional<Dims> output_shape; };
    const std::vector<Spec> specs{
        {{1, 2, 4, 5}, {2, 3, 3, 3}, {{2, 2}, {1, 1}, {1, 0, 0, 1}, {1, 0}, 1}, true, std::nullopt},
        {{2, 4, 3, 3}, {4, 2, 2, 2}, {{1, 1}, {2, 1}, {0, 0, 0, 0}, {0, 0}, 2}, false, std::nullopt},
        {{1, 3, 7}, {3, 2, 4}, {{3}, {1}, {0, 0}, {0}, 1}, true, std::nullopt},
        {{1, 2, 3, 3, 2}, {2, 1, 2, 2, 2}, {{1, 2, 1}, {1, 1, 1}, {0, 1, 0, 0, 0, 0}, {0, 0, 0}, 1}, false, std::nullopt},
        // output_shape 8 of a full extent 9: one padding row, at the start
        {{1, 1, 4, 4}, {1, 2, 3, 3}, {{2, 2}, {1, 1}, {1, 1, 0, 0}, {0, 0}, 1}, true, Dims{8, 8}},
    };
    for (const Spec& s : specs) {
        infer::Attributes attrs{{"strides", s.win.strides}, {"dilations", s.win.dilations}, {"group", s.win.group}};
        if (s.output_shape) {
            attrs.set("output_shape", *s.output_shape);
        } else {
            attrs.set("pads", s.win.pads);
            attrs.set("output_padding", s.win.output_padding);
        }
        std::vector<InputSpec> inputs{x("X", s.x), x("W", s.w)};
        if (s.bias) inputs.push_back(x("B", {s.w[1] * s.win.group}));
        c.push_back(accumulating({"ConvTranspose", s.x.to_string() + " " + s.w.to_string() + " group " +
                                                       std::to_string(s.win.group) + (s.output_shape ? " output_shape" : ""),
                                  inputs, node("ConvTranspose", attrs), [s](const auto& v, DType) {
                                      return std::vector{ref::conv_transpose(v[0], v[1], s.bias ? &v[2] : nullptr, s.win)};
                                  }}));
    }
}

void add_channel_norms(std::vector<Case>& c) {
    for (const auto& [in, eps] : {std::pair<Shape, float>{{2, 3, 4, 5}, 1e-5f}, {{1, 5, 17}, 1e-2f}})
        c.push_back(accumulating({"InstanceNormalization", in.to_string(), {x("X", in), x("S", {in[1]}), x("B", {in[1]})},
                                  node("InstanceNormalization", {{"epsilon", eps}}), [eps](const auto& v, DType) {
                                      return std::vector{ref::instance_norm(v[0], v[1], v[2], eps)};
                                  }}));
    struct LrnSpec { Shape in; int64_t size; float alpha, beta, bias; };
    for (const auto& s : std::vector<LrnSpec>{{{2, 5, 3, 3}, 3, 1e-4f, 0.75f, 1.0f}, {{1, 8, 7}, 4, 0.3f, 0.5f, 2.0f}})
        c.push_back({"LRN", s.in.to_string() + " size " + std::to_string(s.size), {x("X", s.in)},
                     node("LRN", {{"size", s.size}, {"alpha", s.alpha}, {"beta", s.beta}, {"bias", s.bias}}),
                     [s](const auto& v, DType) { return std::vector{ref::lrn(v[0], s.size, s.alpha, s.beta, s.bias)}; }});
    for (const auto& [in, axes] : {std::pair<Shape, Dims>{{3, 4, 2, 3}, {0, 2, 3}}, {{2, 5, 6}, {0, -1}}}) {
        infer::Attributes attrs;
        if (axes != Dims{0, 2, 3}) attrs.set("axes", axes);
        c.push_back(accumulating({"MeanVarianceNormalization", in.to_string() + " axes " + Shape(axes).to_string(),
                                  {x("X", in)}, node("MeanVarianceNormalization", attrs),
                                  [axes](const auto& v, DType) { return std::vector{ref::mean_variance_norm(v[0], axes)}; }}));
    }
    for (const Shape& in : {Shape{2, 3, 5, 5}, Shape{1, 4, 7}})
        c.push_back({"GlobalMaxPool", in.to_string(), {x("X", in)}, node("GlobalMaxPool"),
                     [](const auto& v, DType) { return std::vector{ref::global_max_pool(v[0])}; }});
}

void add_quantize(std::vector<Case>& c) {
    // QuantizeLinear: per tensor to u8, per axis to i8.
    c.push_back({"QuantizeLinear", "[2,3,4] per tensor u8", {x("X", {2, 3, 4}, 3.0), positive("S", {}, 0.02), integers("Z", {}, 0, 255, DType::u8)},
                 node("QuantizeLinear"), [](const auto& v, DType) { return std::vector{ref::quantize(v[0], v[1], v[2], 1, 0, 255)}; }});
    c.push_back({"QuantizeLinear", "[2,3,4] axis -2 i8", {x("X", {2, 3, 4}, 3.0), positive("S", {3}, 0.02), integers("Z", {3}, -20, 20, DType::i8)},
                 node("QuantizeLinear", {{"axis", int64_t{-2}}}),
                 [](const auto& v, DType) { return std::vector{ref::quantize(v[0], v[1], v[2], -2, -128, 127)}; }});
    // Runs of 32 and more: the AVX2 path's 32-element steps and their tails, saturating both ways.
    c.push_back({"QuantizeLinear", "[3,70] per tensor u8", {x("X", {3, 70}, 4.0), positive("S", {}, 0.02), integers("Z", {}, 0, 255, DType::u8)},
                 node("QuantizeLinear"), [](const auto& v, DType) { return std::vector{ref::quantize(v[0], v[1], v[2], 1, 0, 255)}; }});
    c.push_back({"QuantizeLinear", "[3,70] per tensor i8", {x("X", {3, 70}, 4.0), positive("S", {}, 0.02), integers("Z", {}, -20, 20, DType::i8)},
                 node("QuantizeLinear"), [](const auto& v, DType) { return std::vector{ref::quantize(v[0], v[1], v[2], 1, -128, 127)}; }});
    c.push_back({"QuantizeLinear", "[2,3,40] axis 1 i8", {x("X", {2, 3, 40}, 3.0), positive("S", {3}, 0.02), integers("Z", {3}, -20, 20, DType::i8)},
                 node("QuantizeLinear", {{"axis", int64_t{1}}}),
                 [](const auto& v, DType) { return std::vector{ref::quantize(v[0], v[1], v[2], 1, -128, 127)}; }});
    c.push_back({"DequantizeLinear", "[4,5] u8 per tensor", {integers("X", {4, 5}, 0, 255, DType::u8), positive("S", {}), integers("Z", {}, 0, 255, DType::u8)},
                 node("DequantizeLinear"), [](const auto& v, DType) { return std::vector{ref::dequantize(v[0], v[1], v[2], 1)}; }});
    c.push_back({"DequantizeLinear", "[2,3,4] i8 axis 1", {integers("X", {2, 3, 4}, -128, 127, DType::i8), positive("S", {3}), integers("Z", {3}, -9, 9, DType::i8)},
                 node("DequantizeLinear"), [](const auto& v, DType) { return std::vector{ref::dequantize(v[0], v[1], v[2], 1)}; }});
    c.push_back({"DequantizeLinear", "[7] i32 no zero point", {integers("X", {7}, -1000, 1000, DType::i32), positive("S", {})},
                 node("DequantizeLinear"), [](const auto& v, DType) {
                     return std::vector{ref::dequantize(v[0], v[1], {Shape{}, {0.0}}, 1)};
                 }});
    // [3,70]: AVX2 steps of 32 and their tails; [2,40000]: the range taken in two chunks.
    for (const Shape& in : {Shape{3, 4}, Shape{17}, Shape{3, 70}, Shape{2, 40000}}) {
        Case dq{"DynamicQuantizeLinear", in.to_string(), {x("X", in, 2.0)}, node("DynamicQuantizeLinear", {}, {}, 3),
                [](const auto& v, DType) { return ref::dynamic_quantize(v[0]); }};
        dq.dtypes = {DType::f32};
        c.push_back(dq);
    }
}

void add_integer_products(std::vector<Case>& c) {
    const std::vector<DType> u8{DType::u8};
    auto zero_of = [](const RefTensor& t) { return t.data[0]; };
    struct MatSpec { Shape a, b; DType type; int64_t lo, hi; };
    for (const auto& s : std::vector<MatSpec>{{{4, 3}, {3, 5}, DType::u8, 0, 255}, {{2, 3, 4}, {4, 2}, DType::i8, -128, 127}}) {
        Case mi{"MatMulInteger", s.a.to_string() + " " + s.b.to_string() + " " + std::string(infer::dtype_name(s.type)),
                {integers("A", s.a, s.lo, s.hi, s.type), integers("B", s.b, s.lo, s.hi, s.type),
                 integers("AZ", {}, s.lo / 2, s.hi / 2, s.type), integers("BZ", {1}, s.lo / 2, s.hi / 2, s.type)},
                node("MatMulInteger"), [=](const auto& v, DType) {
                    return std::vector{ref::matmul_integer(v[0], v[1], zero_of(v[2]), zero_of(v[3]))};
                }};
        mi.dtypes = {s.type};
        c.push_back(mi);
    }
    // MatMulIntegerToFloat: the QDQ product's integer sums, times a scale per tensor or per
    // column, plus the bias; k and n past the packed kernel's panels, and a 3-D A.
    struct ToFloatSpec { Shape a; int64_t n; DType a_type, b_type; bool per_column, bias; };
    for (const auto& s : std::vector<ToFloatSpec>{{{4, 3}, 5, DType::u8, DType::u8, false, false},
                                                  {{2, 3, 70}, 40, DType::u8, DType::i8, true, true},
                                                  {{5, 33}, 17, DType::i8, DType::i8, true, true}}) {
        const int64_t k = s.a[s.a.rank() - 1];
        const auto lo = [](DType t) { return t == DType::u8 ? 0 : -128; };
        const auto hi = [](DType t) { return t == DType::u8 ? 255 : 127; };
        const Shape columns = s.per_column ? Shape{s.n} : Shape(std::vector<int64_t>{});
        std::vector<InputSpec> inputs{integers("A", s.a, lo(s.a_type), hi(s.a_type), s.a_type),
                                      integers("B", {k, s.n}, lo(s.b_type), hi(s.b_type), s.b_type),
                                      typed(positive("S", columns, 0.01), DType::f32),
                                      integers("AZ", {}, lo(s.a_type) / 2, hi(s.a_type) / 2, s.a_type),
                                      integers("BZ", columns, lo(s.b_type) / 2, hi(s.b_type) / 2, s.b_type)};
        if (s.bias) inputs.push_back(typed(x("Bias", {s.n}), DType::f32));
        Case tf{"MatMulIntegerToFloat",
                s.a.to_string() + " n " + std::to_string(s.n) + " " + std::string(infer::dtype_name(s.a_type)) + " by " +
                    std::string(infer::dtype_name(s.b_type)) + (s.per_column ? " per column" : " per tensor") +
                    (s.bias ? " bias" : ""),
                inputs, node("MatMulIntegerToFloat"), [=](const auto& v, DType) {
                    const int64_t n = s.n;
                    RefTensor b = v[1];  // less B's zero point, per column or per tensor
                    for (size_t i = 0; i < b.data.size(); ++i) b.data[i] -= v[4].data[s.per_column ? i % static_cast<size_t>(n) : 0];
                    RefTensor y = ref::matmul_integer(v[0], b, zero_of(v[3]), 0.0);
                    for (size_t i = 0; i < y.data.size(); ++i) {
                        const size_t column = i % static_cast<size_t>(n);
                        y.data[i] = y.data[i] * v[2].data[s.per_column ? column : 0] + (s.bias ? v[5].data[column] : 0.0);
                    }
                    return std::vector{y};
                }};
        tf.dtypes = {s.a_type};
        c.push_back(tf);
    }
    // Two activations (attention's products in a QDQ file): batched, B broadcast along one axis,
    // per-tensor scale and zero points, and Y's 8-bit grid before the bias.
    {
        Case tf{"MatMulIntegerToFloat", "[2,3,5,40] by [1,3,40,20] u8 per tensor bias y grid",
                {integers("A", {2, 3, 5, 40}, 0, 255, DType::u8), integers("B", {1, 3, 40, 20}, 0, 255, DType::u8),
                 typed(positive("S", {}, 1e-4), DType::f32), integers("AZ", {}, 100, 150, DType::u8),
                 integers("BZ", {}, 100, 150, DType::u8), typed(x("Bias", {20}), DType::f32),
                 typed(positive("YS", {}, 0.05), DType::f32), integers("YZ", {}, 100, 150, DType::u8)},
                node("MatMulIntegerToFloat"), [=](const auto& v, DType) {
                    RefTensor y = ref::matmul_integer(v[0], v[1], zero_of(v[3]), zero_of(v[4]));
                    const double ys = v[6].data[0], yz = v[7].data[0];
                    for (size_t i = 0; i < y.data.size(); ++i) {
                        // The grid's rounding decided in f32 as the kernel (and QuantizeLinear)
                        // decide it, so that a product near a half step rounds the same way.
                        const float scaled = static_cast<float>(y.data[i]) * static_cast<float>(v[2].data[0]);
                        const double q = std::clamp(std::rint(scaled / static_cast<float>(ys)) + yz, 0.0, 255.0);
                        y.data[i] = (q - yz) * ys + v[5].data[i % 20];
                    }
                    return std::vector{y};
                }};
        tf.dtypes = u8;
        c.push_back(tf);
    }
    for (const auto& [a, b] : {std::pair<Shape, Shape>{{2, 4}, {4, 3}}, {{2, 2, 5}, {2, 5, 3}}}) {
        Case q{"QLinearMatMul", a.to_string() + " " + b.to_string(),
               {integers("A", a, 0, 255, DType::u8), typed(positive("AS", {}, 0.05), DType::f32), integers("AZ", {}, 100, 150, DType::u8),
                integers("B", b, 0, 255, DType::u8), typed(positive("BS", {}, 0.05), DType::f32), integers("BZ", {}, 100, 150, DType::u8),
                typed(positive("YS", {}, 2.0), DType::f32), integers("YZ", {}, 100, 150, DType::u8)},
               node("QLinearMatMul"), [=](const auto& v, DType) {
                   const RefTensor acc = ref::matmul_integer(v[0], v[3], zero_of(v[2]), zero_of(v[5]));
                   return std::vector{ref::requantize(acc, {v[1].data[0] * v[4].data[0] / v[6].data[0]}, zero_of(v[7]), 0, 255)};
               }};
        q.dtypes = u8;
        c.push_back(q);
    }
    for (const auto& [pads, strides] : {std::pair<Dims, Dims>{{0, 0, 0, 0}, {1, 1}}, {{1, 0, 1, 1}, {2, 1}}}) {
        Case ci{"ConvInteger", "[1,2,5,6] [3,2,2,3] pads " + Shape(pads).to_string() + " strides " + Shape(strides).to_string(),
                {integers("X", {1, 2, 5, 6}, 0, 255, DType::u8), integers("W", {3, 2, 2, 3}, 0, 255, DType::u8),
                 integers("XZ", {}, 0, 255, DType::u8), integers("WZ", {3}, 0, 255, DType::u8)},
                node("ConvInteger", {{"pads", pads}, {"strides", strides}}), [=](const auto& v, DType) {
                    return std::vector{ref::conv_integer(v[0], v[1], zero_of(v[2]), v[3], pads, strides)};
                }};
        ci.dtypes = u8;
        c.push_back(ci);
        Case cf{"ConvIntegerToFloat", "[1,2,5,6] [3,2,2,3] per channel bias y grid pads " + Shape(pads).to_string() + " strides " +
                                          Shape(strides).to_string(),
                {integers("X", {1, 2, 5, 6}, 0, 255, DType::u8), integers("W", {3, 2, 2, 3}, 0, 255, DType::u8),
                 typed(positive("S", {3}, 1e-3), DType::f32), integers("XZ", {}, 100, 150, DType::u8),
                 integers("WZ", {3}, 100, 150, DType::u8), typed(x("Bias", {3}), DType::f32),
                 typed(positive("YS", {}, 0.05), DType::f32), integers("YZ", {}, 100, 150, DType::u8)},
                node("ConvIntegerToFloat", {{"pads", pads}, {"strides", strides}}), [=](const auto& v, DType) {
                    RefTensor y = ref::conv_integer(v[0], v[1], zero_of(v[3]), v[4], pads, strides);
                    const size_t positions = y.data.size() / 3;
                    for (size_t i = 0; i < y.data.size(); ++i) {
                        const size_t channel = i / positions % 3;
                        // The grid's rounding decided in f32, as the kernel decides it.
                        const float value = static_cast<float>(y.data[i]) * static_cast<float>(v[2].data[channel]) +
                                            static_cast<float>(v[5].data[channel]);
                        const double q = std::clamp(std::rint(value / static_cast<float>(v[6].data[0])) + v[7].data[0], 0.0, 255.0);
                        y.data[i] = (q - v[7].data[0]) * v[6].data[0];
                    }
                    return std::vector{y};
                }};
        cf.dtypes = u8;
        c.push_back(cf);
        Case qc{"QLinearConv", "[1,2,5,6] [3,2,2,3] bias pads " + Shape(pads).to_string() + " strides " + Shape(strides).to_string(),
                {integers("X", {1, 2, 5, 6}, 0, 255, DType::u8), typed(positive("XS", {}, 0.05), DType::f32), integers("XZ", {}, 100, 150, DType::u8),
                 integers("W", {3, 2, 2, 3}, 0, 255, DType::u8), typed(positive("WS", {3}, 0.05), DType::f32), integers("WZ", {3}, 100, 150, DType::u8),
                 typed(positive("YS", {}, 2.0), DType::f32), integers("YZ", {}, 100, 150, DType::u8), integers("B", {3}, -500, 500, DType::i32)},
                node("QLinearConv", {{"pads", pads}, {"strides", strides}}), [=](const auto& v, DType) {
                    RefTensor acc = ref::conv_integer(v[0], v[3], zero_of(v[2]), v[5], pads, strides);
                    for (int64_t i = 0; i < ref::numel(acc.shape); ++i) acc.data[i] += v[8].data[ref::unravel(i, acc.shape)[1]];
                    std::vector<double> multiplier;
                    for (double ws : v[4].data) multiplier.push_back(v[1].data[0] * ws / v[6].data[0]);
                    return std::vector{ref::requantize(acc, multiplier, zero_of(v[7]), 0, 255)};
                }};
        qc.dtypes = u8;
        c.push_back(qc);
    }
}

void add_windows(std::vector<Case>& c) {
    for (const auto& [op, kind] : {std::pair<const char*, ref::WindowKind>{"HannWindow", ref::WindowKind::hann},
                                   {"HammingWindow", ref::WindowKind::hamming},
                                   {"BlackmanWindow", ref::WindowKind::blackman}})
        for (const auto& [size, periodic] : {std::pair<int64_t, bool>{10, true}, {7, false}}) {
            // The size is a graph input: its value shapes the output at plan time.
            BuildFn build = [op = std::string(op), periodic = periodic](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType type) {
                return b.op(op, in, {{"periodic", int64_t{periodic}}, {"output_datatype", onnx_type(type)}}, 1);
            };
            c.push_back({op, "size " + std::to_string(size) + (periodic ? " periodic" : " symmetric"),
                         {integers("N", {}, size, size, DType::i32)}, build,
                         [kind = kind, size = size, periodic = periodic](const auto&, DType) {
                             return std::vector{ref::window(kind, size, periodic)};
                         }});
        }
}

void add_roi_align(std::vector<Case>& c) {
    // Boxes in input coordinates (values exact in bf16); the third reaches past the map's edge,
    // the last is thinner than a pixel. Both images are used.
    const std::vector<std::array<double, 4>> boxes{{1, 1, 9, 7}, {0, 2.5, 4, 6}, {6, 4, 15, 12}, {2, 3, 2.5, 3.5}};
    const std::vector<int64_t> images{0, 1, 1, 0};
    struct Spec {
        std::string label;
        ref::RoiAlignSpec spec;
        infer::Attributes attrs;
    };
    const std::vector<Spec> specs{
        {"avg half_pixel 3x4 ratio 2 scale 0.5", {3, 4, 2, 0.5, true, false},
         {{"output_height", int64_t{3}}, {"output_width", int64_t{4}}, {"sampling_ratio", int64_t{2}}, {"spatial_scale", 0.5f}}},
        {"avg output_half_pixel 2x2 adaptive", {2, 2, 0, 1.0, false, false},
         {{"output_height", int64_t{2}}, {"output_width", int64_t{2}}, {"coordinate_transformation_mode", std::string("output_half_pixel")}}},
        {"max half_pixel 2x3 ratio 2", {2, 3, 2, 1.0, true, true},
         {{"output_height", int64_t{2}}, {"output_width", int64_t{3}}, {"sampling_ratio", int64_t{2}}, {"mode", std::string("max")}}},
    };
    for (const Spec& s : specs) {
        BuildFn build = [boxes, images, attrs = s.attrs](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType type) {
            std::vector<float> flat;
            for (const auto& box : boxes) flat.insert(flat.end(), box.begin(), box.end());
            const infer::Value rois = b.cast(b.constant(infer::Tensor::from_vector(flat, Shape{static_cast<int64_t>(boxes.size()), 4})), type);
            return std::vector{b.op1("RoiAlign", {in[0], rois, b.constant_i64(images)}, attrs)};
        };
        Case roi{"RoiAlign", s.label, {x("X", {2, 3, 10, 12})}, build, [boxes, images, spec = s.spec](const auto& in, DType) {
                     return std::vector{ref::roi_align(in[0], boxes, images, spec)};
                 }};
        c.push_back(roi);
    }
}

void add_spectral(std::vector<Case>& c) {
    struct DftSpec {
        std::string label;
        Shape x;
        int64_t axis;
        std::optional<int64_t> length;
        bool inverse, onesided;
    };
    for (const DftSpec& s : std::vector<DftSpec>{{"real [2,8,3,1] axis 1", {2, 8, 3, 1}, 1, std::nullopt, false, false},
                                                 {"complex [2,3,6,2] axis 2 cut to 4", {2, 3, 6, 2}, 2, 4, false, false},
                                                 {"real one-sided [3,10,1] padded to 12", {3, 10, 1}, 1, 12, false, true},
                                                 {"inverse complex [2,5,2]", {2, 5, 2}, 1, std::nullopt, true, false},
                                                 {"inverse one-sided [2,5,2] to 8 real", {2, 5, 2}, 1, std::nullopt, true, true},
                                                 {"inverse one-sided [2,4,3,2] axis -3 to 7", {2, 4, 3, 2}, -3, 7, true, true}}) {
        infer::Attributes attrs{{"axis", s.axis}, {"inverse", int64_t{s.inverse}}, {"onesided", int64_t{s.onesided}}};
        BuildFn build = [attrs, length = s.length](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType) {
            std::vector<infer::Value> inputs{in[0]};
            if (length) inputs.push_back(b.constant_i64({*length}));
            return std::vector{b.op1("DFT", inputs, attrs)};
        };
        const int64_t axis = s.axis < 0 ? s.axis + static_cast<int64_t>(s.x.rank()) : s.axis;
        c.push_back(accumulating({"DFT", s.label, {x("X", s.x)}, build, [s, axis](const auto& in, DType) {
                                      return std::vector{ref::dft(in[0], axis, s.length, s.inverse, s.onesided)};
                                  }}));
    }
    // STFT: a real signal with a window input, and a complex one with frame_length alone, two-sided.
    BuildFn windowed = [](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType) {
        return std::vector{b.op1("STFT", {in[0], b.constant_i64({8}), in[1]})};
    };
    c.push_back(accumulating({"STFT", "real [2,40,1] step 8 window 16", {x("S", {2, 40, 1}), x("W", {16})}, windowed,
                              [](const auto& in, DType) { return std::vector{ref::stft(in[0], 8, &in[1], 16, true)}; }}));
    BuildFn framed = [](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType) {
        return std::vector{b.op1("STFT", {in[0], b.constant_i64({5}), infer::Value{}, b.constant_i64({10})}, {{"onesided", int64_t{0}}})};
    };
    c.push_back(accumulating({"STFT", "complex [1,33,2] step 5 frame 10 two-sided", {x("S", {1, 33, 2})}, framed,
                              [](const auto& in, DType) { return std::vector{ref::stft(in[0], 5, nullptr, 10, false)}; }}));
    // MelWeightMatrix: num_mel_bins a graph input, the rest constants; the dtype is the output's.
    for (const auto& [rate, upper] : {std::pair<int64_t, float>{16000, 8000.0f}, {8000, 3000.0f}}) {
        BuildFn build = [rate = rate, upper = upper](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType type) {
            const auto f32 = [&](float v) { return b.constant(infer::Tensor::from_vector(std::vector<float>{v}, Shape{})); };
            return std::vector{b.op1("MelWeightMatrix", {in[0], b.constant_i64({64}), b.constant_i64({rate}), f32(20.0f), f32(upper)},
                                     {{"output_datatype", onnx_type(type)}})};
        };
        Case mel{"MelWeightMatrix", "8 bins of 64, rate " + std::to_string(rate), {integers("N", {}, 8, 8)}, build,
                 [rate = rate, upper = upper](const auto&, DType) {
                     return std::vector{ref::mel_weight_matrix(8, 64, rate, 20.0, upper)};
                 }};
        mel.dtypes = {DType::f32, DType::f64};
        c.push_back(mel);
    }
}

void add_recurrent(std::vector<Case>& c) {
    struct Spec {
        std::string op;
        ref::RecurrentSpec spec;
        int64_t seq, batch, input, hidden;
        bool bias, lengths, initial, peepholes;
    };
    const std::vector<Spec> specs{
        {"RNN", {1}, 3, 2, 4, 5, true, false, false, false},
        {"RNN", {1, "bidirectional"}, 4, 3, 3, 2, true, true, true, false},
        {"GRU", {3}, 2, 3, 2, 5, false, false, false, false},
        {"GRU", {3, "bidirectional", true}, 3, 2, 3, 4, true, false, true, false},
        {"GRU", {3, "reverse", false, 0.9}, 4, 2, 3, 3, true, true, false, false},
        {"LSTM", {4}, 3, 2, 3, 4, true, false, false, false},
        {"LSTM", {4, "forward"}, 4, 3, 2, 3, true, true, true, true},
        {"LSTM", {4, "bidirectional"}, 3, 2, 4, 3, true, false, true, true},
    };
    for (const Spec& s : specs) {
        const int64_t dirs = s.spec.direction == "bidirectional" ? 2 : 1, gh = s.spec.gates * s.hidden;
        std::vector<InputSpec> inputs{x("X", {s.seq, s.batch, s.input}), x("W", {dirs, gh, s.input}, 0.3),
                                      x("R", {dirs, gh, s.hidden}, 0.3)};
        std::vector<Operand> operands{arg(0), arg(1), arg(2)};
        int next = 3;
        auto optional = [&](bool present, InputSpec spec) {
            if (!present) return operands.push_back(absent());
            inputs.push_back(std::move(spec));
            operands.push_back(arg(next++));
        };
        optional(s.bias, x("B", {dirs, 2 * gh}, 0.3));
        optional(s.lengths, integers("L", {s.batch}, 1, s.seq, DType::i32));
        optional(s.initial, x("H0", {dirs, s.batch, s.hidden}));
        if (s.op == "LSTM") {
            optional(s.initial, x("C0", {dirs, s.batch, s.hidden}));
            optional(s.peepholes, x("P", {dirs, 3 * s.hidden}, 0.3));
        }
        while (operands.back().kind == Operand::absent) operands.pop_back();
        infer::Attributes attrs{{"hidden_size", s.hidden}, {"direction", s.spec.direction}};
        if (s.spec.linear_before_reset) attrs.set("linear_before_reset", int64_t{1});
        if (s.spec.clip) attrs.set("clip", static_cast<float>(*s.spec.clip));
        const size_t outputs = s.op == "LSTM" ? 3 : 2;
        // The first input's first axis is the sequence: the dynamic-shape run varies it too.
        c.push_back(accumulating(
            {s.op, "X " + Shape{s.seq, s.batch, s.input}.to_string() + " hidden " + std::to_string(s.hidden) + " " + s.spec.direction +
                       (s.bias ? " B" : "") + (s.lengths ? " lengths" : "") + (s.initial ? " initial" : "") +
                       (s.peepholes ? " peepholes" : "") + (s.spec.linear_before_reset ? " linear_before_reset" : "") +
                       (s.spec.clip ? " clip" : ""),
             inputs, node(s.op, attrs, operands, outputs), [s](const auto& v, DType) {
                 size_t i = 3;
                 auto next = [&](bool present) { return present ? &v[i++] : nullptr; };
                 const RefTensor* b = next(s.bias);
                 const RefTensor* lengths = next(s.lengths);
                 const RefTensor* h0 = next(s.initial);
                 const RefTensor* c0 = s.op == "LSTM" ? next(s.initial) : nullptr;
                 const RefTensor* p = s.op == "LSTM" ? next(s.peepholes) : nullptr;
                 return ref::recurrent(s.spec, v[0], v[1], v[2], b, lengths, h0, c0, p);
             }}));
    }
}

// The training optimizers over two tensors ([3] and [2,2]) at step T, from the ONNX reference's
// formulas in double. State tensors that feed a square root are positive.
void add_optimizers(std::vector<Case>& c) {
    struct Spec { std::string op, label; infer::Attributes attrs; size_t state; };
    const std::vector<Spec> specs{
        {"Adagrad", "decay 0.1 eps 1e-5 norm 1e-3", {{"decay_factor", 0.1f}, {"epsilon", 1e-5f}, {"norm_coefficient", 1e-3f}}, 1},
        {"Momentum", "standard", {{"alpha", 0.95f}, {"beta", 0.1f}, {"mode", std::string("standard")}, {"norm_coefficient", 1e-3f}}, 1},
        {"Momentum", "nesterov", {{"alpha", 0.9f}, {"beta", 1.0f}, {"mode", std::string("nesterov")}, {"norm_coefficient", 1e-2f}}, 1},
        {"Adam", "defaults", {}, 2},
        {"Adam", "alpha 0.95 beta 0.85 norm_post 0.1", {{"alpha", 0.95f}, {"beta", 0.85f}, {"norm_coefficient_post", 0.1f}}, 2}};
    for (const Spec& spec : specs)
        for (int64_t step : {0, 3}) {
            std::vector<InputSpec> inputs{x("X1", {3}), x("X2", {2, 2}), x("G1", {3}), x("G2", {2, 2})};
            for (size_t s = 0; s < spec.state; ++s) {
                const std::string role = s == 0 && spec.op != "Adagrad" ? "V" : "H";
                inputs.push_back(role == "H" ? positive(role + "1", {3}) : x(role + "1", {3}));
                inputs.push_back(role == "H" ? positive(role + "2", {2, 2}) : x(role + "2", {2, 2}));
            }
            Case opt{spec.op, spec.label + " T " + std::to_string(step), inputs,
                     [spec, step](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType dt) {
                         const Shape scalar(std::vector<int64_t>{});
                         const infer::Tensor r = dt == DType::f64 ? infer::Tensor::from_vector(std::vector<double>{0.1}, scalar)
                                                                  : infer::Tensor::from_vector(std::vector<float>{0.1f}, scalar);
                         std::vector<infer::Value> operands{b.constant(r),
                                                            b.constant(infer::Tensor::from_vector(std::vector<int64_t>{step}, scalar))};
                         operands.insert(operands.end(), in.begin(), in.end());
                         return b.op(spec.op, operands, spec.attrs, 2 * (1 + spec.state));
                     },
                     [spec, step](const auto& v, DType) {
                         return ref::optimizer_step(spec.op, spec.attrs, 0.1, step, v);
                     }};
            opt.dtypes = {DType::f32, DType::f64};
            c.push_back(opt);
        }
}

}  // namespace

std::vector<Case> neural_cases() {
    std::vector<Case> c;
    add_losses(c);
    add_optimizers(c);
    add_conv_transpose(c);
    add_channel_norms(c);
    add_quantize(c);
    add_integer_products(c);
    add_windows(c);
    add_roi_align(c);
    add_spectral(c);
    add_recurrent(c);
    return c;
}

}  // namespace ops
