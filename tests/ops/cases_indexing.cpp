// Op test cases of the indexing family. Value-carrying inputs (k, pads, repeats, scales,
// conditions) are constants; index tensors are drawn per run over [-extent, extent), so
// negative indices occur.
#include "op_case.hpp"
#include "precision.hpp"
#include "reference_indexing.hpp"

#include <cmath>
#include <random>

namespace ops {

namespace {
std::string dims_label(const Dims& d) { return Shape(d).to_string(); }

// A constant of `type` holding `values` (exactly representable there).
infer::Value float_constant(infer::GraphBuilder& b, DType type, const std::vector<double>& values, const Shape& shape) {
    switch (type) {
        case DType::f64: return b.constant(infer::Tensor::from_vector<double>(values, shape));
        case DType::f16:
        case DType::bf16: {
            std::vector<uint16_t> bits;
            for (double v : values) bits.push_back(type == DType::f16 ? ref::half_bits(v) : ref::bfloat16_bits(v));
            return b.constant(infer::Tensor::from_host(bits.data(), type, shape));
        }
        default: return b.constant(infer::Tensor::from_vector<float>(std::vector<float>(values.begin(), values.end()), shape));
    }
}

infer::Value bool_constant(infer::GraphBuilder& b, const std::vector<bool>& values) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return b.constant(infer::Tensor::from_host(bytes.data(), DType::boolean, Shape({static_cast<int64_t>(bytes.size())})));
}

int64_t extent(const Shape& s, int64_t axis) { return s[static_cast<size_t>(ref::normalize_axis(axis, s.rank()))]; }

void add_gathers(std::vector<Case>& c) {
    for (const auto& [data, indices, axis] : {std::tuple<Shape, Shape, int64_t>{{3, 4}, {5, 4}, 0},
                                              {{2, 3, 5}, {2, 3, 7}, -1}, {{4, 3}, {2, 2}, 1}}) {
        const int64_t n = extent(data, axis);
        c.push_back({"GatherElements", data.to_string() + " idx " + indices.to_string() + " axis " + std::to_string(axis),
                     {x("X", data), integers("I", indices, -n, n - 1)}, node("GatherElements", {{"axis", axis}}),
                     [axis](const auto& in, DType) { return std::vector{ref::gather_elements(in[0], in[1], axis)}; }});
    }
    for (const auto& [data, indices, batch, lo, hi] :
         {std::tuple<Shape, Shape, int64_t, int64_t, int64_t>{{3, 4, 5}, {2, 2}, 0, -3, 2},
          {{2, 3, 4}, {2, 5, 1}, 1, -3, 2}, {{3, 3}, {4, 2}, 0, -3, 2}}) {
        c.push_back({"GatherND", data.to_string() + " idx " + indices.to_string() + " batch_dims " + std::to_string(batch),
                     {x("X", data), integers("I", indices, lo, hi)}, node("GatherND", {{"batch_dims", batch}}),
                     [batch](const auto& in, DType) { return std::vector{ref::gather_nd(in[0], in[1], batch)}; }});
    }
}

void add_scatters(std::vector<Case>& c) {
    for (const auto& [op, data, indices, axis, reduction] :
         {std::tuple<std::string, Shape, Shape, int64_t, std::string>{"ScatterElements", {4, 5}, {2, 5}, 0, "none"},
          {"ScatterElements", {4, 5}, {4, 3}, 1, "add"}, {"ScatterElements", {2, 3, 6}, {2, 3, 4}, -1, "mul"},
          {"Scatter", {4, 5}, {3, 5}, 0, "none"}, {"Scatter", {3, 7}, {2, 2}, -1, "none"}}) {
        const int64_t n = extent(data, axis);
        infer::Attributes attrs{{"axis", axis}};
        if (reduction != "none") attrs.set("reduction", reduction);
        c.push_back({op, data.to_string() + " idx " + indices.to_string() + " axis " + std::to_string(axis) + " " + reduction,
                     {x("X", data), integers("I", indices, -n, n - 1), x("U", indices)}, node(op, attrs),
                     [axis, reduction](const auto& in, DType) {
                         return std::vector{ref::scatter_elements(in[0], in[1], in[2], axis, reduction)};
                     }});
    }
    for (const auto& [data, indices, updates, reduction] :
         {std::tuple<Shape, Shape, Shape, std::string>{{4, 5, 3}, {2, 1}, {2, 5, 3}, "none"},
          {{4, 5, 3}, {3, 2}, {3, 3}, "add"}, {{3, 4}, {2, 2}, {2}, "mul"}}) {
        infer::Attributes attrs;
        if (reduction != "none") attrs.set("reduction", reduction);
        c.push_back({"ScatterND", data.to_string() + " idx " + indices.to_string() + " " + reduction,
                     {x("X", data), integers("I", indices, -3, 2), x("U", updates)}, node("ScatterND", attrs),
                     [reduction](const auto& in, DType) { return std::vector{ref::scatter_nd(in[0], in[1], in[2], reduction)}; }});
    }
}

// The key/value cache update: a prompt written from position 0, decode steps at per-row
// positions, a circular window wrapping around, and the sequence axis not second to last.
void add_tensor_scatters(std::vector<Case>& c) {
    struct Spec {
        Shape past, update;
        int64_t axis;
        bool circular, indexed;
        int64_t hi;  // largest write index drawn
    };
    for (const Spec& s : {Spec{{2, 3, 8, 4}, {2, 3, 5, 4}, -2, false, false, 0}, Spec{{3, 2, 9, 5}, {3, 2, 1, 5}, -2, false, true, 8},
                          Spec{{2, 10, 6}, {2, 3, 6}, 1, false, true, 7}, Spec{{2, 2, 6, 3}, {2, 2, 4, 3}, 2, true, true, 5}}) {
        infer::Attributes attrs{{"axis", s.axis}};
        if (s.circular) attrs.set("mode", std::string("circular"));
        // Integer-valued, so that the same case checks i64 caches (a copy changes no value).
        std::vector<InputSpec> inputs{integers("P", s.past, -100, 100, std::nullopt), integers("U", s.update, -100, 100, std::nullopt)};
        if (s.indexed) inputs.push_back(integers("W", {s.past[0]}, 0, s.hi));
        c.push_back({"TensorScatter",
                     s.past.to_string() + " update " + s.update.to_string() + (s.circular ? " circular" : "") +
                         (s.indexed ? " indexed" : ""),
                     inputs, node("TensorScatter", attrs),
                     [s](const auto& in, DType) {
                         return std::vector{ref::tensor_scatter(in[0], in[1], s.indexed ? &in[2] : nullptr, s.axis, s.circular)};
                     }});
        c.back().dtypes.push_back(DType::i64);
    }
}

void add_matrix_patterns(std::vector<Case>& c) {
    for (const auto& [shape, upper, k] : {std::tuple<Shape, bool, std::optional<int64_t>>{{4, 5}, true, {}},
                                          {{2, 3, 4}, false, -1}, {{5, 3}, true, 2}, {{3, 6}, false, 7}}) {
        std::vector<Operand> operands{arg(0)};
        if (k) operands.push_back(ints({*k}));
        c.push_back({"Trilu", shape.to_string() + (upper ? " upper" : " lower") + " k " + (k ? std::to_string(*k) : "-"),
                     {x("X", shape)}, node("Trilu", {{"upper", int64_t{upper}}}, operands),
                     [upper, k](const auto& in, DType) { return std::vector{ref::trilu(in[0], upper, k.value_or(0))}; }});
    }
    for (const auto& [shape, k] : {std::pair<Shape, int64_t>{{4, 5}, 1}, {{3, 3}, 0}, {{5, 2}, -2}})
        c.push_back({"EyeLike", shape.to_string() + " k " + std::to_string(k), {x("X", shape)},
                     node("EyeLike", {{"k", k}}), [shape, k](const auto&, DType) { return std::vector{ref::eye_like(shape, k)}; }});
    Case typed{"EyeLike", "i64 [3,4] to f32", {integers("X", {3, 4}, -5, 5)}, node("EyeLike", {{"dtype", int64_t{1}}}),
               [](const auto&, DType) { return std::vector{ref::eye_like(Shape{3, 4}, 0)}; }};
    typed.dtypes = {DType::f32};
    c.push_back(typed);
}

void add_resizes(std::vector<Case>& c) {
    struct Spec {
        Shape in;
        std::vector<double> scales;  // empty: sizes
        Dims sizes;
        ref::ResizeSpec mode;
    };
    for (const Spec& s : std::vector<Spec>{
             {{1, 2, 3, 4}, {1, 1, 2, 1.5}, {}, {"nearest", "half_pixel", "round_prefer_floor"}},
             {{1, 1, 5, 7}, {1, 1, 0.6, 0.8}, {}, {"linear", "half_pixel"}},
             {{2, 1, 4, 5}, {1, 1, 1.5, 2}, {}, {"cubic", "half_pixel"}},
             {{1, 1, 4, 5}, {}, {1, 1, 7, 3}, {"linear", "align_corners"}},
             {{1, 1, 4, 4}, {}, {1, 1, 3, 7}, {"nearest", "asymmetric", "ceil"}},
             {{1, 1, 4, 4}, {}, {1, 1, 8, 6}, {"nearest", "pytorch_half_pixel", "round_prefer_ceil"}},
             {{1, 1, 4, 5}, {1, 1, 0.8, 1.6}, {}, {"cubic", "asymmetric", "floor", -0.5, true}},
             {{3, 17}, {1, 0.5}, {}, {"linear", "pytorch_half_pixel"}}}) {
        Dims out = s.sizes;
        // The graph carries the scales as f32, so the reference uses them rounded the same way.
        std::vector<double> scales;
        for (double v : s.scales) scales.push_back(static_cast<float>(v));
        if (out.empty())
            for (size_t d = 0; d < s.in.rank(); ++d) out.push_back(static_cast<int64_t>(std::floor(s.in[d] * scales[d])));
        else
            for (size_t d = 0; d < s.in.rank(); ++d) scales.push_back(static_cast<double>(out[d]) / static_cast<double>(s.in[d]));
        infer::Attributes attrs{{"mode", s.mode.mode}, {"coordinate_transformation_mode", s.mode.coordinates},
                                {"nearest_mode", s.mode.nearest_mode}, {"cubic_coeff_a", static_cast<float>(s.mode.cubic_a)},
                                {"exclude_outside", int64_t{s.mode.exclude_outside}}};
        const std::string label = s.in.to_string() + " " + s.mode.mode + " " + s.mode.coordinates + " " +
                                  s.mode.nearest_mode + (s.scales.empty() ? " sizes " : " scales ") + dims_label(out);
        c.push_back({"Resize", label, {x("X", s.in)},
                     [s, attrs](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType) {
                         const auto rank = static_cast<int64_t>(s.in.rank());
                         if (s.scales.empty())
                             return std::vector{b.op1("Resize", {in[0], {}, {}, b.constant_i64(s.sizes)}, attrs)};
                         const infer::Value scales = float_constant(b, DType::f32, s.scales, Shape({rank}));
                         return std::vector{b.op1("Resize", {in[0], {}, scales}, attrs)};
                     },
                     [=](const auto& in, DType) { return std::vector{ref::resize(in[0], scales, Shape(out), s.mode)}; }});
    }
    for (const auto& [in, scales, mode] : {std::tuple<Shape, std::vector<double>, std::string>{{1, 2, 3, 4}, {1, 1, 2, 3}, "nearest"},
                                           {{1, 1, 3, 3}, {1, 1, 2, 1.5}, "linear"}}) {
        Dims out;
        for (size_t d = 0; d < in.rank(); ++d) out.push_back(static_cast<int64_t>(std::floor(in[d] * scales[d])));
        c.push_back({"Upsample", in.to_string() + " " + mode + " scales to " + dims_label(out), {x("X", in)},
                     [in, scales, mode](infer::GraphBuilder& b, const std::vector<infer::Value>& v, DType) {
                         const infer::Value s = float_constant(b, DType::f32, scales, Shape({static_cast<int64_t>(in.rank())}));
                         return std::vector{b.op1("Upsample", {v[0], s}, {{"mode", mode}})};
                     },
                     [=](const auto& v, DType) {
                         return std::vector{ref::resize(v[0], scales, Shape(out), {mode, "asymmetric", "floor"})};
                     }});
    }
}

void add_conversions(std::vector<Case>& c) {
    c.push_back({"Dropout", "[3,5] inference", {x("X", {3, 5})}, node("Dropout"),
                 [](const auto& in, DType) { return std::vector{in[0]}; }});
    c.push_back({"Dropout", "[2,7,3] with mask, ratio 0.3", {x("X", {2, 7, 3})},
                 [](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType) {
                     return b.op("Dropout", {in[0], b.constant(infer::Tensor::from_vector<float>({0.3f}, Shape{}))}, {}, 2);
                 },
                 [](const auto& in, DType) {
                     return std::vector{in[0], RefTensor{in[0].shape, std::vector<double>(in[0].data.size(), 1.0)}};
                 }});
    // Training mode with a seed: MT19937 seeded with it, uniform draws of 53 bits as numpy's
    // random_sample makes them (two outputs, the first shifted by 5 bits, the second by 6),
    // elements kept where the draw is at least the ratio and scaled by 1 / (1 - ratio).
    c.push_back({"Dropout", "[4,6] training, ratio 0.4, seed 3, with mask", {x("X", {4, 6})},
                 [](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType) {
                     const infer::Value ratio = b.constant(infer::Tensor::from_vector<float>({0.4f}, Shape{}));
                     infer::Tensor on = infer::Tensor::empty(DType::boolean, Shape{});
                     *static_cast<uint8_t*>(on.raw_data()) = 1;
                     return b.op("Dropout", {in[0], ratio, b.constant(on)}, {{"seed", int64_t{3}}}, 2);
                 },
                 [](const auto& in, DType) {
                     std::mt19937 generator(3);
                     RefTensor y = in[0], mask{in[0].shape, std::vector<double>(in[0].data.size(), 0.0)};
                     for (size_t i = 0; i < y.data.size(); ++i) {
                         const double high = generator() >> 5, low = generator() >> 6;
                         const bool keep = (high * 67108864.0 + low) / 9007199254740992.0 >= 0.4f;
                         y.data[i] = keep ? y.data[i] / (1.0 - 0.4f) : 0.0;
                         mask.data[i] = keep;
                     }
                     return std::vector{y, mask};
                 }});
    for (DType like : {DType::f32, DType::i64, DType::f16}) {
        Case k{"CastLike", "[4,3] like " + std::string(infer::dtype_name(like)), {x("X", {4, 3}, 3.0), integers("L", {1}, 1, 1, like)},
               node("CastLike"), [like](const auto& in, DType) {
                   RefTensor out = in[0];
                   for (double& v : out.data)
                       v = like == DType::i64 ? std::trunc(v) : ref::round_to(like, static_cast<float>(v));
                   return std::vector{out};
               }};
        k.dtypes = {DType::f32, DType::f16, DType::f64};
        c.push_back(k);
    }
}

void add_one_hot_and_tile(std::vector<Case>& c) {
    for (const auto& [indices, depth, axis] : {std::tuple<Shape, int64_t, int64_t>{{2, 3}, 5, -1}, {{4}, 3, 0}, {{2, 3}, 4, 1}})
        c.push_back({"OneHot", indices.to_string() + " depth " + std::to_string(depth) + " axis " + std::to_string(axis),
                     {integers("I", indices, -depth, depth), x("V", {2})}, node("OneHot", {{"axis", axis}}, {arg(0), ints({depth}), arg(1)}),
                     [depth, axis](const auto& in, DType) {
                         return std::vector{ref::one_hot(in[0], depth, in[1].data[0], in[1].data[1], axis)};
                     }});
    for (const auto& [shape, repeats] : {std::pair<Shape, Dims>{{2, 3}, {2, 3}}, {{3, 1, 2}, {1, 4, 1}}, {{5}, {3}}})
        c.push_back({"Tile", shape.to_string() + " repeats " + dims_label(repeats), {x("X", shape)},
                     node("Tile", {}, {arg(0), ints(repeats)}),
                     [repeats](const auto& in, DType) { return std::vector{ref::tile(in[0], repeats)}; }});
}

void add_pads(std::vector<Case>& c) {
    for (const auto& [shape, pads, mode] : {std::tuple<Shape, Dims, std::string>{{3, 4}, {1, 2, 0, 1}, "constant"},
                                            {{5, 6}, {-1, 2, 0, -2}, "constant"}, {{3, 5}, {2, 1, 1, 3}, "reflect"},
                                            {{2, 3, 4}, {0, 1, 2, 1, 0, 3}, "edge"}})
        c.push_back({"Pad", shape.to_string() + " " + mode + " pads " + dims_label(pads), {x("X", shape)},
                     node("Pad", {{"mode", mode}}, {arg(0), ints(pads)}),
                     [pads, mode](const auto& in, DType) { return std::vector{ref::pad(in[0], pads, mode, 0.0)}; }});
    c.push_back({"Pad", "[3,4] constant 1.5 on axis -1 only", {x("X", {3, 4})},
                 [](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType dt) {
                     return std::vector{b.op1("Pad", {in[0], b.constant_i64({2, 1}), float_constant(b, dt, {1.5}, Shape{}),
                                                      b.constant_i64({-1})})};
                 },
                 [](const auto& in, DType) { return std::vector{ref::pad(in[0], {0, 2, 0, 1}, "constant", 1.5)}; }});
}

void add_block_moves(std::vector<Case>& c) {
    for (const auto& [shape, block, mode] : {std::tuple<Shape, int64_t, std::string>{{2, 8, 3, 2}, 2, "DCR"},
                                             {{2, 8, 3, 2}, 2, "CRD"}, {{1, 9, 2, 3}, 3, "CRD"}})
        c.push_back({"DepthToSpace", shape.to_string() + " blocksize " + std::to_string(block) + " " + mode, {x("X", shape)},
                     node("DepthToSpace", {{"blocksize", block}, {"mode", mode}}),
                     [block, mode](const auto& in, DType) { return std::vector{ref::depth_to_space(in[0], block, mode == "CRD")}; }});
    for (const auto& [shape, block] : {std::pair<Shape, int64_t>{{1, 3, 4, 6}, 2}, {{2, 2, 6, 3}, 3}})
        c.push_back({"SpaceToDepth", shape.to_string() + " blocksize " + std::to_string(block), {x("X", shape)},
                     node("SpaceToDepth", {{"blocksize", block}}),
                     [block](const auto& in, DType) { return std::vector{ref::space_to_depth(in[0], block)}; }});
}

void add_selections(std::vector<Case>& c) {
    for (const auto& [shape, k, axis, largest] : {std::tuple<Shape, int64_t, int64_t, bool>{{3, 7}, 3, 1, true},
                                                  {{4, 5, 3}, 2, -2, false}, {{6}, 6, 0, true}})
        c.push_back({"TopK", shape.to_string() + " k " + std::to_string(k) + " axis " + std::to_string(axis) + (largest ? " largest" : " smallest"),
                     {x("X", shape)}, node("TopK", {{"axis", axis}, {"largest", int64_t{largest}}}, {arg(0), ints({k})}, 2),
                     [k, axis, largest](const auto& in, DType) { return ref::top_k(in[0], k, axis, largest); }});
    Case ties{"TopK", "i32 [4,9] ties k 4", {integers("X", {4, 9}, 0, 3, std::nullopt)}, node("TopK", {}, {arg(0), ints({4})}, 2),
              [](const auto& in, DType) { return ref::top_k(in[0], 4, -1, true); }};
    ties.dtypes = {DType::f32, DType::i32, DType::i64};
    c.push_back(ties);

    for (const auto& [shape, condition, axis] : {std::tuple<Shape, std::vector<bool>, std::optional<int64_t>>{{5, 3}, {1, 0, 1, 1, 0}, 0},
                                                 {{3, 4}, {0, 1, 1, 0, 0, 0, 1}, {}}, {{2, 3, 4}, {0, 1, 1}, -2}, {{2, 3}, {0, 1}, 1}})
        c.push_back({"Compress", shape.to_string() + " axis " + (axis ? std::to_string(*axis) : "-"), {x("X", shape)},
                     [condition, axis](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType) {
                         infer::Attributes attrs;
                         if (axis) attrs.set("axis", *axis);
                         return std::vector{b.op1("Compress", {in[0], bool_constant(b, condition)}, attrs)};
                     },
                     [condition, axis](const auto& in, DType) {
                         return std::vector{ref::compress(in[0], condition, axis.has_value(), axis.value_or(0))};
                     }});

    for (const auto& [shape, lengths, batch, time] : {std::tuple<Shape, Dims, int64_t, int64_t>{{4, 5}, {5, 1, 3, 2}, 0, 1},
                                                      {{6, 3, 2}, {6, 2, 4}, 1, 0}})
        c.push_back({"ReverseSequence", shape.to_string() + " lengths " + dims_label(lengths), {x("X", shape)},
                     node("ReverseSequence", {{"batch_axis", batch}, {"time_axis", time}}, {arg(0), ints(lengths)}),
                     [=](const auto& in, DType) { return std::vector{ref::reverse_sequence(in[0], lengths, batch, time)}; }});

    // GridSample: grid points reach past [-1, 1] so that every padding mode matters.
    for (const char* mode : {"bilinear", "nearest", "bicubic"})
        for (const char* padding : {"zeros", "border", "reflection"})
            for (int64_t align : {0, 1}) {
                Case gs{"GridSample", std::string(mode) + " " + padding + " align_corners " + std::to_string(align),
                        {x("X", {2, 3, 5, 4}), x("Grid", {2, 3, 6, 2}, 1.3)},
                        node("GridSample", {{"mode", std::string(mode)}, {"padding_mode", std::string(padding)},
                                            {"align_corners", align}}),
                        [mode, padding, align](const auto& in, DType) {
                            return std::vector{ref::grid_sample(in[0], in[1], mode, padding, align != 0)};
                        }};
                gs.accumulates = true;
                c.push_back(gs);
            }
    // TfIdfVectorizer: unigrams {1, 2, 3} and bigrams (1,2) (2,3) (3,1) over tokens 0..3, so
    // that grams repeat; counted by matching every pool gram at every start and distance.
    for (const std::string mode : {"TF", "IDF", "TFIDF"})
        for (int64_t skip : {0, 2}) {
            const std::vector<std::vector<int64_t>> grams{{1}, {2}, {3}, {1, 2}, {2, 3}, {3, 1}};
            const std::vector<float> weights{0.5f, 1.5f, 2.0f, 0.25f, 3.0f, 1.0f};
            const infer::Attributes attrs{{"min_gram_length", int64_t{1}}, {"max_gram_length", int64_t{2}},
                                          {"max_skip_count", skip}, {"mode", mode},
                                          {"ngram_counts", std::vector<int64_t>{0, 3}},
                                          {"ngram_indexes", std::vector<int64_t>{0, 1, 2, 3, 4, 5}},
                                          {"pool_int64s", std::vector<int64_t>{1, 2, 3, 1, 2, 2, 3, 3, 1}},
                                          {"weights", weights}};
            Case tfidf{"TfIdfVectorizer", mode + " skip " + std::to_string(skip) + " [2,9]",
                       {integers("X", {2, 9}, 0, 3)}, node("TfIdfVectorizer", attrs),
                       [grams, weights, mode, skip](const auto& in, DType) {
                           RefTensor y{Shape{2, 6}, {}};
                           for (int64_t r = 0; r < 2; ++r)
                               for (size_t g = 0; g < grams.size(); ++g) {
                                   double count = 0;
                                   const auto n = static_cast<int64_t>(grams[g].size());
                                   for (int64_t d = 1; d <= (n == 1 ? 1 : skip + 1); ++d)
                                       for (int64_t s = 0; s + d * (n - 1) < 9; ++s) {
                                           bool match = true;
                                           for (int64_t k = 0; k < n; ++k)
                                               match = match && in[0].data[static_cast<size_t>(r * 9 + s + k * d)] == double(grams[g][static_cast<size_t>(k)]);
                                           count += match;
                                       }
                                   y.data.push_back(mode == "TF" ? count : mode == "IDF" ? (count > 0 ? weights[g] : 0.0) : count * weights[g]);
                               }
                           return std::vector{y};
                       }};
            tfidf.dtypes = {DType::i64};
            c.push_back(tfidf);
        }
    // Unique: small integers, so that values and slices repeat.
    for (const auto& [shape, axis] : std::vector<std::pair<Shape, std::optional<int64_t>>>{
             {{12}, std::nullopt}, {{3, 4}, std::nullopt}, {{4, 3}, 0}, {{2, 5, 2}, 1}, {{2, 5, 2}, -1}})
        for (int64_t sorted : {1, 0}) {
            infer::Attributes attrs{{"sorted", sorted}};
            if (axis) attrs.set("axis", *axis);
            Case u{"Unique", shape.to_string() + (axis ? " axis " + std::to_string(*axis) : " flat") + " sorted " + std::to_string(sorted),
                   {integers("X", shape, 0, 2, std::nullopt)}, node("Unique", attrs, {}, 4),
                   [axis, sorted](const auto& in, DType) { return ref::unique(in[0], axis, sorted != 0); }};
            u.dtypes = {DType::f32, DType::i64};
            c.push_back(u);
        }
    // NonMaxSuppression: random corner boxes (either diagonal), overlapping often enough
    // that the IoU threshold bites.
    for (const auto& [keep, iou] : {std::pair<int64_t, float>{3, 0.3f}, {10, 0.6f}, {0, 0.5f}}) {
        InputSpec boxes = x("boxes", {2, 8, 4}, 2.0), scores = positive("scores", {2, 3, 8});
        Case nms{"NonMaxSuppression", "[2,8,4] [2,3,8] keep " + std::to_string(keep) + " iou " + std::to_string(iou),
                 {boxes, scores},
                 [keep, iou](infer::GraphBuilder& b, const std::vector<infer::Value>& in, DType) {
                     const Shape scalar(std::vector<int64_t>{});
                     const infer::Value k = b.constant(infer::Tensor::from_vector(std::vector<int64_t>{keep}, scalar));
                     const infer::Value t = b.constant(infer::Tensor::from_vector(std::vector<float>{iou}, scalar));
                     const infer::Value s = b.constant(infer::Tensor::from_vector(std::vector<float>{0.2f}, scalar));
                     return std::vector{b.op1("NonMaxSuppression", {in[0], in[1], k, t, s})};
                 },
                 [keep, iou](const auto& in, DType) {
                     return std::vector{ref::non_max_suppression(in[0], in[1], keep, iou, 0.2)};
                 }};
        nms.dtypes = {DType::f32, DType::f64};
        c.push_back(nms);
    }
    for (const Shape& shape : {Shape{3, 4}, Shape{2, 3, 5}}) {
        Case nz{"NonZero", shape.to_string() + " with zeros", {integers("X", shape, -1, 1, std::nullopt)}, node("NonZero"),
                [](const auto& in, DType) { return std::vector{ref::nonzero(in[0])}; }};
        nz.dtypes = {DType::f32, DType::i64};
        c.push_back(nz);
    }
}
}  // namespace

std::vector<Case> indexing_cases() {
    std::vector<Case> c;
    add_gathers(c);
    add_scatters(c);
    add_tensor_scatters(c);
    add_matrix_patterns(c);
    add_resizes(c);
    add_conversions(c);
    add_one_hot_and_tile(c);
    add_pads(c);
    add_block_moves(c);
    add_selections(c);
    return c;
}

}  // namespace ops
