#include <infer/advice.hpp>
#include <infer/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace infer {

namespace {
std::string format_ms(double ms) {
    char text[32];
    std::snprintf(text, sizeof text, ms < 10 ? "%.2f ms" : ms < 100 ? "%.1f ms" : "%.0f ms", ms);
    return text;
}
}  // namespace

DeviceAdvisor::DeviceAdvisor(std::vector<ProfilePoint> points) {
    for (auto& p : points) add(std::move(p));
}

void DeviceAdvisor::add(ProfilePoint point) {
    if (point.batch < 1 || !(point.latency_ms > 0))
        throw InvalidArgument("DeviceAdvisor: '" + point.config + "' needs batch >= 1 and a positive latency");
    points_.push_back(std::move(point));
}

std::vector<std::string> DeviceAdvisor::configs(bool accelerator) const {
    std::vector<std::string> names;
    for (const auto& p : points_)
        if (p.device.is_cpu() != accelerator && std::find(names.begin(), names.end(), p.config) == names.end())
            names.push_back(p.config);
    return names;
}

std::vector<int64_t> DeviceAdvisor::batches() const {
    std::set<int64_t> all;
    for (const auto& p : points_) all.insert(p.batch);
    return {all.begin(), all.end()};
}

double DeviceAdvisor::expected_latency(const std::string& config, int64_t batch) const {
    std::vector<const ProfilePoint*> mine;
    for (const auto& p : points_)
        if (p.config == config) mine.push_back(&p);
    std::sort(mine.begin(), mine.end(), [](auto* a, auto* b) { return a->batch < b->batch; });
    if (batch <= mine.front()->batch) return mine.front()->latency_ms;
    if (batch >= mine.back()->batch)
        return mine.back()->latency_ms * static_cast<double>(batch) / static_cast<double>(mine.back()->batch);
    for (size_t i = 1; i < mine.size(); ++i) {
        if (batch > mine[i]->batch) continue;
        const double x0 = std::log(static_cast<double>(mine[i - 1]->batch)), x1 = std::log(static_cast<double>(mine[i]->batch));
        const double y0 = std::log(mine[i - 1]->latency_ms), y1 = std::log(mine[i]->latency_ms);
        const double t = x1 > x0 ? (std::log(static_cast<double>(batch)) - x0) / (x1 - x0) : 0.0;
        return std::exp(y0 + t * (y1 - y0));
    }
    return mine.back()->latency_ms;
}

Advice DeviceAdvisor::advise(int64_t batch) const {
    if (points_.empty()) throw InvalidArgument("DeviceAdvisor: no measurements to advise from");
    if (batch < 1) throw InvalidArgument("DeviceAdvisor: batch must be >= 1, got " + std::to_string(batch));
    const auto best_of = [&](bool accelerator) {
        std::pair<std::string, double> best{"", std::numeric_limits<double>::infinity()};
        for (const auto& name : configs(accelerator)) {
            const double ms = expected_latency(name, batch);
            if (ms < best.second) best = {name, ms};
        }
        return best;
    };
    const auto cpu = best_of(false), accelerator = best_of(true);
    const bool pick_accelerator = accelerator.second < cpu.second;
    const auto& chosen = pick_accelerator ? accelerator : cpu;
    const auto& other = pick_accelerator ? cpu : accelerator;
    Advice advice;
    advice.config = chosen.first;
    for (const auto& p : points_)
        if (p.config == chosen.first) advice.device = p.device;
    advice.latency_ms = chosen.second;
    advice.throughput_per_s = 1000.0 * static_cast<double>(batch) / chosen.second;
    if (!other.first.empty()) {
        advice.alternative = other.first;
        advice.alternative_latency_ms = other.second;
    }
    return advice;
}

std::optional<int64_t> DeviceAdvisor::latency_crossover() const {
    if (configs(false).empty() || configs(true).empty()) return std::nullopt;
    for (int64_t batch : batches()) {
        double cpu = std::numeric_limits<double>::infinity(), accelerator = cpu;
        for (const auto& p : points_) {
            if (p.batch != batch) continue;
            double& best = p.device.is_cpu() ? cpu : accelerator;
            best = std::min(best, p.latency_ms);
        }
        if (std::isfinite(cpu) && accelerator < cpu) return batch;
    }
    return std::nullopt;
}

std::optional<int64_t> DeviceAdvisor::throughput_crossover() const {
    double best_cpu = 0;
    bool any_accelerator = false;
    for (const auto& p : points_) {
        if (p.device.is_cpu()) best_cpu = std::max(best_cpu, static_cast<double>(p.batch) / p.latency_ms);
        else any_accelerator = true;
    }
    if (best_cpu == 0 || !any_accelerator) return std::nullopt;
    for (int64_t batch : batches())
        for (const auto& p : points_)
            if (p.batch == batch && !p.device.is_cpu() && static_cast<double>(p.batch) / p.latency_ms > best_cpu)
                return batch;
    return std::nullopt;
}

std::string DeviceAdvisor::recommendation() const {
    if (points_.empty()) return "nothing was measured";
    struct Range {
        int64_t first, last;
        Advice advice;  // at `first`
    };
    std::vector<Range> ranges;
    for (int64_t batch : batches()) {
        Advice a = advise(batch);
        if (!ranges.empty() && ranges.back().advice.config == a.config) ranges.back().last = batch;
        else ranges.push_back({batch, batch, std::move(a)});
    }
    std::string text;
    for (const Range& r : ranges) {
        if (!text.empty()) text += "; ";
        text += r.first == r.last ? "batch " + std::to_string(r.first)
                                  : "batch " + std::to_string(r.first) + "–" + std::to_string(r.last);
        text += ": " + r.advice.config + " (" + format_ms(r.advice.latency_ms);
        if (r.advice.alternative)
            text += " vs " + format_ms(r.advice.alternative_latency_ms) + " on " + *r.advice.alternative;
        text += r.first == r.last ? ")" : " at batch " + std::to_string(r.first) + ")";
    }
    if (configs(true).empty()) text += " (no accelerator measured)";
    return text;
}

}  // namespace infer
