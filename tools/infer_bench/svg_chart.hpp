#pragma once
// Inline SVG charts for infer-bench's HTML report: a line chart on log2(x)/log10(y) axes and a
// stacked bar chart on a linear axis. Drawn as plain SVG text so that the report needs no
// script and no network to show them. Knows nothing about the benchmark's JSON.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace infer::bench {

// Escapes text for HTML element content and quoted attribute values.
std::string escape_html(std::string_view text);

struct Point {
    double x;
    double y;
};

struct LineSeries {
    std::string label;
    std::string colour;  // "#rrggbb"
    std::vector<Point> points;  // x ascending; every x and y positive
};

// A vertical dashed marker at one x, e.g. the batch where the GPU overtakes the CPU.
struct Marker {
    double x;
    std::string label;
};

struct LineChart {
    std::string title;
    std::string x_label;
    std::string y_label;
    std::string y_unit;  // for the tooltips: "ms", "items/s"
    std::vector<LineSeries> series;
    std::optional<Marker> marker;
};

// x on a log2 axis (batch sizes), y on a log10 axis; a legend on the right.
std::string render_line_chart(const LineChart& chart);

struct StackedBar {
    std::string category;        // the label under the bar, e.g. "8"
    std::vector<double> parts;   // one value per StackedBarChart::part_labels, bottom first
};

struct StackedBarChart {
    std::string title;
    std::string y_label;
    std::vector<std::string> part_labels;
    std::vector<std::string> part_colours;
    std::vector<StackedBar> bars;
};

// One bar per category on a linear y axis starting at zero, with each bar's total above it.
std::string render_stacked_bar_chart(const StackedBarChart& chart);

}  // namespace infer::bench
