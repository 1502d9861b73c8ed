// Op test cases of the neural family's layers: Softmax, the normalizations, convolution and
// pooling.
#include "op_case.hpp"

namespace ops {

namespace {
std::string dims_label(const Dims& d) { return Shape(d).to_string(); }

Case accumulating(Case c) {
    c.accumulates = true;
    return c;
}

infer::Attributes window_attributes(const ref::Window& w) {
    infer::Attributes a;
    if (!w.kernel.empty()) a.set("kernel_shape", w.kernel);
    if (!w.strides.empty()) a.set("strides", w.strides);
    if (!w.dilations.empty()) a.set("dilations", w.dilations);
    if (!w.pads.empty()) a.set("pads", w.pads);
    if (w.auto_pad != "NOTSET") a.set("auto_pad", w.auto_pad);
    if (w.ceil_mode) a.set("ceil_mode", int64_t{1});
    return a;
}

std::string window_label(const ref::Window& w) {
    std::string s;
    if (!w.kernel.empty()) s += " k" + dims_label(w.kernel);
    if (!w.strides.empty()) s += " s" + dims_label(w.strides);
    if (!w.dilations.empty()) s += " d" + dims_label(w.dilations);
    if (!w.pads.empty()) s += " p" + dims_label(w.pads);
    if (w.auto_pad != "NOTSET") s += " " + w.auto_pad;
    if (w.ceil_mode) s += " ceil";
    return s;
}

}  // namespace

std::vector<Case> neural_layers_cases() {
    std::vector<Case> c;
    for (const auto& [in, axis] : {std::pair<Shape, int64_t>{{2, 3, 4}, -1}, {{2, 5, 4}, 1}, {{2, 3, 4}, 0},
                                   {{3, 33}, -1}, {{17}, 0}, {{2, 17, 3}, -2}, {{8, 1025}, -1},
                                   // rows a GPU gives one warp each: attention's, a partial
                                   // last register, the longest such
                                   {{2, 3, 128}, -1}, {{3, 300}, -1}, {{5, 1024}, -1}})
        c.push_back({"Softmax", in.to_string() + " axis " + std::to_string(axis), {x("X", in, 3.0)},
                     node("Softmax", {{"axis", axis}}),
                     [axis](const auto& v, DType) { return std::vector{ref::softmax(v[0], axis)}; }});

    c.push_back({"Softmax", "[4,33] axis -1 logits up to 60", {x("X", {4, 33}, 30.0)}, node("Softmax", {{"axis", int64_t{-1}}}),
                 [](const auto& v, DType) { return std::vector{ref::softmax(v[0], -1)}; }});
    {
        InputSpec shifted = x("X", {4, 257});
        shifted.offset = 100;  // variance as E[x^2] - E[x]^2 in f32 loses ~1e-3 here
        c.push_back(accumulating({"LayerNormalization", "[4,257] mean 100 axis -1 outputs 3",
                                  {shifted, x("Scale", {257}), x("B", {257})},
                                  node("LayerNormalization", {{"axis", int64_t{-1}}}, {}, 3), [](const auto& v, DType) {
                                      return ref::layer_norm(v[0], v[1], &v[2], -1, 1e-5);
                                  }}));
    }

    // LayerNormalization with all three outputs, scale/bias over X[axis:], with and without bias.
    struct NormSpec { Shape in; int64_t axis; Shape scale; bool bias; size_t outputs; float epsilon; };
    for (const auto& s : std::vector<NormSpec>{{{2, 3, 17}, -1, {17}, true, 3, 1e-5f},
                                               {{2, 3, 4}, -2, {3, 4}, true, 3, 1e-5f},
                                               {{4, 33}, 1, {33}, false, 1, 1e-3f},
                                               {{2, 5, 7}, 1, {7}, true, 3, 1e-5f},   // scale broadcasts over X[1:]
                                               {{3, 64}, -1, {64}, true, 1, 1e-5f},
                                               {{16, 768}, -1, {768}, true, 3, 1e-5f}}) {
        std::vector<InputSpec> inputs{x("X", s.in), x("Scale", s.scale)};
        if (s.bias) inputs.push_back(x("B", s.scale));
        c.push_back(accumulating(
            {"LayerNormalization",
             s.in.to_string() + " axis " + std::to_string(s.axis) + " scale " + s.scale.to_string() +
                 (s.bias ? " bias" : " no bias") + " outputs " + std::to_string(s.outputs),
             inputs, node("LayerNormalization", {{"axis", s.axis}, {"epsilon", s.epsilon}}, {}, s.outputs),
             [s](const auto& v, DType) {
                 auto outs = ref::layer_norm(v[0], v[1], s.bias ? &v[2] : nullptr, s.axis, s.epsilon);
                 outs.resize(s.outputs);
                 return outs;
             }}));
    }

    // RMSNormalization: rows a GPU block or an AVX2 loop takes whole and with a tail, several
    // normalized axes, a scale that broadcasts over them, and a mean far from zero.
    struct RmsSpec { Shape in; int64_t axis; Shape scale; float epsilon; double offset; };
    for (const auto& s : std::vector<RmsSpec>{{{2, 3, 17}, -1, {17}, 1e-6f, 0.0},
                                              {{2, 3, 4}, -2, {3, 4}, 1e-5f, 0.0},
                                              {{2, 5, 7}, 1, {7}, 1e-5f, 0.0},
                                              {{4, 512}, -1, {512}, 1e-6f, 0.0},
                                              {{3, 1, 300}, 2, {300}, 1e-3f, 0.0},
                                              {{2, 768}, -1, {768}, 1e-6f, 50.0}}) {
        InputSpec input = x("X", s.in);
        input.offset = s.offset;
        c.push_back(accumulating(
            {"RMSNormalization",
             s.in.to_string() + " axis " + std::to_string(s.axis) + " scale " + s.scale.to_string() +
                 (s.offset != 0 ? " mean 50" : ""),
             {input, x("Scale", s.scale)}, node("RMSNormalization", {{"axis", s.axis}, {"epsilon", s.epsilon}}),
             [s](const auto& v, DType) { return std::vector{ref::rms_norm(v[0], v[1], s.axis, s.epsilon)}; }}));
    }

    // RMSNormalization as the f16/bf16 lowering leaves it (fold_norm_casts): X and Y (y_dtype) in
    // the low type or f32, the scale in f32.
    for (const DType low : {DType::f16, DType::bf16})
        for (const bool low_x : {true, false}) {
            const std::string name(infer::dtype_name(low));
            Case folded{"RMSNormalization", (low_x ? name : std::string("f32")) + " X, f32 scale, " + name + " Y",
                        {low_x ? typed(x("X", {3, 2, 72}), low) : x("X", {3, 2, 72}), x("Scale", {72})},
                        node("RMSNormalization", {{"epsilon", 1e-6f}, {"y_dtype", name}}),
                        [](const auto& v, DType) { return std::vector{ref::rms_norm(v[0], v[1], -1, 1e-6)}; }};
            folded.dtypes = {DType::f32};
            c.push_back(accumulating(folded));
        }

    for (const Shape& in : {Shape{2, 3, 4, 5}, Shape{1, 17, 3}, Shape{4, 5}, Shape{2, 32, 17, 17}}) {
        const Shape ch{in[1]};
        c.push_back({"BatchNormalization", in.to_string(),
                     {x("X", in), x("Scale", ch), x("B", ch), x("Mean", ch), positive("Var", ch)},
                     node("BatchNormalization", {{"epsilon", 1e-5f}}),
                     [](const auto& v, DType) { return std::vector{ref::batch_norm(v[0], v[1], v[2], v[3], v[4], 1e-5)}; }});
    }

    // Training mode: normalized with the batch's own mean and (population) variance; outputs 1
    // and 2 are the running statistics, input * momentum + batch * (1 - momentum).
    for (const Shape& in : {Shape{2, 3, 4, 5}, Shape{5, 4}}) {
        const Shape ch{in[1]};
        c.push_back({"BatchNormalization", in.to_string() + " training mode, momentum 0.8",
                     {x("X", in), x("Scale", ch), x("B", ch), x("Mean", ch), positive("Var", ch)},
                     [](infer::GraphBuilder& b, const std::vector<infer::Value>& v, DType) {
                         return b.op("BatchNormalization", v,
                                     {{"epsilon", 1e-5f}, {"momentum", 0.8f}, {"training_mode", int64_t{1}}}, 3);
                     },
                     [](const auto& v, DType) {
                         const RefTensor& x = v[0];
                         const int64_t channels = x.shape[1], inner = x.shape.numel() / x.shape[0] / channels;
                         RefTensor mean = v[3], var = v[4], running_mean = v[3], running_var = v[4];
                         for (int64_t ch = 0; ch < channels; ++ch) {
                             double sum = 0, squares = 0;
                             for (int64_t n = 0; n < x.shape[0]; ++n)
                                 for (int64_t i = 0; i < inner; ++i) sum += x.data[static_cast<size_t>((n * channels + ch) * inner + i)];
                             const double m = sum / static_cast<double>(x.shape[0] * inner);
                             for (int64_t n = 0; n < x.shape[0]; ++n)
                                 for (int64_t i = 0; i < inner; ++i) {
                                     const double d = x.data[static_cast<size_t>((n * channels + ch) * inner + i)] - m;
                                     squares += d * d;
                                 }
                             const size_t k = static_cast<size_t>(ch);
                             mean.data[k] = m;
                             var.data[k] = squares / static_cast<double>(x.shape[0] * inner);
                             running_mean.data[k] = v[3].data[k] * 0.8f + m * (1 - 0.8f);
                             running_var.data[k] = v[4].data[k] * 0.8f + var.data[k] * (1 - 0.8f);
                         }
                         return std::vector{ref::batch_norm(x, v[1], v[2], mean, var, 1e-5), running_mean, running_var};
                     }});
    }

    struct ConvSpec { Shape x, w; bool bias; int64_t group; ref::Window window; };
    for (const auto& s : std::vector<ConvSpec>{
             {{1, 3, 5, 5}, {4, 3, 3, 3}, false, 1, {}},
             {{2, 3, 7, 6}, {4, 3, 3, 3}, true, 1, {{}, {}, {}, {1, 1, 1, 1}}},
             {{1, 4, 9, 9}, {6, 2, 3, 3}, true, 2, {{}, {2, 2}, {}, {1, 0, 1, 2}}},      // groups, stride, asymmetric pads
             {{1, 3, 11, 10}, {2, 3, 3, 2}, true, 1, {{}, {1, 2}, {2, 2}, {2, 1, 2, 1}}},  // dilations
             {{1, 4, 6, 7}, {4, 1, 3, 3}, true, 4, {{}, {}, {}, {1, 1, 1, 1}}},            // depthwise
             {{1, 3, 7, 8}, {5, 3, 3, 3}, true, 1, {{}, {2, 2}, {}, {}, "SAME_UPPER"}},
             {{1, 2, 6, 5}, {3, 2, 2, 2}, false, 1, {{}, {}, {}, {}, "SAME_LOWER"}},
             {{1, 3, 8, 8}, {2, 3, 3, 3}, true, 1, {{}, {3, 3}, {}, {}, "VALID"}},
             {{2, 3, 17}, {4, 3, 5}, true, 1, {{}, {2}, {}, {2, 2}}},                      // 1-D
             {{1, 8, 5, 5}, {33, 8, 1, 1}, true, 1, {}},                                   // 1x1, odd channels
             {{2, 6, 4, 8}, {20, 6, 1, 1}, true, 1, {}},                                   // 1x1, whole 16-wide panels
             {{1, 32, 6, 6}, {8, 32, 3, 3}, true, 1, {{}, {}, {}, {1, 1, 1, 1}}},            // K = 288: two f32 blocks
             // Columns unfolded a chunk of positions at a time (conv_columns.hpp), chunks starting
             // inside a line: 9 f32 / 3 bf16 chunks; strided; 1x1 read in two bf16 chunks.
             {{1, 64, 24, 24}, {8, 64, 3, 3}, true, 1, {{}, {}, {}, {1, 1, 1, 1}}},
             {{1, 32, 30, 30}, {4, 32, 3, 3}, false, 1, {{}, {2, 2}, {}, {1, 1, 1, 1}}},
             {{1, 256, 24, 24}, {4, 256, 1, 1}, true, 1, {}},
             // Depthwise rows wider than 16 (a padded copy of each plane): stride 1, stride 2 with
             // two output channels per input channel, asymmetric padding, an unrolled 5x5 with a
             // tail of one column, and a 7x7 of stride 2 (the kernel size read at run time).
             {{1, 8, 12, 40}, {8, 1, 3, 3}, true, 8, {{}, {}, {}, {1, 1, 1, 1}}},
             {{2, 8, 11, 45}, {16, 1, 3, 3}, true, 8, {{}, {2, 2}, {}, {1, 1, 1, 1}}},
             {{1, 4, 9, 37}, {4, 1, 3, 3}, false, 4, {{}, {1, 2}, {}, {0, 2, 1, 0}}},
             {{1, 6, 10, 33}, {6, 1, 5, 5}, true, 6, {{}, {}, {}, {2, 2, 2, 2}}},
             {{1, 3, 9, 41}, {3, 1, 7, 7}, false, 3, {{}, {2, 2}, {}, {3, 3, 3, 3}}},
             {{1, 16, 20, 20}, {24, 16, 3, 3}, true, 1, {{}, {}, {}, {1, 1, 1, 1}}},        // larger
             // Stride 1, rows 14+ wide: columns read from a padded copy (convolution_taps.hpp).
             // A 5x3 kernel with asymmetric pads over 2 images; SAME_UPPER with an even kernel (the
             // end padding only); K = 360 in two f32 blocks with 20 output channels.
             {{2, 5, 9, 17}, {7, 5, 5, 3}, true, 1, {{}, {}, {}, {2, 0, 1, 2}}},
             {{1, 4, 6, 16}, {3, 4, 2, 2}, false, 1, {{}, {}, {}, {}, "SAME_UPPER"}},
             {{1, 40, 16, 16}, {20, 40, 3, 3}, true, 1, {{}, {}, {}, {1, 1, 1, 1}}},
             {{2, 16, 10, 15}, {12, 4, 3, 3}, true, 4, {{}, {}, {}, {1, 1, 1, 1}}},  // a group at a time
             {{1, 32, 15, 15}, {32, 1, 3, 3}, true, 32, {{}, {2, 2}, {}, {1, 1, 1, 1}}},    // depthwise, strided
             {{3, 6, 9, 9}, {6, 1, 3, 3}, true, 6, {{}, {}, {2, 2}, {2, 2, 2, 2}}},         // depthwise, dilated, 3 images
             {{2, 8, 5, 5}, {8, 2, 1, 1}, false, 4, {}},                                   // grouped 1x1
             // Narrow depthwise planes, eight at a time: two outputs per input channel, and a
             // 5x5 kernel of stride 2 with 24 planes over two images.
             {{1, 4, 7, 7}, {8, 1, 3, 3}, true, 4, {{}, {}, {}, {1, 1, 1, 1}}},
             {{2, 12, 13, 13}, {12, 1, 5, 5}, true, 12, {{}, {2, 2}, {}, {2, 2, 2, 2}}},
             {{1, 2, 4, 5, 3}, {3, 2, 2, 3, 2}, true, 1, {{}, {}, {}, {1, 0, 1, 0, 1, 0}}}}) {  // 3-D
        std::vector<InputSpec> inputs{x("X", s.x), x("W", s.w)};
        if (s.bias) inputs.push_back(x("B", Shape{s.w[0]}));
        infer::Attributes attrs = window_attributes(s.window);
        if (s.group != 1) attrs.set("group", s.group);
        c.push_back(accumulating({"Conv",
                                  s.x.to_string() + " W " + s.w.to_string() + (s.bias ? " bias" : "") + " group " +
                                      std::to_string(s.group) + window_label(s.window),
                                  inputs, node("Conv", attrs), [s](const auto& v, DType) {
                                      return std::vector{ref::conv(v[0], v[1], s.bias ? &v[2] : nullptr, s.window, s.group)};
                                  }}));
    }

    struct PoolSpec { Shape x; ref::Window window; };
    const std::vector<PoolSpec> pools{
        {{1, 2, 6, 6}, {{2, 2}, {2, 2}, {}, {}}},
        {{2, 3, 7, 7}, {{3, 3}, {2, 2}, {}, {1, 1, 1, 1}}},
        {{1, 2, 7, 8}, {{3, 3}, {2, 2}, {}, {}, "NOTSET", true}},            // ceil_mode
        {{1, 2, 6, 7}, {{3, 2}, {2, 2}, {}, {1, 0, 1, 1}, "NOTSET", true}},  // ceil_mode and pads
        {{1, 3, 9, 8}, {{3, 3}, {2, 3}, {}, {}, "SAME_UPPER"}},
        {{1, 2, 17}, {{4}, {3}, {}, {1, 2}}},                               // 1-D
        {{2, 8, 33, 33}, {{3, 3}, {2, 2}, {}, {1, 1, 1, 1}}},               // larger
        // Rows wide enough for the AVX2 max-pool rows (eight outputs at a time, a masked tail):
        // stride 1, and stride 2 with ceil_mode and asymmetric pads.
        {{1, 2, 9, 37}, {{3, 3}, {1, 1}, {}, {1, 1, 1, 1}}},
        {{2, 3, 20, 45}, {{3, 2}, {2, 2}, {}, {1, 0, 0, 1}, "NOTSET", true}},
        {{1, 2, 5, 6, 7}, {{2, 3, 2}, {2, 2, 1}, {}, {1, 0, 1, 0, 1, 1}}},  // 3-D
        {{2, 3, 4, 4, 5}, {{2, 2, 2}, {1, 2, 2}, {}, {}, "NOTSET", true}},  // 3-D, ceil_mode
    };
    for (const auto& p : pools)
        c.push_back({"MaxPool", p.x.to_string() + window_label(p.window), {x("X", p.x)},
                     node("MaxPool", window_attributes(p.window)),
                     [p](const auto& v, DType) { return std::vector{ref::max_pool(v[0], p.window)}; }});
    // The Indices output, and integer MaxPool (exact, so no tolerance hides a wrong tap).
    for (const auto& p : {pools[1], pools[5], pools[7]}) {
        for (bool column_major : {false, true}) {
            infer::Attributes attrs = window_attributes(p.window);
            attrs.set("storage_order", int64_t{column_major});
            c.push_back({"MaxPool", p.x.to_string() + window_label(p.window) + " with Indices, storage_order " +
                                        std::to_string(column_major),
                         {x("X", p.x)}, node("MaxPool", attrs, {}, 2), [p, column_major](const auto& v, DType) {
                             return std::vector{ref::max_pool(v[0], p.window),
                                                ref::max_pool_indices(v[0], p.window, column_major)};
                         }});
        }
    }
    // Integer MaxPool (exact, so no tolerance hides a wrong tap), over each type's whole range so
    // that padding must never win: the rows path (pads, ceil_mode, SAME_UPPER, 1-D, stride 1)
    // and the loop (3-D).
    for (const auto& p : {pools[1], pools[3], pools[4], pools[5], pools[7], pools[8], pools[9]})
        for (const DType type : {DType::u8, DType::i8}) {
            const bool u8 = type == DType::u8;
            Case integral{"MaxPool", p.x.to_string() + window_label(p.window) + " " + std::string(infer::dtype_name(type)),
                          {integers("X", p.x, u8 ? 0 : -128, u8 ? 255 : 127, std::nullopt)},
                          node("MaxPool", window_attributes(p.window)),
                          [p](const auto& v, DType) { return std::vector{ref::max_pool(v[0], p.window)}; }};
            integral.dtypes = {type};
            integral.cpu_optional = true;
            c.push_back(integral);
        }
    // MaxUnpool of MaxPool's own indices: the maxima back in place, zeros elsewhere.
    for (const auto& p : {pools[0], pools[1], pools[7]}) {
        c.push_back({"MaxUnpool", p.x.to_string() + window_label(p.window), {x("X", p.x)},
                     [p](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType) {
                         const auto pooled = b.op("MaxPool", {in[0]}, window_attributes(p.window), 2);
                         const infer::Value shape = b.constant_i64(p.x.dims());
                         return std::vector{b.op1("MaxUnpool", {pooled[0], pooled[1], shape}, window_attributes(p.window))};
                     },
                     [p](const auto& v, DType) {
                         const RefTensor values = ref::max_pool(v[0], p.window);
                         const RefTensor at = ref::max_pool_indices(v[0], p.window, false);
                         RefTensor y{v[0].shape, std::vector<double>(v[0].data.size(), 0.0)};
                         for (size_t i = 0; i < at.data.size(); ++i) y.data[static_cast<size_t>(at.data[i])] = values.data[i];
                         return std::vector{y};
                     }});
    }
    ref::Window dilated;
    dilated.kernel = {2, 2};
    dilated.dilations = {2, 2};
    c.push_back({"MaxPool", "[1,2,7,7]" + window_label(dilated), {x("X", {1, 2, 7, 7})},
                 node("MaxPool", window_attributes(dilated)),
                 [dilated](const auto& v, DType) { return std::vector{ref::max_pool(v[0], dilated)}; }});
    for (const auto& p : pools)
        for (bool include_pad : {false, true}) {
            if (include_pad && p.window.pads.empty() && p.window.auto_pad == "NOTSET" && !p.window.ceil_mode) continue;
            infer::Attributes attrs = window_attributes(p.window);
            attrs.set("count_include_pad", int64_t{include_pad});
            c.push_back(accumulating({"AveragePool",
                                      p.x.to_string() + window_label(p.window) + " count_include_pad " + std::to_string(include_pad),
                                      {x("X", p.x)}, node("AveragePool", attrs), [p, include_pad](const auto& v, DType) {
                                          return std::vector{ref::average_pool(v[0], p.window, include_pad)};
                                      }}));
        }

    for (const Shape& in : {Shape{2, 3, 5, 7}, Shape{1, 17, 33}, Shape{1, 2, 3, 4, 5}, Shape{3, 4, 1, 1}, Shape{2, 32, 33, 33}})
        c.push_back(accumulating({"GlobalAveragePool", in.to_string(), {x("X", in)}, node("GlobalAveragePool"),
                                  [](const auto& v, DType) { return std::vector{ref::global_average_pool(v[0])}; }}));
    return c;
}

}  // namespace ops
