#include "svg_chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>

namespace infer::bench {
namespace {

// Where the plot sits inside a chart's SVG, in SVG user units.
struct Frame {
    double width;
    double height;
    double left;
    double top;
    double right;
    double bottom;
};

// The line charts keep the right-hand side for the legend.
constexpr Frame kLineFrame{900, 380, 76, 40, 690, 326};
constexpr Frame kBarFrame{560, 300, 64, 56, 544, 252};
// Space between the plot's edge and the first and last batch, so that markers are not clipped.
constexpr double kLineInset = 14;

std::string format_tick(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", value);
    return text;
}

// Enough digits for a milliseconds or items-per-second figure, and no more.
std::string format_value(double value) {
    const double magnitude = std::abs(value);
    const char* format = magnitude >= 100 ? "%.0f" : magnitude >= 10 ? "%.1f" : magnitude >= 1 ? "%.2f" : "%.3g";
    char text[32];
    std::snprintf(text, sizeof text, format, value);
    return text;
}

std::string coordinate(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", value);
    return text;
}

// A log-scaled axis mapping [low, high] (both positive) to pixels [from, to].
struct LogScale {
    double log_low;
    double log_high;
    double from;
    double to;

    double operator()(double value) const {
        const double fraction = (std::log(value) - log_low) / (log_high - log_low);
        return from + fraction * (to - from);
    }
};

LogScale log_scale(double low, double high, double from, double to) {
    return {std::log(low), std::log(high), from, to};
}

// The largest value of the 1-2-5 sequence at or below `value` (or, going up, at or above it).
double round_to_125(double value, bool up) {
    const double decade = std::pow(10.0, std::floor(std::log10(value)));
    constexpr std::array<double, 4> steps{1, 2, 5, 10};
    if (up) {
        for (double step : steps)
            if (step * decade >= value * (1 - 1e-9)) return step * decade;
        return 10 * decade;
    }
    for (auto step = steps.rbegin(); step != steps.rend(); ++step)
        if (*step * decade <= value * (1 + 1e-9)) return *step * decade;
    return decade;
}

// Ticks for a log10 axis: 1-2-5 steps while they stay few, decades otherwise.
std::vector<double> log10_ticks(double low, double high) {
    std::vector<double> ticks;
    for (double decade = std::pow(10.0, std::floor(std::log10(low))); decade <= high * (1 + 1e-9); decade *= 10)
        for (double step : {1.0, 2.0, 5.0}) {
            const double tick = step * decade;
            if (tick >= low * (1 - 1e-9) && tick <= high * (1 + 1e-9)) ticks.push_back(tick);
        }
    if (ticks.size() <= 12) return ticks;
    std::erase_if(ticks, [](double tick) {
        const double mantissa = tick / std::pow(10.0, std::floor(std::log10(tick) + 1e-9));
        return std::abs(mantissa - 1) > 1e-6;
    });
    return ticks;
}

std::vector<double> log2_ticks(double low, double high) {
    std::vector<double> ticks;
    for (double tick = std::exp2(std::ceil(std::log2(low) - 1e-9)); tick <= high * (1 + 1e-9); tick *= 2)
        ticks.push_back(tick);
    return ticks;
}

// A step of the 1-2-5 sequence that cuts [0, high] into about five intervals.
double linear_step(double high) {
    return round_to_125(high / 5, true);
}

void draw_title(std::ostringstream& svg, const Frame& frame, const std::string& title) {
    svg << "<text class=\"chart-title\" x=\"" << coordinate(frame.width / 2) << "\" y=\"20\" text-anchor=\"middle\">"
        << escape_html(title) << "</text>\n";
}

// Horizontal grid lines with their labels on the left, and the axis title turned upright.
void draw_y_axis(std::ostringstream& svg, const Frame& frame, const std::vector<double>& ticks,
                 const std::function<double(double)>& to_pixel, const std::string& label) {
    for (double tick : ticks) {
        const std::string y = coordinate(to_pixel(tick));
        svg << "<line class=\"grid\" x1=\"" << frame.left << "\" x2=\"" << frame.right << "\" y1=\"" << y
            << "\" y2=\"" << y << "\"/>\n";
        svg << "<text class=\"tick\" x=\"" << frame.left - 6 << "\" y=\"" << y
            << "\" text-anchor=\"end\" dominant-baseline=\"middle\">" << format_tick(tick) << "</text>\n";
    }
    const std::string middle = coordinate((frame.top + frame.bottom) / 2);
    svg << "<text class=\"axis-label\" x=\"16\" y=\"" << middle
        << "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " << middle << ")\">" << escape_html(label)
        << "</text>\n";
}

// Tick marks and labels under the plot, and the axis title below them.
void draw_x_axis(std::ostringstream& svg, const Frame& frame, const std::vector<std::pair<double, std::string>>& ticks,
                 const std::string& label) {
    svg << "<line class=\"axis\" x1=\"" << frame.left << "\" x2=\"" << frame.right << "\" y1=\"" << frame.bottom
        << "\" y2=\"" << frame.bottom << "\"/>\n";
    for (const auto& [x, text] : ticks) {
        const std::string at = coordinate(x);
        svg << "<line class=\"axis\" x1=\"" << at << "\" x2=\"" << at << "\" y1=\"" << frame.bottom << "\" y2=\""
            << frame.bottom + 5 << "\"/>\n";
        svg << "<text class=\"tick\" x=\"" << at << "\" y=\"" << frame.bottom + 18 << "\" text-anchor=\"middle\">"
            << escape_html(text) << "</text>\n";
    }
    svg << "<text class=\"axis-label\" x=\"" << coordinate((frame.left + frame.right) / 2) << "\" y=\""
        << frame.height - 8 << "\" text-anchor=\"middle\">" << escape_html(label) << "</text>\n";
}

void draw_vertical_legend(std::ostringstream& svg, const Frame& frame, const std::vector<LineSeries>& series) {
    double y = frame.top + 6;
    for (const LineSeries& line : series) {
        svg << "<line x1=\"" << frame.right + 16 << "\" x2=\"" << frame.right + 40 << "\" y1=\"" << y << "\" y2=\"" << y
            << "\" stroke=\"" << escape_html(line.colour) << "\" stroke-width=\"3\"/>\n";
        svg << "<text class=\"legend\" x=\"" << frame.right + 46 << "\" y=\"" << y
            << "\" dominant-baseline=\"middle\">" << escape_html(line.label) << "</text>\n";
        y += 20;
    }
}

void draw_horizontal_legend(std::ostringstream& svg, const Frame& frame, const std::vector<std::string>& labels,
                            const std::vector<std::string>& colours) {
    double x = frame.left;
    const double y = 36;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        svg << "<rect x=\"" << x << "\" y=\"" << y - 6 << "\" width=\"12\" height=\"12\" fill=\""
            << escape_html(colours[i]) << "\"/>\n";
        svg << "<text class=\"legend\" x=\"" << x + 16 << "\" y=\"" << y << "\" dominant-baseline=\"middle\">"
            << escape_html(labels[i]) << "</text>\n";
        x += 24 + 8.0 * static_cast<double>(labels[i].size()) + 16;
    }
}

void draw_line_series(std::ostringstream& svg, const LineSeries& line, const LogScale& x_scale,
                      const LogScale& y_scale, const std::string& y_unit) {
    svg << "<polyline class=\"series\" fill=\"none\" stroke=\"" << escape_html(line.colour)
        << "\" stroke-width=\"2\" points=\"";
    for (const Point& point : line.points)
        svg << coordinate(x_scale(point.x)) << ',' << coordinate(y_scale(point.y)) << ' ';
    svg << "\"><title>" << escape_html(line.label) << "</title></polyline>\n";
    for (const Point& point : line.points)
        svg << "<circle cx=\"" << coordinate(x_scale(point.x)) << "\" cy=\"" << coordinate(y_scale(point.y))
            << "\" r=\"3.5\" fill=\"" << escape_html(line.colour) << "\"><title>" << escape_html(line.label)
            << ", batch " << format_tick(point.x) << ": " << format_value(point.y) << ' ' << escape_html(y_unit)
            << "</title></circle>\n";
}

// The dashed vertical line, labelled on whichever side of it has room.
void draw_marker(std::ostringstream& svg, const Frame& frame, const Marker& marker, const LogScale& x_scale) {
    const double x = x_scale(marker.x);
    const bool label_on_left = x > (frame.left + frame.right) / 2;
    svg << "<line class=\"marker\" x1=\"" << coordinate(x) << "\" x2=\"" << coordinate(x) << "\" y1=\"" << frame.top
        << "\" y2=\"" << frame.bottom << "\"/>\n";
    svg << "<text class=\"marker-label\" x=\"" << coordinate(label_on_left ? x - 6 : x + 6) << "\" y=\""
        << frame.top + 14 << "\" text-anchor=\"" << (label_on_left ? "end" : "start") << "\">"
        << escape_html(marker.label) << "</text>\n";
}

void open_svg(std::ostringstream& svg, const Frame& frame, const std::string& title) {
    svg << "<svg class=\"chart\" viewBox=\"0 0 " << frame.width << ' ' << frame.height << "\" width=\"" << frame.width
        << "\" height=\"" << frame.height << "\" role=\"img\" aria-label=\"" << escape_html(title) << "\">\n";
    svg << "<rect class=\"plot\" x=\"" << frame.left << "\" y=\"" << frame.top << "\" width=\""
        << frame.right - frame.left << "\" height=\"" << frame.bottom - frame.top << "\"/>\n";
    draw_title(svg, frame, title);
}

std::string empty_chart(const Frame& frame, const std::string& title) {
    std::ostringstream svg;
    open_svg(svg, frame, title);
    svg << "<text class=\"tick\" x=\"" << coordinate((frame.left + frame.right) / 2) << "\" y=\""
        << coordinate((frame.top + frame.bottom) / 2) << "\" text-anchor=\"middle\">no data</text>\n</svg>\n";
    return svg.str();
}

}  // namespace

