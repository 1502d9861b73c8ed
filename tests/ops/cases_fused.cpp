// Cases for the fused family: each against the chain of ONNX ops it stands for.
#include "op_case.hpp"
#include "reference_neural.hpp"

#include <algorithm>
#include <cmath>

namespace ops {

namespace {

// FusedConv's and ChannelsLastConv's shared parts: group and activation attributes (Clip as
// ReLU6), operands X, W, B (or absent), Z; and the reference's epilogue on the convolution y
// (inputs v: X, W, then B and Z where present).
void set_conv_epilogue(infer::Attributes& attrs, int64_t group, const std::string& activation) {
    if (group != 1) attrs.set("group", group);
    if (!activation.empty()) attrs.set("activation", activation);
    if (activation == "Clip") {
        attrs.set("clip_min", 0.0f);
        attrs.set("clip_max", 6.0f);
    }
}

std::vector<Operand> conv_operands(bool bias, bool residual) {
    std::vector<Operand> operands{arg(0), arg(1), bias ? arg(2) : absent()};
    if (residual) operands.push_back(arg(bias ? 3 : 2));
    return operands;
}

template <class Values>
RefTensor conv_epilogue(RefTensor y, const Values& v, bool bias, bool residual, const std::string& activation) {
    if (residual) y = ref::binary(y, v[bias ? 3 : 2], [](double a, double b) { return a + b; });
    if (activation == "Relu") y = ref::unary(y, [](double t) { return t > 0 ? t : 0.0; });
    if (activation == "Clip") y = ref::unary(y, [](double t) { return std::clamp(t, 0.0, 6.0); });
    if (activation == "HardSwish") y = ref::unary(y, [](double t) { return t * std::clamp(t / 6.0 + 0.5, 0.0, 1.0); });
    return y;
}

// The channel-last forms (passes/channels_last.cpp): X and Y [N, H, W, C], each against
// its ONNX op on the channel-first reading, turned back. Constant weights take the packed int8
// kernel: a 3x3 layer with channel tails (20 in, 19 out) over two images, a 1x1 layer without
// padding (each pixel's channels are its patch), a 3-colour 7x7 stem with stride 2, an i8 X;
// symmetric i8 weights (zero points 0, as quantize_static writes them) under a u8 X, where the
// product reads the patches as they are; a weight computed at run time takes the direct loops.
// Scales keep most outputs inside Y's range.
void add_channels_last(std::vector<Case>& c) {
    struct ConvSpec { Dims x, w, pads, strides; DType type; bool constant_weight, symmetric = false; };
    for (const ConvSpec& s : {ConvSpec{{2, 5, 6, 20}, {19, 20, 3, 3}, {1, 1, 1, 1}, {1, 1}, DType::u8, true},
                              ConvSpec{{1, 4, 5, 32}, {40, 32, 1, 1}, {0, 0, 0, 0}, {1, 1}, DType::u8, true},
                              ConvSpec{{1, 15, 13, 3}, {16, 3, 7, 7}, {3, 3, 3, 3}, {2, 2}, DType::u8, true},
                              ConvSpec{{1, 6, 5, 17}, {33, 17, 3, 3}, {1, 0, 1, 1}, {2, 1}, DType::i8, true},
                              ConvSpec{{2, 7, 6, 16}, {21, 16, 3, 3}, {1, 1, 1, 1}, {1, 1}, DType::u8, true, true},
                              ConvSpec{{1, 5, 4, 24}, {18, 24, 1, 1}, {0, 0, 0, 0}, {1, 1}, DType::u8, true, true},
                              // 21 positions of 51 bytes: workspace parts past odd lengths
                              ConvSpec{{1, 7, 3, 17}, {6, 17, 3, 1}, {1, 0, 1, 0}, {1, 1}, DType::u8, true},
                              ConvSpec{{2, 5, 6, 7}, {5, 7, 2, 3}, {0, 1, 1, 0}, {1, 2}, DType::u8, false}}) {
        const bool u8 = s.type == DType::u8;
        const int64_t lo = u8 ? 0 : -128, hi = u8 ? 255 : 127, m = s.w[0];
        const auto zero = [&](const std::string& name, Shape shape) { return integers(name, shape, u8 ? 100 : -20, u8 ? 150 : 20, s.type); };
        // A model's weight, its scales and zero points are constants (the packed kernel needs them so).
        InputSpec w = s.symmetric ? integers("W", Shape(s.w), -127, 127, DType::i8) : integers("W", Shape(s.w), lo, hi, s.type),
                  w_scale = typed(positive("WS", {m}, 0.05), DType::f32),
                  w_zero = s.symmetric ? integers("WZ", {m}, 0, 0, DType::i8) : zero("WZ", {m});
        w.weight = w_scale.weight = w_zero.weight = s.constant_weight;
        Case q{"ChannelsLastQLinearConv",
               Shape(s.x).to_string() + " " + Shape(s.w).to_string() + " pads " + Shape(s.pads).to_string() + " strides " +
                   Shape(s.strides).to_string() + " " + std::string(infer::dtype_name(s.type)) +
                   (s.constant_weight ? " constant weight" : " weight input") + (s.symmetric ? " i8 symmetric" : ""),
               {integers("X", Shape(s.x), lo, hi, s.type), typed(positive("XS", {}, 0.05), DType::f32), zero("XZ", {}), w,
                w_scale, w_zero, typed(positive("YS", {}, 2.0), DType::f32),
                zero("YZ", {}), integers("B", {m}, -500, 500, DType::i32)},
               node("ChannelsLastQLinearConv", {{"pads", s.pads}, {"strides", s.strides}}), [s, lo, hi](const auto& v, DType) {
                   RefTensor acc = ref::conv_integer(ref::transpose(v[0], {0, 3, 1, 2}), v[3], v[2].data[0], v[5], s.pads, s.strides);
                   for (int64_t i = 0; i < ref::numel(acc.shape); ++i) acc.data[i] += v[8].data[ref::unravel(i, acc.shape)[1]];
                   std::vector<double> multiplier;
                   for (double ws : v[4].data) multiplier.push_back(v[1].data[0] * ws / v[6].data[0]);
                   return std::vector{ref::transpose(ref::requantize(acc, multiplier, v[7].data[0], lo, hi), {0, 2, 3, 1})};
               }};
        q.dtypes = {s.type};
        c.push_back(q);
    }
    // ChannelsLastConvIntegerToFloat (u8 X, what precision int8 runs inside a float CNN's
    // channel-last stretch): ConvIntegerToFloat on the channel-first reading, turned back. Per
    // channel scales and weight zero points, an f32 bias; constant weights on the packed kernel
    // (3x3 with channel tails, 1x1, the second with Y's grid), a weight input on the direct loops.
    struct IntegerSpec { Dims x, w, pads, strides; bool constant_weight, grid; };
    for (const IntegerSpec& s : {IntegerSpec{{2, 5, 6, 20}, {19, 20, 3, 3}, {1, 1, 1, 1}, {1, 1}, true, false},
                               IntegerSpec{{1, 4, 5, 32}, {40, 32, 1, 1}, {0, 0, 0, 0}, {1, 1}, true, true},
                               IntegerSpec{{1, 6, 5, 17}, {33, 17, 3, 3}, {1, 0, 1, 1}, {2, 1}, true, false},
                               IntegerSpec{{2, 5, 6, 7}, {5, 7, 2, 3}, {0, 1, 1, 0}, {1, 2}, false, false}}) {
        const int64_t m = s.w[0];
        InputSpec w = integers("W", Shape(s.w), 0, 255, DType::u8), scale = typed(positive("S", {m}, 1e-3), DType::f32),
                  w_zero = integers("WZ", {m}, 100, 150, DType::u8), bias = typed(x("Bias", {m}), DType::f32);
        w.weight = scale.weight = w_zero.weight = bias.weight = s.constant_weight;
        std::vector<InputSpec> inputs{integers("X", Shape(s.x), 0, 255, DType::u8), w, scale,
                                      integers("XZ", {}, 100, 150, DType::u8), w_zero, bias};
        if (s.grid) {
            inputs.push_back(typed(positive("YS", {}, 0.05), DType::f32));
            inputs.push_back(integers("YZ", {}, 100, 150, DType::u8));
        }
        Case f{"ChannelsLastConvIntegerToFloat",
               Shape(s.x).to_string() + " " + Shape(s.w).to_string() + " pads " + Shape(s.pads).to_string() + " strides " +
                   Shape(s.strides).to_string() + (s.constant_weight ? " constant weight" : " weight input") +
                   (s.grid ? " y grid" : ""),
               inputs, node("ChannelsLastConvIntegerToFloat", {{"pads", s.pads}, {"strides", s.strides}}),
               [s, m](const auto& v, DType) {
                   RefTensor y = ref::conv_integer(ref::transpose(v[0], {0, 3, 1, 2}), v[1], v[3].data[0], v[4], s.pads, s.strides);
                   const size_t positions = y.data.size() / static_cast<size_t>(y.shape[0] * m);
                   for (size_t i = 0; i < y.data.size(); ++i) {
                       const size_t channel = i / positions % static_cast<size_t>(m);
                       // In f32, as the kernel computes it (the grid's rounding decided there).
                       const float value = static_cast<float>(y.data[i]) * static_cast<float>(v[2].data[channel]) +
                                           static_cast<float>(v[5].data[channel]);
                       if (!s.grid) {
                           y.data[i] = value;
                           continue;
                       }
                       const double q = std::clamp(std::rint(value / static_cast<float>(v[6].data[0])) + v[7].data[0], 0.0, 255.0);
                       y.data[i] = (q - v[7].data[0]) * v[6].data[0];
                   }
                   return std::vector{ref::transpose(y, {0, 2, 3, 1})};
               }};
        f.dtypes = {DType::u8};
        c.push_back(f);
    }
    // ChannelsLastMaxPool over each type's whole range (padding must never win): ResNet's stem
    // pool (3x3, stride 2, pads 1) on 24 channels, and a 2x3 window without padding on 5; f32.
    struct PoolSpec { Dims x, kernel, strides, pads; DType type; };
    for (const PoolSpec& s : {PoolSpec{{2, 9, 11, 24}, {3, 3}, {2, 2}, {1, 1, 1, 1}, DType::u8},
                              PoolSpec{{1, 6, 7, 5}, {2, 3}, {1, 2}, {0, 0, 0, 0}, DType::i8},
                              PoolSpec{{2, 9, 11, 20}, {3, 3}, {2, 2}, {1, 1, 1, 1}, DType::f32}}) {
        const bool u8 = s.type == DType::u8, f32 = s.type == DType::f32;
        Case pool{"ChannelsLastMaxPool",
                  Shape(s.x).to_string() + " k" + Shape(s.kernel).to_string() + " s" + Shape(s.strides).to_string() + " p" +
                      Shape(s.pads).to_string() + " " + std::string(infer::dtype_name(s.type)),
                  {f32 ? x("X", Shape(s.x), 3.0) : integers("X", Shape(s.x), u8 ? 0 : -128, u8 ? 255 : 127, std::nullopt)},
                  node("ChannelsLastMaxPool", {{"kernel_shape", s.kernel}, {"strides", s.strides}, {"pads", s.pads}}),
                  [s](const auto& v, DType) {
                      const ref::Window window{s.kernel, s.strides, {}, s.pads};
                      return std::vector{ref::transpose(ref::max_pool(ref::transpose(v[0], {0, 3, 1, 2}), window), {0, 2, 3, 1})};
                  }};
        pool.dtypes = {s.type};
        c.push_back(pool);
        if (f32) {  // f16 and bf16 on CUDA, as for ChannelsLastConv below
            pool.dtypes = {DType::f16, DType::bf16};
            pool.cpu_optional = true;
            c.push_back(pool);
        }
    }
    // ChannelsLastConv (f32): FusedConv over X, Z, Y [N, H, W, C]. Constant weights take the
    // patches-as-rows product: a 3x3 layer with a 19-column tail, a 1x1 layer reading X's pixels
    // as rows, a 3-colour 7x7 stem with stride 2, asymmetric pads and strides, a strided 1x1
    // without padding, K in several blocks (576), a product split between threads, two groups;
    // depthwise layers (3x3 with a channel tail, 5x5 with stride 2, dilation 2, a 3x2 kernel);
    // weights computed at run time, packed per run; 3x3 layers over enough positions for
    // Winograd's F(2x2, 3x3). Every activation, with and without bias and Z.
    struct FloatSpec {
        Dims x, w, pads, strides;
        int64_t group;
        bool bias, residual;
        std::string activation;
        bool constant_weight = true;
        Dims dilations = {1, 1};
    };
    for (const FloatSpec& s : {FloatSpec{{2, 5, 6, 20}, {19, 20, 3, 3}, {1, 1, 1, 1}, {1, 1}, 1, true, true, "Relu"},
                               FloatSpec{{1, 4, 5, 32}, {40, 32, 1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false, true, ""},
                               FloatSpec{{1, 15, 13, 3}, {16, 3, 7, 7}, {3, 3, 3, 3}, {2, 2}, 1, true, false, "Clip"},
                               FloatSpec{{1, 6, 5, 17}, {33, 17, 3, 3}, {1, 0, 1, 1}, {2, 1}, 1, true, false, "HardSwish"},
                               FloatSpec{{1, 7, 7, 16}, {24, 16, 1, 1}, {0, 0, 0, 0}, {2, 2}, 1, true, true, "Relu"},
                               FloatSpec{{1, 7, 7, 64}, {72, 64, 3, 3}, {1, 1, 1, 1}, {1, 1}, 1, true, true, "Relu"},
                               FloatSpec{{1, 20, 20, 32}, {64, 32, 3, 3}, {1, 1, 1, 1}, {1, 1}, 1, true, false, "Relu"},
                               FloatSpec{{1, 5, 5, 8}, {6, 4, 3, 3}, {1, 1, 1, 1}, {1, 1}, 2, true, true, "Clip"},
                               FloatSpec{{1, 9, 19, 20}, {20, 1, 3, 3}, {1, 1, 1, 1}, {1, 1}, 20, true, true, "Clip"},
                               FloatSpec{{2, 9, 11, 32}, {32, 1, 5, 5}, {2, 2, 2, 2}, {2, 2}, 32, true, false, "Relu"},
                               FloatSpec{{1, 7, 8, 16}, {16, 1, 3, 3}, {2, 2, 2, 2}, {1, 1}, 16, false, true, "HardSwish", true, {2, 2}},
                               FloatSpec{{1, 6, 7, 16}, {16, 1, 3, 2}, {1, 0, 1, 1}, {1, 1}, 16, true, false, ""},
                               FloatSpec{{2, 5, 6, 7}, {5, 7, 2, 3}, {0, 1, 1, 0}, {1, 2}, 1, true, true, "Relu", false},
                               FloatSpec{{1, 5, 5, 16}, {16, 1, 3, 3}, {1, 1, 1, 1}, {1, 1}, 16, true, false, "Clip", false},
                               // Winograd F(2x2, 3x3) (3x3, stride 1, 48 tiles or more): output
                               // sizes that end in half tiles, channel tails (20 in, 19 out),
                               // no padding, asymmetric pads, a weight input.
                               FloatSpec{{2, 13, 11, 20}, {19, 20, 3, 3}, {1, 1, 1, 1}, {1, 1}, 1, true, true, "HardSwish"},
                               FloatSpec{{1, 15, 15, 16}, {16, 16, 3, 3}, {0, 0, 0, 0}, {1, 1}, 1, false, true, "Relu"},
                               FloatSpec{{1, 14, 16, 24}, {32, 24, 3, 3}, {0, 1, 1, 0}, {1, 1}, 1, true, false, "Clip"},
                               FloatSpec{{1, 16, 16, 16}, {24, 16, 3, 3}, {1, 1, 1, 1}, {1, 1}, 1, true, true, "", false}}) {
        const auto out = [&](size_t axis) {
            const int64_t extent = s.x[axis + 1] + s.pads[axis] + s.pads[axis + 2] - ((s.w[axis + 2] - 1) * s.dilations[axis] + 1);
            return extent / s.strides[axis] + 1;
        };
        const Dims y_shape{s.x[0], out(0), out(1), s.w[0]};
        InputSpec w = x("W", Shape(s.w));
        w.weight = s.constant_weight;
        std::vector<InputSpec> inputs{x("X", Shape(s.x)), w};
        if (s.bias) inputs.push_back(x("B", {s.w[0]}));
        if (s.residual) inputs.push_back(x("Z", Shape(y_shape)));
        infer::Attributes attrs;
        attrs.set("strides", s.strides);
        attrs.set("pads", s.pads);
        attrs.set("dilations", s.dilations);
        set_conv_epilogue(attrs, s.group, s.activation);
        const std::vector<Operand> operands = conv_operands(s.bias, s.residual);
        Case conv{"ChannelsLastConv",
                  Shape(s.x).to_string() + " W " + Shape(s.w).to_string() + " pads " + Shape(s.pads).to_string() + " strides " +
                      Shape(s.strides).to_string() + " dilations " + Shape(s.dilations).to_string() + " group " +
                      std::to_string(s.group) + (s.bias ? " bias" : "") + (s.residual ? " residual" : "") + " " + s.activation +
                      (s.constant_weight ? "" : " weight input"),
                  inputs, node("ChannelsLastConv", attrs, operands), [s](const auto& v, DType) {
                      const ref::Window window{{}, s.strides, s.dilations, s.pads};
                      RefTensor y = ref::conv(ref::transpose(v[0], {0, 3, 1, 2}), v[1], s.bias ? &v[2] : nullptr, window, s.group);
                      y = ref::transpose(y, {0, 2, 3, 1});
                      return std::vector{conv_epilogue(y, v, s.bias, s.residual, s.activation)};
                  }};
        conv.dtypes = {DType::f32};
        conv.accumulates = true;
        c.push_back(conv);
        // f16 and bf16: CUDA's kernels (the CPU's channel-last forms are f32 only).
        conv.dtypes = {DType::f16, DType::bf16};
        conv.cpu_optional = true;
        c.push_back(conv);
    }
}

}  // namespace

std::vector<Case> fused_cases() {
    std::vector<Case> c;

    // FusedMatMul: activation(A·B + bias), B a [K, N] weight.
    // `weights`: B (and the bias, unless `input_bias`) are constants, as a model's are, so the
    // CPU's own kernels (packed_float_gemm.hpp; f32 from 9 rows on) run: every tail of their
    // 6-row tiles, 16-column panels and 64-column tiles, odd K (bf16 pairs), K in more than one
    // block (256 f32, 512 bf16 values), and one product large enough to be split between threads.
    struct MatMulSpec { Shape a; int64_t n; bool bias; std::string activation; bool weights = false, input_bias = false; };
    for (const auto& s : std::vector<MatMulSpec>{{{1, 3}, 5, true, "", true},
                                                 {{9, 17}, 70, true, "Gelu", true},
                                                 {{11, 24}, 50, true, "", true},
                                                 {{2, 5, 64}, 130, false, "Relu", true},
                                                 {{13, 1}, 16, true, "", true, true},
                                                 {{1, 96}, 33, true, "GeluTanh", true},
                                                 {{3, 40, 31}, 48, true, "Relu", true},
                                                 {{64, 96}, 200, true, "Gelu", true},
                                                 {{20, 300}, 40, true, "Relu", true},  // K in two blocks (f32)
                                                 {{3, 4}, 5, true, ""},
                                                 {{2, 3, 17}, 9, true, "Gelu"},
                                                 {{2, 3, 17}, 9, true, "Relu"},
                                                 {{5, 33}, 7, false, "Gelu"},
                                                 {{1, 7, 64}, 130, true, "Gelu"},
                                                 // Few rows by a weight past the caches: the CPU's
                                                 // streamed paths (f32, and 16-bit weights).
                                                 {{2, 3, 523}, 1030, true, "Gelu"},
                                                 {{1, 523}, 1030, false, "Relu"},
                                                 // GPT-2's tanh GELU; few rows by a weight whose
                                                 // rows are whole 16-byte vectors (CUDA's skinny
                                                 // kernel, 1, 3 and 8 rows)
                                                 {{1, 1, 96}, 64, true, "GeluTanh"},
                                                 {{3, 128}, 256, true, "GeluTanh"},
                                                 {{2, 4, 200}, 72, true, "Relu"},
                                                 {{8, 64}, 40, false, ""}}) {
        const int64_t k = s.a[s.a.rank() - 1];
        std::vector<InputSpec> inputs{x("A", s.a), s.weights ? weight("B", {k, s.n}) : x("B", {k, s.n})};
        if (s.bias) inputs.push_back(s.weights && !s.input_bias ? weight("Bias", {s.n}) : x("Bias", {s.n}));
        infer::Attributes attrs;
        if (!s.activation.empty()) attrs.set("activation", s.activation);
        Case fused{"FusedMatMul", s.a.to_string() + " n " + std::to_string(s.n) + (s.bias ? " bias " : " ") + s.activation +
                                      (s.weights ? " constant weight" : ""),
                   inputs, node("FusedMatMul", attrs),
                   [s](const auto& v, DType) {
                       RefTensor y = ref::matmul(v[0], v[1]);
                       if (s.bias) y = ref::binary(y, v[2], [](double a, double b) { return a + b; });
                       if (s.activation == "Relu") y = ref::unary(y, [](double t) { return t > 0 ? t : 0.0; });
                       if (s.activation == "Gelu") y = ref::unary(y, [](double t) { return ref::gelu(t, false); });
                       if (s.activation == "GeluTanh") y = ref::unary(y, [](double t) { return ref::gelu(t, true); });
                       return std::vector{y};
                   }};
        fused.accumulates = true;
        c.push_back(fused);
    }

    // FusedConv: activation(Conv(X, W, B) + Z), Z a residual of Y's shape; Clip as ReLU6; HardSwish.
    struct ConvSpec { Shape x, w; bool bias, residual; std::string activation; int64_t group, stride, pad; };
    for (const auto& s : std::vector<ConvSpec>{{{1, 3, 7, 8}, {5, 3, 3, 3}, true, true, "Relu", 1, 1, 1},
                                               {{2, 8, 6, 6}, {16, 8, 1, 1}, false, true, "", 1, 1, 0},   // 1x1, direct
                                               {{1, 16, 10, 10}, {24, 16, 3, 3}, true, false, "Relu", 1, 2, 1},
                                               {{1, 64, 24, 24}, {8, 64, 3, 3}, true, true, "Relu", 1, 1, 1},  // chunks
                                               {{1, 8, 9, 9}, {12, 8, 1, 1}, true, false, "Clip", 1, 1, 0},
                                               {{1, 6, 7, 7}, {6, 1, 3, 3}, true, false, "Clip", 6, 2, 1},  // depthwise
                                               {{1, 4, 6, 7}, {4, 1, 3, 3}, true, true, "Relu", 4, 1, 1},  // depthwise
                                               {{3, 4, 6, 6}, {5, 4, 3, 3}, false, true, "Clip", 1, 1, 1},  // 3 images
                                               {{2, 6, 5, 5}, {6, 1, 3, 3}, false, true, "", 6, 1, 1},  // depthwise
                                               // Wide depthwise planes, finished as each vector is
                                               // stored: 19 and 17 columns (vector tails of 3 and 1).
                                               {{1, 4, 9, 19}, {4, 1, 3, 3}, true, true, "Clip", 4, 1, 1},
                                               {{2, 3, 8, 37}, {3, 1, 5, 5}, true, true, "Relu", 3, 2, 2},
                                               // Planes too wide for the interleaved scratch: a
                                               // plane at a time through a padded copy.
                                               {{1, 2, 130, 131}, {2, 1, 3, 3}, true, true, "HardSwish", 2, 1, 1},
                                               {{1, 2, 131, 133}, {2, 1, 3, 3}, true, false, "Clip", 2, 2, 1},
                                               {{1, 8, 9, 9}, {12, 8, 1, 1}, true, false, "HardSwish", 1, 1, 0},
                                               {{1, 6, 7, 7}, {6, 1, 3, 3}, true, true, "HardSwish", 6, 1, 1},
                                               {{1, 3, 7, 8}, {5, 3, 3, 3}, true, false, "HardSwish", 1, 1, 1}}) {
        const int64_t oh = (s.x[2] + 2 * s.pad - s.w[2]) / s.stride + 1, ow = (s.x[3] + 2 * s.pad - s.w[3]) / s.stride + 1;
        std::vector<InputSpec> inputs{x("X", s.x), x("W", s.w)};
        if (s.bias) inputs.push_back(x("B", {s.w[0]}));
        if (s.residual) inputs.push_back(x("Z", {s.x[0], s.w[0], oh, ow}));
        infer::Attributes attrs;
        attrs.set("strides", std::vector<int64_t>{s.stride, s.stride});
        attrs.set("pads", std::vector<int64_t>{s.pad, s.pad, s.pad, s.pad});
        set_conv_epilogue(attrs, s.group, s.activation);
        const std::vector<Operand> operands = conv_operands(s.bias, s.residual);
        Case fused{"FusedConv",
                   s.x.to_string() + " W " + s.w.to_string() + (s.bias ? " bias" : "") + (s.residual ? " residual" : "") +
                       " " + s.activation + " group " + std::to_string(s.group),
                   inputs, node("FusedConv", attrs, operands), [s](const auto& v, DType) {
                       ref::Window window;
                       window.strides = {s.stride, s.stride};
                       window.pads = {s.pad, s.pad, s.pad, s.pad};
                       RefTensor y = ref::conv(v[0], v[1], s.bias ? &v[2] : nullptr, window, s.group);
                       return std::vector{conv_epilogue(y, v, s.bias, s.residual, s.activation)};
                   }};
        fused.accumulates = true;
        c.push_back(fused);
    }

    // AddLayerNormalization: LayerNorm(X + Skip) over the last axis, and the sum.
    struct NormSpec { Shape x, skip; bool bias; size_t outputs; };
    for (const auto& s : std::vector<NormSpec>{{{2, 3, 17}, {2, 3, 17}, true, 1},
                                               {{2, 3, 17}, {2, 3, 17}, true, 2},
                                               {{4, 64}, {4, 64}, false, 2},
                                               {{2, 5, 7}, {5, 7}, true, 2},  // Skip broadcasts
                                               {{16, 768}, {16, 768}, true, 1},
                                               // Packs of 4 (CUDA): repeating Skip rows, the
                                               // longest row one warp holds, and one longer.
                                               {{2, 4, 8}, {4, 8}, true, 2},
                                               {{3, 1024}, {3, 1024}, true, 2},
                                               {{2, 1028}, {2, 1028}, false, 1}}) {
        const int64_t length = s.x[s.x.rank() - 1];
        std::vector<InputSpec> inputs{x("X", s.x), x("Skip", s.skip), x("Scale", {length})};
        if (s.bias) inputs.push_back(x("B", {length}));
        Case fused{"AddLayerNormalization",
                   s.x.to_string() + " + " + s.skip.to_string() + (s.bias ? " bias" : " no bias") + " outputs " +
                       std::to_string(s.outputs),
                   inputs, node("AddLayerNormalization", {{"epsilon", 1e-5f}}, {}, s.outputs),
                   [s](const auto& v, DType) {
                       const RefTensor sum = ref::binary(v[0], v[1], [](double a, double b) { return a + b; });
                       std::vector<RefTensor> outs{ref::layer_norm(sum, v[2], s.bias ? &v[3] : nullptr, -1, 1e-5)[0]};
                       if (s.outputs == 2) outs.push_back(sum);
                       return outs;
                   }};
        fused.accumulates = true;
        c.push_back(fused);
    }

    // AddLayerNormalization with the casts of the f16/bf16 lowering folded in: an f32 X (the
    // residual stream) beside a Skip in the low type, Y written in it (attribute y_dtype).
    for (const DType low : {DType::f16, DType::bf16})
        for (const bool low_skip : {true, false}) {
            const std::string name(infer::dtype_name(low));
            Case folded{"AddLayerNormalization",
                        std::string("f32 X") + (low_skip ? " + " + name + " Skip" : " + f32 Skip") + " to " + name + " Y",
                        {x("X", {3, 2, 72}), low_skip ? typed(x("Skip", {3, 2, 72}), low) : x("Skip", {3, 2, 72}),
                         x("Scale", {72}), x("B", {72})},
                        node("AddLayerNormalization", {{"epsilon", 1e-5f}, {"y_dtype", name}}, {}, 2),
                        [](const auto& v, DType) {
                            const RefTensor sum = ref::binary(v[0], v[1], [](double a, double b) { return a + b; });
                            return std::vector{ref::layer_norm(sum, v[2], &v[3], -1, 1e-5)[0], sum};
                        }};
            folded.dtypes = {DType::f32};
            folded.accumulates = true;
            c.push_back(folded);
        }

    // The post-norm form: Y in f32 (the residual stream) and again in the low type in place of
    // the sum (attribute low_y_dtype), Skip in either type.
    for (const DType low : {DType::f16, DType::bf16})
        for (const bool low_skip : {true, false}) {
            const std::string name(infer::dtype_name(low));
            Case narrowed{"AddLayerNormalization",
                          std::string("f32 X") + (low_skip ? " + " + name + " Skip" : " + f32 Skip") + " to f32 Y and " +
                              name + " Y",
                          {x("X", {4, 3, 40}), low_skip ? typed(x("Skip", {4, 3, 40}), low) : x("Skip", {4, 3, 40}),
                           x("Scale", {40}), x("B", {40})},
                          node("AddLayerNormalization", {{"epsilon", 1e-5f}, {"low_y_dtype", name}}, {}, 2),
                          [](const auto& v, DType) {
                              const RefTensor sum = ref::binary(v[0], v[1], [](double a, double b) { return a + b; });
                              const RefTensor y = ref::layer_norm(sum, v[2], &v[3], -1, 1e-5)[0];
                              return std::vector{y, y};
                          }};
            narrowed.dtypes = {DType::f32};
            narrowed.accumulates = true;
            c.push_back(narrowed);
        }

    // Attention: per head softmax(Q·Kᵀ·scale + bias)·V, with masks and position biases of the
    // shapes BERT ([B,1,1,Sk]), GPT-2 ([1,1,Sq,Sk]) and T5 ([1,H,Sq,Sk]) add to the scores.
    struct AttentionSpec { int64_t batch, sq, sk, heads, d; std::optional<Shape> bias; };
    for (const auto& s : std::vector<AttentionSpec>{{2, 5, 5, 2, 4, std::nullopt},
                                                    {2, 7, 7, 3, 8, Shape{2, 1, 1, 7}},
                                                    {1, 4, 6, 2, 5, Shape{1, 1, 4, 6}},
                                                    {2, 3, 3, 4, 16, Shape{1, 4, 3, 3}},
                                                    {1, 9, 9, 1, 64, Shape{9, 9}},
                                                    {5, 6, 6, 2, 8, Shape{5, 1, 1, 6}},
                                                    // Head sizes of the fused CUDA kernel, lengths
                                                    // that end inside its 64-row tiles.
                                                    {2, 70, 70, 2, 64, Shape{2, 1, 1, 70}},
                                                    {1, 33, 130, 3, 32, Shape{1, 3, 33, 130}},
                                                    {1, 65, 65, 1, 128, std::nullopt},
                                                    {2, 17, 9, 2, 96, Shape{1, 1, 17, 9}}}) {
        const int64_t e = s.heads * s.d;
        const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
        std::vector<InputSpec> inputs{x("Q", {s.batch, s.sq, e}), x("K", {s.batch, s.sk, e}), x("V", {s.batch, s.sk, e})};
        if (s.bias) inputs.push_back(x("Bias", *s.bias, 2.0));
        Case fused{"Attention",
                   "B" + std::to_string(s.batch) + " Sq" + std::to_string(s.sq) + " Sk" + std::to_string(s.sk) + " H" +
                       std::to_string(s.heads) + " D" + std::to_string(s.d) + (s.bias ? " bias " + s.bias->to_string() : ""),
                   inputs,
                   node("Attention", {{"num_heads", s.heads}, {"scale", static_cast<float>(scale)}}),
                   [s, scale](const auto& v, DType) {
                       return std::vector{ref::attention(v[0], v[1], v[2], s.bias ? &v[3] : nullptr, s.heads, scale)};
                   }};
        fused.accumulates = true;
        c.push_back(fused);
    }

    // Attention with Q, K and V packed side by side in one [B, S, 3·H·D] input (qkv_packed, as
    // passes/fuse_qkv.cpp makes it): the kernels read each head a row every 3·H·D values.
    for (const auto& s : std::vector<AttentionSpec>{{2, 5, 5, 2, 4, std::nullopt},
                                                    {3, 7, 7, 3, 8, Shape{3, 1, 1, 7}},
                                                    {2, 70, 70, 2, 64, Shape{2, 1, 1, 70}},
                                                    {1, 33, 33, 3, 32, Shape{1, 3, 33, 33}}}) {
        const int64_t e = s.heads * s.d;
        const double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
        std::vector<InputSpec> inputs{x("QKV", {s.batch, s.sq, 3 * e})};
        std::vector<Operand> operands{arg(0), absent(), absent()};
        if (s.bias) {
            inputs.push_back(x("Bias", *s.bias, 2.0));
            operands.push_back(arg(1));
        }
        Case packed{"Attention",
                    "packed QKV B" + std::to_string(s.batch) + " S" + std::to_string(s.sq) + " H" + std::to_string(s.heads) +
                        " D" + std::to_string(s.d) + (s.bias ? " bias " + s.bias->to_string() : ""),
                    inputs,
                    node("Attention", {{"num_heads", s.heads}, {"scale", static_cast<float>(scale)}, {"qkv_packed", int64_t{1}}},
                         operands),
                    [s, scale, e](const auto& v, DType) {
                        // Q, K and V: the thirds of the last axis.
                        std::vector<RefTensor> parts(3, RefTensor{Shape{s.batch, s.sq, e}, {}});
                        for (int64_t row = 0; row < s.batch * s.sq; ++row)
                            for (int part = 0; part < 3; ++part)
                                for (int64_t j = 0; j < e; ++j) parts[part].data.push_back(v[0].data[(row * 3 + part) * e + j]);
                        return std::vector{ref::attention(parts[0], parts[1], parts[2], s.bias ? &v[1] : nullptr, s.heads, scale)};
                    }};
        packed.accumulates = true;
        c.push_back(packed);
    }

    // QuantizedMatMul (precision int8): FusedMatMul with the weight quantized per column (s8)
    // and A per row (u8), against the same quantization carried out here in f32 steps, then the
    // exact integer product dequantized in f64. The weight is an input here, so this covers
    // the kernel's run-time quantization; tests/unit/test_int8.cpp covers the packed constant.
    // f16 too (cpu_optional: CUDA's int8 sessions run their activations in f16, the CPU's stay
    // f32), with one case whose weight is a constant, quantized from f16 when compiled.
    for (const auto& s : std::vector<MatMulSpec>{{{3, 4}, 5, true, ""},
                                                 {{2, 3, 70}, 33, true, "Gelu"},
                                                 {{1, 131}, 17, false, "Relu"},
                                                 {{4, 40}, 24, true, "Gelu", true}}) {
        const int64_t k = s.a[s.a.rank() - 1];
        std::vector<InputSpec> inputs{x("A", s.a), s.weights ? weight("B", {k, s.n}) : x("B", {k, s.n})};
        if (s.bias) inputs.push_back(x("Bias", {s.n}));
        infer::Attributes attrs;
        if (!s.activation.empty()) attrs.set("activation", s.activation);
        Case quantized{"QuantizedMatMul", s.a.to_string() + " n " + std::to_string(s.n) + (s.bias ? " bias " : " ") + s.activation,
                       inputs, node("QuantizedMatMul", attrs), [s, k](const auto& v, DType) {
                           RefTensor y = ref::quantized_matmul(v[0], v[1]);
                           if (s.bias) y = ref::binary(y, v[2], [](double a, double b) { return a + b; });
                           if (s.activation == "Relu") y = ref::unary(y, [](double t) { return t > 0 ? t : 0.0; });
                           if (s.activation == "Gelu") y = ref::unary(y, [](double t) { return ref::gelu(t, false); });
                       if (s.activation == "GeluTanh") y = ref::unary(y, [](double t) { return ref::gelu(t, true); });
                           return std::vector{y};
                       }};
        quantized.accumulates = true;
        if (!s.weights) {
            quantized.dtypes = {DType::f32};
            c.push_back(quantized);
        }
        quantized.dtypes = {DType::f16};
        quantized.cpu_optional = true;
        c.push_back(quantized);
    }
    // Silu: x / (1 + e^-x); [3,37] runs the AVX2 steps and a tail, with values out to ±18
    // (where e^-x is far from 1 both ways).
    for (const Shape& in : {Shape{3, 37}, Shape{1, 8}, Shape{5}})
        c.push_back({"Silu", in.to_string(), {x("X", in, 6.0)}, node("Silu"), [](const auto& v, DType) {
                         return std::vector{ref::unary(v[0], [](double t) { return t / (1.0 + std::exp(-t)); })};
                     }});
    // QuantizedAdd: two 8-bit operands dequantized, added and quantized again, each step in f32
    // as DequantizeLinear, Add and QuantizeLinear round it (the reference decides the rounding
    // the same way; y's grid is coarse enough that many sums saturate). [2,3,37] runs the
    // 16-wide steps and a tail; the broadcast forms take the per-element path; an i8 output.
    struct AddSpec { Shape a, b; DType in, out; };
    for (const AddSpec& s : {AddSpec{{2, 3, 37}, {2, 3, 37}, DType::u8, DType::u8}, AddSpec{{4, 19}, {4, 19}, DType::i8, DType::i8},
                             AddSpec{{2, 3, 5}, {3, 1}, DType::u8, DType::u8}, AddSpec{{6, 17}, {6, 17}, DType::u8, DType::i8}}) {
        const bool u8 = s.in == DType::u8;
        Case q{"QuantizedAdd", s.a.to_string() + " + " + s.b.to_string() + " " + std::string(infer::dtype_name(s.in)) + " -> " +
                                   std::string(infer::dtype_name(s.out)),
               {integers("A", s.a, u8 ? 0 : -128, u8 ? 255 : 127, s.in), typed(positive("AS", {}, 0.05), DType::f32),
                integers("AZ", {}, u8 ? 100 : -20, u8 ? 150 : 20, s.in), integers("B", s.b, u8 ? 0 : -128, u8 ? 255 : 127, s.in),
                typed(positive("BS", {}, 0.05), DType::f32), integers("BZ", {}, u8 ? 100 : -20, u8 ? 150 : 20, s.in),
                typed(positive("YS", {}, 0.08), DType::f32),
                integers("YZ", {}, s.out == DType::u8 ? 100 : -20, s.out == DType::u8 ? 150 : 20, s.out)},
               node("QuantizedAdd"), [out = s.out](const auto& v, DType) {
                   const float sa = static_cast<float>(v[1].data[0]), sb = static_cast<float>(v[4].data[0]);
                   const float sy = static_cast<float>(v[6].data[0]), zy = static_cast<float>(v[7].data[0]);
                   const float za = static_cast<float>(v[2].data[0]), zb = static_cast<float>(v[5].data[0]);
                   const double lowest = out == DType::u8 ? 0.0 : -128.0, highest = out == DType::u8 ? 255.0 : 127.0;
                   return std::vector{ref::binary(v[0], v[3], [&](double a, double b) {
                       const float sum = (static_cast<float>(a) - za) * sa + (static_cast<float>(b) - zb) * sb;
                       return std::clamp(static_cast<double>(std::rint(sum / sy) + zy), lowest, highest);
                   })};
               }};
        q.dtypes = {s.in};
        c.push_back(q);
    }
    {
        // Every odd sum a half step: scales 1 and 1 over Y's 2, zero points 0. The vector path's
        // product by 1/2 is then in doubt for half of its lanes and divides; ties go to even.
        const auto one_value = [](const std::string& name, int64_t v, DType t) { return integers(name, {}, v, v, t); };
        Case ties{"QuantizedAdd", "[2,3,37] u8 sums on half steps",
                  {integers("A", {2, 3, 37}, 0, 255, DType::u8), one_value("AS", 1, DType::f32), one_value("AZ", 0, DType::u8),
                   integers("B", {2, 3, 37}, 0, 255, DType::u8), one_value("BS", 1, DType::f32), one_value("BZ", 0, DType::u8),
                   one_value("YS", 2, DType::f32), one_value("YZ", 0, DType::u8)},
                  node("QuantizedAdd"), [](const auto& v, DType) {
                      return std::vector{ref::binary(v[0], v[3], [](double a, double b) { return std::clamp(std::nearbyint((a + b) / 2), 0.0, 255.0); })};
                  }};
        ties.dtypes = {DType::u8};
        c.push_back(ties);
    }
    add_channels_last(c);
    return c;
}

}  // namespace ops
