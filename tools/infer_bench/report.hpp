#pragma once
// The HTML report of an infer-bench run: one self-contained page (inline CSS and SVG, no
// script, no external resources) that reads offline.

#include <nlohmann/json.hpp>

#include <string>

namespace infer::bench {

// Renders an "infer-bench/1" document: the machine and model, the recommendation, the notes,
// charts of median latency and throughput against batch (with the crossover batch marked), the
// host-to-device / compute / device-to-host split of every GPU series, a table of every
// measurement and, when the document has them, the peers with their ratios. Every string from
// the document is escaped; missing or null values show as a dash rather than failing.
std::string render_html_report(const nlohmann::json& doc);

}  // namespace infer::bench