std::string escape_html(std::string_view text) {
    std::string escaped;
    escaped.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': escaped += "&amp;"; break;
            case '<': escaped += "&lt;"; break;
            case '>': escaped += "&gt;"; break;
            case '"': escaped += "&quot;"; break;
            case '\'': escaped += "&#39;"; break;
            default: escaped += c;
        }
    }
    return escaped;
}

std::string render_line_chart(const LineChart& chart) {
    const Frame& frame = kLineFrame;
    double x_low = INFINITY, x_high = 0, y_low = INFINITY, y_high = 0;
    for (const LineSeries& line : chart.series)
        for (const Point& point : line.points) {
            x_low = std::min(x_low, point.x);
            x_high = std::max(x_high, point.x);
            y_low = std::min(y_low, point.y);
            y_high = std::max(y_high, point.y);
        }
    if (x_high <= 0 || y_high <= 0) return empty_chart(frame, chart.title);
    // Whole powers of two on x and 1-2-5 values on y, so that the axis ends on a labelled tick.
    x_low = std::exp2(std::floor(std::log2(x_low)));
    x_high = std::exp2(std::ceil(std::log2(x_high)));
    if (x_low == x_high) x_high *= 2;
    y_low = round_to_125(y_low, false);
    y_high = round_to_125(y_high, true);
    if (y_low == y_high) y_high = round_to_125(y_high * 1.5, true);

    const LogScale x_scale = log_scale(x_low, x_high, frame.left + kLineInset, frame.right - kLineInset);
    const LogScale y_scale = log_scale(y_low, y_high, frame.bottom, frame.top);

    std::ostringstream svg;
    open_svg(svg, frame, chart.title);
    draw_y_axis(svg, frame, log10_ticks(y_low, y_high), y_scale, chart.y_label);
    std::vector<std::pair<double, std::string>> x_ticks;
    for (double tick : log2_ticks(x_low, x_high)) x_ticks.emplace_back(x_scale(tick), format_tick(tick));
    draw_x_axis(svg, frame, x_ticks, chart.x_label);
    if (chart.marker && chart.marker->x >= x_low && chart.marker->x <= x_high)
        draw_marker(svg, frame, *chart.marker, x_scale);
    for (const LineSeries& line : chart.series)
        if (!line.points.empty()) draw_line_series(svg, line, x_scale, y_scale, chart.y_unit);
    draw_vertical_legend(svg, frame, chart.series);
    svg << "</svg>\n";
    return svg.str();
}

