// calibrate(): the graph as an int8 session would fuse it, with the input of every product
// precision int8 quantizes made an output too, run in f32 on the CPU over the caller's batches.
#include "core/ir/graph_ir.hpp"
#include "core/passes/pipeline.hpp"
#include "core/passes/rewriter.hpp"

#include <infer/backend.hpp>
#include <infer/calibration.hpp>
#include <infer/error.hpp>
#include <infer/session.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <random>

namespace infer {

namespace {

constexpr const char* kFormat = "infer-calibration/1";
// Values kept per product for the percentile method: a uniform sample, so memory stays bounded
// however many batches are seen.
constexpr size_t kSamples = size_t{1} << 16;

// Bins of the entropy method's histogram of |values| over [0, the largest magnitude seen].
constexpr size_t kHistogramBins = 2048;

struct Observed {
    float low = 0, high = 0;
    std::vector<float> sample;  // percentile: |values|, reservoir-sampled
    uint64_t seen = 0;
    std::vector<uint64_t> histogram;  // entropy: counts of |values| in kHistogramBins bins

    float magnitude() const { return std::max(-low, high); }
};

// The entropy method's bound, in bins: of the bounds b from `levels` bins to all of them, the
// one whose distribution P (the histogram's first b bins, the counts beyond added to the last)
// differs least from Q (those b bins merged into `levels` steps, as quantization merges them,
// each step's count spread evenly over its bins that hold any), by KL(P || Q).
size_t entropy_bound(const std::vector<uint64_t>& histogram, size_t levels) {
    const size_t bins = histogram.size();
    std::vector<double> beyond(bins + 1, 0.0);  // counts in bins [b, bins)
    for (size_t b = bins; b-- > 0;) beyond[b] = beyond[b + 1] + double(histogram[b]);
    if (beyond[0] == 0 || bins <= levels) return bins;
    size_t best = bins;
    double least = std::numeric_limits<double>::infinity();
    std::vector<double> q(bins);
    for (size_t b = levels; b <= bins; ++b) {
        const double inside = beyond[0] - beyond[b];
        if (inside == 0) continue;
        for (size_t step = 0; step < levels; ++step) {
            const size_t first = step * b / levels, last = (step + 1) * b / levels;
            double count = 0;
            size_t held = 0;
            for (size_t i = first; i < last; ++i) count += double(histogram[i]), held += histogram[i] != 0;
            for (size_t i = first; i < last; ++i) q[i] = histogram[i] != 0 ? count / double(held) : 0.0;
        }
        double divergence = 0;
        for (size_t i = 0; i < b; ++i) {
            const double p = (double(histogram[i]) + (i + 1 == b ? beyond[b] : 0.0)) / beyond[0];
            if (p == 0) continue;
            // A bin that only the clipped counts fill has no mass in Q: charged as if it had one
            // count's worth, so clipping many values still costs a finite, large divergence.
            const double qi = std::max(q[i], 1.0) / inside;
            divergence += p * std::log(p / qi);
        }
        if (divergence < least) least = divergence, best = b;
    }
    return best;
}

}  // namespace

Calibration calibrate(const Graph& graph, const std::vector<Batch>& batches, const CalibrationOptions& options) {
    if (batches.empty()) throw InvalidArgument("calibrate: no batches to calibrate on");
    if (options.method == CalibrationMethod::percentile && !(options.percentile > 50 && options.percentile <= 100))
        throw InvalidArgument("calibrate: percentile must be in (50, 100], got " + std::to_string(options.percentile));
    // The fused graph an int8 session plans from, before quantization: its product nodes carry
    // the names the session's QuantizedMatMul nodes will have.
    const std::shared_ptr<Backend> cpu = backend_for(Device::CPU);
    detail::PassContext context{*cpu, Precision::f32};
    context.separate_products = true;
    auto fused = std::make_shared<detail::GraphIR>(*detail::run_pipeline(graph.ir(), context));
    std::vector<std::pair<std::string, int>> watched;  // product node name, its input A
    {
        detail::Rewriter rewriter(fused);
        for (int n : detail::quantizable_products(rewriter))
            watched.emplace_back(fused->nodes[n].name, fused->nodes[n].inputs[0]);
    }
    // Each watched value once as an extra output (unless the caller passes it in).
    std::map<int, std::string> extra;
    for (const auto& [node, value] : watched)
        if (std::find(fused->inputs.begin(), fused->inputs.end(), value) == fused->inputs.end() && !extra.count(value)) {
            extra[value] = "calibration/" + node;
            fused->outputs.push_back(value);
            fused->output_names.push_back(extra[value]);
        }
    detail::validate(*fused);
    SessionOptions session_options;
    session_options.threads = options.threads;
    const Session session(Graph(fused), session_options);

    // A watched value of one run, on the host: an extra output, or the batch's own input.
    const auto watched_value = [&](const Batch& batch, const Batch& outputs, int value) {
        const std::string& input_name = fused->values[static_cast<size_t>(value)].name;
        return (extra.count(value) ? outputs[extra[value]] : batch[input_name]).to(Device::CPU).contiguous();
    };

    std::map<std::string, Observed> observed;
    std::mt19937_64 rng(20261204);
    for (const Batch& batch : batches) {
        const Batch outputs = session.run(batch);
        for (const auto& [node, value] : watched) {
            const Tensor t = watched_value(batch, outputs, value);
            if (t.dtype() != DType::f32) continue;
            Observed& o = observed[node];
            const float* p = t.data<float>();
            for (int64_t i = 0, count = t.numel(); i < count; ++i) {
                if (!std::isfinite(p[i])) continue;
                o.low = std::min(o.low, p[i]);
                o.high = std::max(o.high, p[i]);
                if (options.method != CalibrationMethod::percentile) continue;
                ++o.seen;
                if (o.sample.size() < kSamples) {
                    o.sample.push_back(p[i]);
                } else {
                    const uint64_t slot = rng() % o.seen;
                    if (slot < kSamples) o.sample[slot] = p[i];
                }
            }
        }
    }
    if (options.method == CalibrationMethod::entropy) {
        // The histograms need the largest magnitude, known only now: one more run.
        for (auto& [node, o] : observed) o.histogram.assign(kHistogramBins, 0);
        for (const Batch& batch : batches) {
            const Batch outputs = session.run(batch);
            for (const auto& [node, value] : watched) {
                const auto it = observed.find(node);
                if (it == observed.end() || !(it->second.magnitude() > 0)) continue;
                const Tensor t = watched_value(batch, outputs, value);
                Observed& o = it->second;
                const double per_bin = double(kHistogramBins) / o.magnitude();
                const float* p = t.data<float>();
                for (int64_t i = 0, count = t.numel(); i < count; ++i)
                    if (std::isfinite(p[i]))
                        ++o.histogram[std::min(kHistogramBins - 1, static_cast<size_t>(std::fabs(p[i]) * per_bin))];
            }
        }
    }
    Calibration calibration;
    for (auto& [node, o] : observed) {
        ActivationRange range{o.low, o.high};
        if (options.method == CalibrationMethod::entropy && o.magnitude() > 0) {
            // u8 quantization puts 255 steps over the range: all on the magnitudes of values that
            // are never negative, about half on each side otherwise.
            const size_t levels = o.low >= 0 ? 255 : 128;
            const size_t bins = entropy_bound(o.histogram, levels);
            const float bound = o.magnitude() * static_cast<float>(bins) / static_cast<float>(kHistogramBins);
            range.low = std::max(range.low, -bound);
            range.high = std::min(range.high, bound);
        }
        if (options.method == CalibrationMethod::percentile && !o.sample.empty()) {
            // The magnitude below which `percentile` per cent of the values lie bounds both sides.
            std::vector<float> magnitudes(o.sample.size());
            std::transform(o.sample.begin(), o.sample.end(), magnitudes.begin(), [](float v) { return std::fabs(v); });
            const size_t index = std::min(magnitudes.size() - 1,
                                          static_cast<size_t>(options.percentile / 100.0 * double(magnitudes.size())));
            std::nth_element(magnitudes.begin(), magnitudes.begin() + static_cast<std::ptrdiff_t>(index), magnitudes.end());
            const float bound = magnitudes[index];
            range.low = std::max(range.low, -bound);
            range.high = std::min(range.high, bound);
        }
        calibration.ranges[node] = range;
    }
    // The per-layer report: each input quantized with its range, against itself.
    std::map<std::string, std::pair<double, double>> error_and_norm;
    for (const Batch& batch : batches) {
        const Batch outputs = session.run(batch);
        for (const auto& [node, value] : watched) {
            const auto it = calibration.ranges.find(node);
            if (it == calibration.ranges.end()) continue;
            const Tensor t = watched_value(batch, outputs, value);
            const float low = it->second.low, high = it->second.high;
            const double scale = high > low ? (double(high) - low) / 255.0 : 1.0;
            const double zero = std::nearbyint(-low / scale);
            auto& [error, norm] = error_and_norm[node];
            const float* p = t.data<float>();
            for (int64_t i = 0, count = t.numel(); i < count; ++i) {
                if (!std::isfinite(p[i])) continue;
                const double q = std::clamp(std::nearbyint(p[i] / scale) + zero, 0.0, 255.0);
                const double back = (q - zero) * scale;
                error += (back - p[i]) * (back - p[i]);
                norm += double(p[i]) * p[i];
            }
        }
    }
    for (auto& [node, range] : calibration.ranges) {
        const auto [error, norm] = error_and_norm[node];
        range.error = norm > 0 ? std::sqrt(error / norm) : 0.0;
        range.dynamic = range.error > options.max_error;
    }
    return calibration;
}

void Calibration::save(const std::string& path) const {
    nlohmann::json ranges_json = nlohmann::json::object();
    for (const auto& [node, range] : ranges)
        ranges_json[node] = {{"low", range.low}, {"high", range.high}, {"error", range.error}, {"dynamic", range.dynamic}};
    std::ofstream out(path);
    out << nlohmann::json{{"format", kFormat}, {"ranges", ranges_json}}.dump(1) << "\n";
    if (!out) throw InvalidArgument("calibration: cannot write " + path);
}

Calibration Calibration::load(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InvalidArgument("calibration: cannot read " + path);
    Calibration calibration;
    try {
        const nlohmann::json doc = nlohmann::json::parse(in);
        if (doc.value("format", "") != kFormat)
            throw InvalidArgument("calibration: " + path + " is not an " + kFormat + " document");
        for (const auto& [node, range] : doc.at("ranges").items()) {
            const float low = range.at("low").get<float>(), high = range.at("high").get<float>();
            if (!(low <= 0 && 0 <= high))
                throw InvalidArgument("calibration: " + path + ": the range of '" + node + "' must hold 0");
            calibration.ranges[node] = {low, high, range.value("error", 0.0), range.value("dynamic", false)};
        }
    } catch (const nlohmann::json::exception& e) {
        throw InvalidArgument("calibration: " + path + " is not a calibration document: " + e.what());
    }
    return calibration;
}

}  // namespace infer
