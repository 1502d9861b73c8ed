// Checks of infer-bench's HTML report rendered from data/sample.json, a made-up document that
// only exercises rendering.
#define CATCH_CONFIG_MAIN
#include "report.hpp"

#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <string>

using infer::bench::render_html_report;
using nlohmann::json;

namespace {

json sample() {
    std::ifstream in(INFER_BENCH_SAMPLE_JSON);
    REQUIRE(in);
    return json::parse(in);
}

size_t count(const std::string& text, const std::string& part) {
    size_t found = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++found;
    return found;
}

std::set<std::string> series_of(const json& doc) {
    std::set<std::string> labels;
    for (const json& m : doc["measurements"]) {
        std::string label = m["device"].get<std::string>() + " " + m["precision"].get<std::string>();
        if (m["host_memory"].is_string()) label += " " + m["host_memory"].get<std::string>();
        labels.insert(label);
    }
    return labels;
}

// The sample as a machine without a GPU would have written it.
json without_gpu(json doc) {
    json cpu_only = json::array();
    for (const json& m : doc["measurements"])
        if (m["device"] == "cpu") cpu_only.push_back(m);
    doc["measurements"] = cpu_only;
    doc["machine"]["gpu_present"] = false;
    doc["machine"]["gpus"] = json::array();
    doc["crossover"] = nullptr;
    doc["recommendation"] = "cpu f32 at every batch (no GPU present)";
    doc["notes"] = json::array({"no GPU present: only the cpu was measured"});
    doc.erase("peers");
    return doc;
}

}  // namespace

TEST_CASE("the report shows the recommendation, the machine and the notes", "[report]") {
    const json doc = sample();
    const std::string html = render_html_report(doc);
    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(html.find("class=\"recommendation\"") != std::string::npos);
    // The sample's recommendation has "<=" and ">=", which arrive escaped.
    CHECK(html.find("batch &lt;= 2: cpu f32 (1.16 ms vs 1.25 ms at batch 2); batch &gt;= 4: cuda:0 f16 pinned") !=
          std::string::npos);
    CHECK(html.find("AMD EPYC 9654 96-Core Processor (16 cores)") != std::string::npos);
    CHECK(html.find("NVIDIA H200, driver 570.124.06") != std::string::npos);
    CHECK(html.find("distilbert-base-random") != std::string::npos);
    CHECK(count(html, "<li>") == doc["notes"].size());
}

TEST_CASE("strings from the document are escaped", "[report]") {
    json doc = sample();
    doc["model"]["name"] = "<script>alert('x')</script>";
    doc["notes"].push_back("a & b < c > d \"quoted\"");
    doc["measurements"][0]["precision"] = "f32<b>";
    const std::string html = render_html_report(doc);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") != std::string::npos);
    CHECK(html.find("a &amp; b &lt; c &gt; d &quot;quoted&quot;") != std::string::npos);
    CHECK(html.find("f32<b>") == std::string::npos);
    CHECK(html.find("cpu f32&lt;b&gt;") != std::string::npos);
}

TEST_CASE("each series has one line in the latency chart and one in the throughput chart", "[report]") {
    const json doc = sample();
    const std::string html = render_html_report(doc);
    const std::set<std::string> series = series_of(doc);
    REQUIRE(series.size() == 5);
    CHECK(count(html, "<polyline") == 2 * series.size());
    for (const std::string& label : series) CHECK(count(html, "<title>" + label + "</title></polyline>") == 2);
}

TEST_CASE("the crossover is marked on both charts, the GPU series get stacked bars", "[report]") {
    const std::string html = render_html_report(sample());
    CHECK(count(html, "class=\"marker\"") == 2);
    CHECK(count(html, "crossover: batch 4") == 2);
    CHECK(count(html, "aria-label=\"Where the time goes: cuda:0") == 4);
    CHECK(count(html, "class=\"bar\"") == 4 * 9 * 3);
}

TEST_CASE("the tables list every measurement and every peer with its ratios", "[report]") {
    const json doc = sample();
    const std::string html = render_html_report(doc);
    const size_t measurements_table = html.find("<table class=\"measurements\">");
    const size_t peers_table = html.find("<table class=\"peers\">");
    REQUIRE(measurements_table != std::string::npos);
    REQUIRE(peers_table != std::string::npos);
    CHECK(count(html.substr(measurements_table, peers_table - measurements_table), "<tr>") ==
          doc["measurements"].size() + 1);
    CHECK(count(html.substr(peers_table), "<tr>") == doc["peers"].size() + 1);
    CHECK(html.find("latency ratio") != std::string::npos);
    CHECK(html.find("<td class=\"better\">") != std::string::npos);
}

TEST_CASE("the page is self-contained", "[report]") {
    const std::string html = render_html_report(sample());
    CHECK(html.find("http://") == std::string::npos);
    CHECK(html.find("https://") == std::string::npos);
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("<link") == std::string::npos);
    CHECK(html.find("src=") == std::string::npos);
}

TEST_CASE("a document without a GPU renders without stacked bars, crossover or peers", "[report]") {
    const std::string html = render_html_report(without_gpu(sample()));
    CHECK(html.find("GPU: no GPU present") != std::string::npos);
    CHECK(html.find("class=\"bar\"") == std::string::npos);
    CHECK(html.find("Where the time goes") == std::string::npos);
    CHECK(html.find("class=\"marker\"") == std::string::npos);
    CHECK(html.find("class=\"peers\"") == std::string::npos);
    CHECK(count(html, "<polyline") == 2);
    CHECK(html.find("no GPU present: only the cpu was measured") != std::string::npos);
}

TEST_CASE("missing and mistyped values show as dashes instead of failing", "[report]") {
    json doc = sample();
    doc["measurements"][0].erase("latency_ms");
    doc["measurements"][1]["cold_start_ms"] = "soon";
    doc["measurements"][2]["memory_bytes"] = nullptr;
    doc.erase("settings");
    doc["crossover"]["latency"]["batch"] = nullptr;
    std::string html;
    REQUIRE_NOTHROW(html = render_html_report(doc));
    CHECK(html.find("&mdash;") != std::string::npos);
    CHECK(html.find("No latency crossover between cpu f32 and cuda:0 f16 pinned") != std::string::npos);
    CHECK(count(html, "class=\"marker\"") == 1);

    CHECK_NOTHROW(render_html_report(json::object()));
    CHECK_NOTHROW(render_html_report(json::array({1, 2})));
    CHECK_NOTHROW(render_html_report(json{{"measurements", json::array({json{{"batch", 0}}, json{{"batch", "x"}}})}}));
}