std::string render_stacked_bar_chart(const StackedBarChart& chart) {
    const Frame& frame = kBarFrame;
    if (chart.bars.empty()) return empty_chart(frame, chart.title);
    double highest_total = 0;
    for (const StackedBar& bar : chart.bars) {
        double total = 0;
        for (double part : bar.parts) total += std::max(part, 0.0);
        highest_total = std::max(highest_total, total);
    }
    const double step = highest_total > 0 ? linear_step(highest_total) : 1;
    const double y_high = std::max(step, std::ceil(highest_total / step - 1e-9) * step);
    const auto y_pixel = [&](double value) { return frame.bottom - value / y_high * (frame.bottom - frame.top); };

    std::ostringstream svg;
    open_svg(svg, frame, chart.title);
    std::vector<double> y_ticks;
    for (double tick = 0; tick <= y_high * (1 + 1e-9); tick += step) y_ticks.push_back(tick);
    draw_y_axis(svg, frame, y_ticks, y_pixel, chart.y_label);
    draw_horizontal_legend(svg, frame, chart.part_labels, chart.part_colours);

    const double band = (frame.right - frame.left) / static_cast<double>(chart.bars.size());
    std::vector<std::pair<double, std::string>> x_ticks;
    for (std::size_t i = 0; i < chart.bars.size(); ++i) {
        const StackedBar& bar = chart.bars[i];
        const double centre = frame.left + band * (static_cast<double>(i) + 0.5);
        const double bar_width = band * 0.7;
        double stacked = 0;
        for (std::size_t part = 0; part < bar.parts.size() && part < chart.part_colours.size(); ++part) {
            const double value = std::max(bar.parts[part], 0.0);
            const double top = y_pixel(stacked + value);
            svg << "<rect class=\"bar\" x=\"" << coordinate(centre - bar_width / 2) << "\" y=\"" << coordinate(top)
                << "\" width=\"" << coordinate(bar_width) << "\" height=\"" << coordinate(y_pixel(stacked) - top)
                << "\" fill=\"" << escape_html(chart.part_colours[part]) << "\"><title>"
                << escape_html(chart.part_labels[part]) << ", batch " << escape_html(bar.category) << ": "
                << format_value(value) << "</title></rect>\n";
            stacked += value;
        }
        svg << "<text class=\"bar-total\" x=\"" << coordinate(centre) << "\" y=\"" << coordinate(y_pixel(stacked) - 4)
            << "\" text-anchor=\"middle\">" << format_value(stacked) << "</text>\n";
        x_ticks.emplace_back(centre, bar.category);
    }
    draw_x_axis(svg, frame, x_ticks, "batch");
    svg << "</svg>\n";
    return svg.str();
}

}  // namespace infer::bench
