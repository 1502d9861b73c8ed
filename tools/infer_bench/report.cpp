#include "report.hpp"

#include "svg_chart.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

namespace infer::bench {
namespace {

using nlohmann::json;

// Distinct on white and on each other; the CPU series, listed first, gets blue.
constexpr std::array<const char*, 10> kSeriesColours{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                                      "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
constexpr std::array<const char*, 3> kBreakdownKeys{"h2d", "compute", "d2h"};
const std::vector<std::string> kBreakdownLabels{"host→device copy", "compute", "device→host copy"};
const std::vector<std::string> kBreakdownColours{"#f0a030", "#4e79a7", "#59a14f"};
constexpr std::string_view kDash = "&mdash;";

constexpr std::string_view kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 24px auto; max-width: 1200px; padding: 0 16px; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 4px; }
h2 { font-size: 1.25em; margin-top: 32px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.machine, .settings { color: #555; margin: 2px 0; }
.recommendation { font-size: 1.25em; background: #eef6ee; border-left: 6px solid #3a8a3a;
                  padding: 12px 16px; margin: 16px 0; }
.caption { color: #555; font-size: 0.9em; margin: 4px 0 16px; }
.chart { max-width: 100%; height: auto; display: block; }
.chart text { font-size: 12px; fill: #333; }
.chart .chart-title { font-size: 14px; font-weight: bold; }
.chart .plot { fill: #fcfcfc; stroke: #ccc; }
.chart .grid { stroke: #e4e4e4; }
.chart .axis { stroke: #666; }
.chart .marker { stroke: #444; stroke-width: 1.5; stroke-dasharray: 6 4; }
.chart .marker-label { font-weight: bold; }
.chart .bar-total { font-size: 10px; }
.breakdowns { display: flex; flex-wrap: wrap; gap: 8px; }
.breakdowns .chart { width: 560px; }
.table-scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85em; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; }
td.text, th.text { text-align: left; }
td.better { background: #e3f4e3; }
td.worse { background: #fbe6e6; }
)";

// The member `key` of `object` when `object` is an object holding it and it is not null.
const json* member(const json& object, std::string_view key) {
    if (!object.is_object()) return nullptr;
    const auto found = object.find(key);
    if (found == object.end() || found->is_null()) return nullptr;
    return &*found;
}

std::optional<double> number(const json& object, std::string_view key) {
    const json* value = member(object, key);
    if (value == nullptr || !value->is_number()) return std::nullopt;
    return value->get<double>();
}

// The member as display text: strings as they are, other values as JSON; `fallback` when absent.
std::string text(const json& object, std::string_view key, std::string_view fallback = "") {
    const json* value = member(object, key);
    if (value == nullptr) return std::string(fallback);
    return value->is_string() ? value->get<std::string>() : value->dump();
}

const json& empty_object() {
    static const json empty = json::object();
    return empty;
}

const json& child(const json& object, std::string_view key) {
    const json* value = member(object, key);
    return value != nullptr ? *value : empty_object();
}

std::vector<const json*> array_items(const json& object, std::string_view key) {
    std::vector<const json*> items;
    const json* array = member(object, key);
    if (array != nullptr && array->is_array())
        for (const json& item : *array) items.push_back(&item);
    return items;
}

std::string format_fixed(double value, int decimals) {
    char formatted[48];
    std::snprintf(formatted, sizeof formatted, "%.*f", decimals, value);
    return formatted;
}

// Milliseconds with three significant digits at least, so that 0.0123 ms stays visible.
std::string format_ms(double value) {
    return format_fixed(value, value >= 100 ? 1 : value >= 1 ? 3 : 4);
}

std::string cell(const std::optional<double>& value, std::string (*format)(double)) {
    return value ? format(*value) : std::string(kDash);
}

std::string format_count(double value) { return format_fixed(value, 0); }
std::string format_rate(double value) { return format_fixed(value, value >= 100 ? 0 : 1); }
std::string format_mib(double bytes) { return format_fixed(bytes / (1024.0 * 1024.0), 1); }
std::string format_percent(double fraction) { return format_fixed(fraction * 100, 1); }
std::string format_ratio(double ratio) { return format_fixed(ratio, 2); }
std::string format_error(double relative) {
    char formatted[32];
    std::snprintf(formatted, sizeof formatted, "%.1e", relative);
    return formatted;
}
std::string format_cosine(double cosine) { return format_fixed(cosine, 5); }

// "cpu f32" or "cuda:0 f16 pinned": how infer-bench's crossover and recommendation name a series.
std::string series_label(const json& measurement) {
    std::string label = text(measurement, "device", "?") + " " + text(measurement, "precision", "?");
    if (const json* host_memory = member(measurement, "host_memory"); host_memory && host_memory->is_string())
        label += " " + host_memory->get<std::string>();
    return label;
}

bool on_gpu(const json& measurement) {
    return member(measurement, "host_memory") != nullptr || text(measurement, "device").rfind("cuda", 0) == 0;
}

// The measurements of one (device, precision, host memory), by ascending batch.
struct Series {
    std::string label;
    std::string colour;
    bool gpu = false;
    std::vector<const json*> rows;
};

std::vector<Series> collect_series(const json& doc) {
    std::vector<Series> all;
    for (const json* measurement : array_items(doc, "measurements")) {
        if (!number(*measurement, "batch")) continue;
        const std::string label = series_label(*measurement);
        auto found = std::find_if(all.begin(), all.end(), [&](const Series& s) { return s.label == label; });
        if (found == all.end()) {
            all.push_back({label, "", on_gpu(*measurement), {}});
            found = std::prev(all.end());
        }
        found->rows.push_back(measurement);
    }
    std::stable_partition(all.begin(), all.end(), [](const Series& s) { return !s.gpu; });
    for (std::size_t i = 0; i < all.size(); ++i) {
        all[i].colour = kSeriesColours[i % kSeriesColours.size()];
        std::stable_sort(all[i].rows.begin(), all[i].rows.end(), [](const json* a, const json* b) {
            return *number(*a, "batch") < *number(*b, "batch");
        });
    }
    return all;
}

std::string render_header(const json& doc) {
    const json& model = child(doc, "model");
    const json& machine = child(doc, "machine");
    std::ostringstream html;
    html << "<h1>infer-bench: " << escape_html(text(model, "name", "unnamed model"));
    if (auto sequence = number(model, "sequence")) html << ", sequence " << format_count(*sequence);
    html << "</h1>\n<p class=\"machine\">CPU: " << escape_html(text(machine, "cpu_model", "unknown CPU"));
    if (auto cores = number(machine, "cpu_cores")) html << " (" << format_count(*cores) << " cores)";
    if (machine.contains("cpu_blas")) html << "; matrix products: " << escape_html(text(machine, "cpu_blas", ""));
    html << "</p>\n";
    const std::vector<const json*> gpus = array_items(machine, "gpus");
    if (gpus.empty()) html << "<p class=\"machine\">GPU: no GPU present</p>\n";
    for (const json* gpu : gpus) {
        html << "<p class=\"machine\">GPU: " << escape_html(text(*gpu, "name", "unknown GPU"));
        if (member(*gpu, "driver")) html << ", driver " << escape_html(text(*gpu, "driver"));
        if (auto bytes = number(*gpu, "memory_bytes"))
            html << ", " << format_fixed(*bytes / (1024.0 * 1024.0 * 1024.0), 1) << " GiB";
        if (member(*gpu, "compute_capability"))
            html << ", compute capability " << escape_html(text(*gpu, "compute_capability"));
        html << "</p>\n";
    }
    const json& library = child(doc, "library");
    html << "<p class=\"machine\">Model file: " << escape_html(text(model, "path", "unknown")) << " &middot; "
         << escape_html(text(library, "name", "infer")) << ' ' << escape_html(text(library, "version")) << "</p>\n";
    return html.str();
}

std::string render_settings(const json& doc) {
    const json& settings = child(doc, "settings");
    std::ostringstream html;
    html << "<p class=\"settings\">Each figure: " << escape_html(text(settings, "warmup", "?"))
         << " warm-up runs, then runs repeated for at least " << escape_html(text(settings, "min_time_s", "?"))
         << " s and " << escape_html(text(settings, "min_runs", "?")) << " runs; CPU threads: ";
    const std::optional<double> threads = number(settings, "threads");
    html << (threads && *threads > 0 ? format_count(*threads) : std::string("all cores")) << ".</p>\n";
    return html.str();
}

std::string render_recommendation(const json& doc) {
    return "<p class=\"recommendation\"><strong>Recommendation:</strong> " +
           escape_html(text(doc, "recommendation", "none given")) + "</p>\n";
}

std::string render_notes(const json& doc) {
    const std::vector<const json*> notes = array_items(doc, "notes");
    if (notes.empty()) return "";
    std::string html = "<h2>Notes</h2>\n<ul>\n";
    for (const json* note : notes)
        html += "<li>" + escape_html(note->is_string() ? note->get<std::string>() : note->dump()) + "</li>\n";
    return html + "</ul>\n";
}

// The crossover of one kind ("latency" or "throughput"): a chart marker when it has a batch, and
// a sentence saying what the marker compares, or that there is none.
struct Crossover {
    std::optional<Marker> marker;
    std::string caption;
};

Crossover find_crossover(const json& doc, std::string_view kind) {
    const json& crossover = child(child(doc, "crossover"), kind);
    if (crossover.empty()) return {};
    const std::string between = escape_html(text(crossover, "cpu", "the CPU")) + " and " +
                                escape_html(text(crossover, "gpu", "the GPU"));
    const std::optional<double> batch = number(crossover, "batch");
    if (!batch) return {std::nullopt, "No " + std::string(kind) + " crossover between " + between +
                                          " within the measured batches."};
    return {Marker{*batch, "crossover: batch " + format_count(*batch)},
            "Dashed line: the " + std::string(kind) + " crossover between " + between + " at batch " +
                format_count(*batch) + "."};
}

// Median latency or throughput (`key` inside `group`, or a top-level `key` when `group` is empty).
std::string render_metric_chart(const std::vector<Series>& all, const json& doc, std::string_view kind,
                                LineChart chart, std::string_view group, std::string_view key) {
    for (const Series& series : all) {
        LineSeries line{series.label, series.colour, {}};
        for (const json* row : series.rows) {
            const json& holder = group.empty() ? *row : child(*row, group);
            const double batch = *number(*row, "batch");
            const std::optional<double> value = number(holder, key);
            if (value && *value > 0 && batch > 0) line.points.push_back({batch, *value});
        }
        chart.series.push_back(std::move(line));
    }
    const Crossover crossover = find_crossover(doc, kind);
    chart.marker = crossover.marker;
    std::string html = render_line_chart(chart);
    if (!crossover.caption.empty()) html += "<p class=\"caption\">" + crossover.caption + "</p>\n";
    return html;
}

std::string render_breakdown_charts(const std::vector<Series>& all) {
    std::string charts;
    for (const Series& series : all) {
        if (!series.gpu) continue;
        StackedBarChart chart{"Where the time goes: " + series.label, "median ms", kBreakdownLabels,
                              kBreakdownColours, {}};
        for (const json* row : series.rows) {
            const json& breakdown = child(*row, "breakdown_ms");
            if (breakdown.empty()) continue;
            StackedBar bar{format_count(*number(*row, "batch")), {}};
            for (const char* key : kBreakdownKeys) bar.parts.push_back(number(breakdown, key).value_or(0));
            chart.bars.push_back(std::move(bar));
        }
        if (!chart.bars.empty()) charts += render_stacked_bar_chart(chart);
    }
    if (charts.empty()) return "";
    return "<h2>GPU time by phase</h2>\n<p class=\"caption\">Each bar splits one batch's run into the copy of the "
           "inputs to the device, the compute, and the copy of the outputs back to the host.</p>\n"
           "<div class=\"breakdowns\">\n" + charts + "</div>\n";
}

// A table cell: its HTML and, where it needs one, a CSS class (left-aligned text, shading).
struct Cell {
    Cell(std::string html_, std::string_view css_class_ = "") : html(std::move(html_)), css_class(css_class_) {}
    std::string html;
    std::string_view css_class;
};

std::string render_row(const std::vector<Cell>& cells) {
    std::string row = "<tr>";
    for (const Cell& c : cells)
        row += (c.css_class.empty() ? std::string("<td>") : "<td class=\"" + std::string(c.css_class) + "\">") +
               c.html + "</td>";
    return row + "</tr>\n";
}

std::string render_header_row(const std::vector<std::string_view>& names, std::size_t text_columns) {
    std::string row = "<tr>";
    for (std::size_t i = 0; i < names.size(); ++i)
        row += (i < text_columns ? "<th class=\"text\">" : "<th>") + std::string(names[i]) + "</th>";
    return row + "</tr>\n";
}

Cell text_cell(const json& object, std::string_view key) {
    const json* value = member(object, key);
    return {value ? escape_html(text(object, key)) : std::string(kDash), "text"};
}

std::string render_measurements_table(const json& doc) {
    const std::vector<const json*> measurements = array_items(doc, "measurements");
    if (measurements.empty()) return "<h2>Measurements</h2>\n<p>The document holds no measurements.</p>\n";
    std::string html = "<h2>Measurements</h2>\n<div class=\"table-scroll\">\n<table class=\"measurements\">\n" +
                       render_header_row({"device", "precision", "host memory", "batch", "runs", "min ms", "median ms",
                                          "p90 ms", "p99 ms", "mean ms", "items/s", "h2d ms", "compute ms",
                                          "d2h ms", "cold start ms", "weights MiB", "activations MiB",
                                          "workspace MiB", "GPU busy %", "fallback nodes", "rel. error vs f32",
                                          "cosine vs f32", "argmax agreement"},
                                         3);
    for (const json* row : measurements) {
        const json& latency = child(*row, "latency_ms");
        const json& breakdown = child(*row, "breakdown_ms");
        const json& memory = child(*row, "memory_bytes");
        const json& accuracy = child(*row, "accuracy_vs_f32");
        html += render_row({text_cell(*row, "device"), text_cell(*row, "precision"), text_cell(*row, "host_memory"),
                            cell(number(*row, "batch"), format_count), cell(number(*row, "runs"), format_count),
                            cell(number(latency, "min"), format_ms), cell(number(latency, "median"), format_ms),
                            cell(number(latency, "p90"), format_ms), cell(number(latency, "p99"), format_ms),
                            cell(number(latency, "mean"), format_ms),
                            cell(number(*row, "throughput_per_s"), format_rate),
                            cell(number(breakdown, "h2d"), format_ms), cell(number(breakdown, "compute"), format_ms),
                            cell(number(breakdown, "d2h"), format_ms), cell(number(*row, "cold_start_ms"), format_ms),
                            cell(number(memory, "weights"), format_mib),
                            cell(number(memory, "activations"), format_mib),
                            cell(number(memory, "workspace"), format_mib),
                            cell(number(*row, "gpu_busy_fraction"), format_percent),
                            cell(number(*row, "fallback_nodes"), format_count),
                            cell(number(accuracy, "relative_error"), format_error),
                            cell(number(accuracy, "least_cosine"), format_cosine),
                            cell(number(accuracy, "argmax_agreement"), format_percent)});
    }
    return html + "</table>\n</div>\n";
}

bool same_configuration(const json& a, const json& b) {
    return text(a, "device") == text(b, "device") && text(a, "precision") == text(b, "precision") &&
           number(a, "batch") == number(b, "batch") && text(a, "host_memory") == text(b, "host_memory");
}

std::optional<double> infer_median_for(const json& doc, const json& peer) {
    for (const json* measurement : array_items(doc, "measurements"))
        if (same_configuration(*measurement, peer)) return number(child(*measurement, "latency_ms"), "median");
    return std::nullopt;
}

// A ratio cell shaded green where infer does better: a latency ratio below one, a throughput ratio above.
Cell ratio_cell(const std::optional<double>& ratio, bool higher_is_better) {
    if (!ratio) return {std::string(kDash)};
    const bool better = higher_is_better ? *ratio > 1 : *ratio < 1;
    return {format_ratio(*ratio), better ? "better" : "worse"};
}

// Who ran the point of `peer` fastest (lowest median): "infer" or a peer's name, marked green
// when it is infer.
Cell fastest_cell(const json& doc, const json& peer) {
    std::string name = "infer";
    std::optional<double> best = infer_median_for(doc, peer);
    for (const json* other : array_items(doc, "peers")) {
        if (!same_configuration(*other, peer)) continue;
        const std::optional<double> median = number(child(*other, "latency_ms"), "median");
        if (median && (!best || *median < *best)) best = median, name = text(*other, "peer");
    }
    return {escape_html(name), name == "infer" ? "better" : "worse"};
}

std::string render_peers_table(const json& doc) {
    const std::vector<const json*> peers = array_items(doc, "peers");
    if (peers.empty()) return "";
    std::string html =
        "<h2>Peers</h2>\n<p class=\"caption\">The same model, inputs and timing rules in another runtime on the same "
        "machine, in the same run. Latency ratio = infer median / peer median (below 1: infer is faster); "
        "throughput ratio = infer / peer (above 1: infer is faster); fastest: the lowest median at that point, "
        "infer's or any peer's.</p>\n"
        "<div class=\"table-scroll\">\n<table class=\"peers\">\n" +
        render_header_row({"peer", "device", "precision", "host memory", "batch", "runs", "peer median ms",
                           "peer p90 ms", "peer p99 ms", "peer items/s", "infer median ms", "latency ratio",
                           "throughput ratio", "fastest"},
                          4);
    for (const json* peer : peers) {
        const json& latency = child(*peer, "latency_ms");
        const std::optional<double> latency_ratio = number(*peer, "infer_latency_ratio");
        const std::optional<double> throughput_ratio = number(*peer, "infer_throughput_ratio");
        html += render_row(
            {text_cell(*peer, "peer"), text_cell(*peer, "device"), text_cell(*peer, "precision"),
             text_cell(*peer, "host_memory"), cell(number(*peer, "batch"), format_count),
             cell(number(*peer, "runs"), format_count), cell(number(latency, "median"), format_ms),
             cell(number(latency, "p90"), format_ms), cell(number(latency, "p99"), format_ms),
             cell(number(*peer, "throughput_per_s"), format_rate), cell(infer_median_for(doc, *peer), format_ms),
             ratio_cell(latency_ratio, false), ratio_cell(throughput_ratio, true), fastest_cell(doc, *peer)});
    }
    return html + "</table>\n</div>\n";
}

}  // namespace

std::string render_html_report(const json& doc) {
    const std::vector<Series> series = collect_series(doc);
    const std::string model_name = escape_html(text(child(doc, "model"), "name", "unnamed model"));
    std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>infer-bench: " +
                       model_name + "</title>\n<style>" + std::string(kStyle) + "</style>\n</head>\n<body>\n";
    html += render_header(doc);
    html += render_recommendation(doc);
    html += render_settings(doc);
    html += render_notes(doc);
    html += "<h2>Latency and throughput</h2>\n";
    html += render_metric_chart(series, doc, "latency",
                                {"Median latency by batch", "batch (log2)", "median latency, ms (log)", "ms", {}, {}},
                                "latency_ms", "median");
    html += render_metric_chart(series, doc, "throughput",
                                {"Throughput by batch", "batch (log2)", "items per second (log)", "items/s", {}, {}},
                                "", "throughput_per_s");
    html += render_breakdown_charts(series);
    html += render_measurements_table(doc);
    html += render_peers_table(doc);
    return html + "</body>\n</html>\n";
}

}  // namespace infer::bench
