// infer-load: an open-loop load generator for infer-serve (and any server of the KServe v2
// protocol). Requests arrive at exponentially distributed intervals at a fixed mean rate, each
// at its scheduled time whether or not earlier ones were answered, as independent users do;
// latency counts from the scheduled time, so waiting for a free connection is counted too
// (a closed loop would slow down with the server and hide its queueing). Every request is one
// row of token ids with a length drawn uniformly from [--min-length, --max-length], sent as
// JSON, the output asked for as binary data. Before and after each rate it reads the server's
// /v2/models/{name}/stats, so the batch sizes the server formed and what a batch cost are
// reported per rate.
//   infer-load --url http://127.0.0.1:8000 --model all-MiniLM-L6-v2 --rates 5,10,20 --duration 10
// With --in-process MODEL it serves the model itself, as infer-serve would (same options:
// --device, --precision, --max-batch, ...), and the client threads call it directly: the same
// load without HTTP, to tell the server's cost from the batcher's and the device's.
//   infer-load --in-process all-MiniLM-L6-v2 --device cuda --precision f16 --rates 1000,4000
#include "in_process_target.hpp"
#include "load_target.hpp"
#include "serving_options.hpp"

#include <infer/infer.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
    std::string model = "all-MiniLM-L6-v2";
    std::vector<double> rates{5, 10, 20};
    double duration_s = 10;
    int connections = 32;
    int64_t min_length = 8, max_length = 128, vocabulary = 30522;
    std::string output;  // requested output; empty: the model's first
    uint32_t seed = 1;
    // A request whose connection frees up this long after its scheduled time is not sent but
    // counted as an error: the client would have given up, and an overloaded rate must not
    // keep the run going long after its duration.
    double give_up_s = 5;
};

// Request bodies prepared before any timing: a few hundred rows of random lengths, reused in
// turn, so that building JSON does not slow the generator down at high rates.
std::vector<std::string> request_bodies(const Options& o, const json& metadata, size_t count) {
    std::mt19937 random(o.seed);
    std::uniform_int_distribution<int64_t> length(o.min_length, o.max_length), token(std::min<int64_t>(1000, o.vocabulary / 2), o.vocabulary - 1);  // above BERT's special ids
    const std::string output = o.output.empty() ? metadata["outputs"][0]["name"].get<std::string>() : o.output;
    std::vector<std::string> bodies;
    for (size_t i = 0; i < count; ++i) {
        const int64_t n = length(random);
        json inputs = json::array();
        for (const json& input : metadata["inputs"]) {
            const std::string name = input["name"];
            std::vector<int64_t> values(static_cast<size_t>(n), 0);
            if (name == "attention_mask") std::fill(values.begin(), values.end(), 1);
            else if (name == "input_ids") {
                for (int64_t& v : values) v = token(random);
                values.front() = 101;  // [CLS] and [SEP], as a tokenizer would give
                values.back() = 102;
            }
            inputs.push_back({{"name", name}, {"shape", {1, n}}, {"datatype", input["datatype"]}, {"data", values}});
        }
        bodies.push_back(json{{"inputs", inputs}, {"outputs", {{{"name", output}, {"parameters", {{"binary_data", true}}}}}}}.dump());
    }
    return bodies;
}

double percentile(std::vector<double> values, double q) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    return values[std::min(values.size() - 1, static_cast<size_t>(q * static_cast<double>(values.size())))];
}

// The batches the server formed between two readings of its statistics.
// What the workers spent per batch between two readings (absent from servers other than ours).
json worker_ms_between(const json& before, const json& after, uint64_t batches) {
    if (!after.contains("worker_ms") || !before.contains("worker_ms") || batches == 0) return json::object();
    json per_batch = json::object();
    for (const auto& [phase, total] : after["worker_ms"].items())
        per_batch[phase] = (total.get<double>() - before["worker_ms"].value(phase, 0.0)) / static_cast<double>(batches);
    return per_batch;
}

json batch_sizes_between(const json& before, const json& after) {
    json sizes = json::object();
    uint64_t batches = 0, items = 0;
    for (const auto& [size, count] : after["batch_sizes"].items()) {
        const uint64_t earlier = before["batch_sizes"].contains(size) ? before["batch_sizes"][size].get<uint64_t>() : 0;
        const uint64_t n = count.get<uint64_t>() - earlier;
        if (n == 0) continue;
        sizes[size] = n;
        batches += n;
        items += n * std::stoull(size);
    }
    return {{"histogram", sizes},
            {"batches", batches},
            {"worker_ms_per_batch", worker_ms_between(before, after, batches)},
            {"mean", batches ? static_cast<double>(items) / static_cast<double>(batches) : 0.0}};
}

json run_rate(const Options& o, double rate, const std::vector<std::string>& bodies, infer::load::LoadTarget& target) {
    const json before = target.stats();

    // The schedule: exponential gaps at the mean rate, for the duration.
    std::mt19937_64 random(o.seed + static_cast<uint64_t>(rate * 1000));
    std::exponential_distribution<double> gap(rate);
    std::vector<double> arrivals;
    for (double t = gap(random); t < o.duration_s; t += gap(random)) arrivals.push_back(t);

    std::vector<double> latencies_ms(arrivals.size(), -1);
    std::vector<int> statuses(arrivals.size(), 0);
    std::atomic<size_t> next{0};
    const Clock::time_point start = Clock::now() + std::chrono::milliseconds(50);
    std::atomic<int64_t> last_done_ns{0};
    std::vector<std::thread> connections;
    for (int c = 0; c < o.connections; ++c)
        connections.emplace_back([&, send = target.connect()] {
            for (size_t i = next++; i < arrivals.size(); i = next++) {
                const Clock::time_point scheduled = start + std::chrono::nanoseconds(static_cast<int64_t>(arrivals[i] * 1e9));
                std::this_thread::sleep_until(scheduled);
                if (Clock::now() - scheduled > std::chrono::duration<double>(o.give_up_s)) {
                    statuses[i] = -2;
                    continue;
                }
                statuses[i] = send(bodies[i % bodies.size()]);  // -1: no answer (connection failed)
                const Clock::time_point done = Clock::now();
                latencies_ms[i] = std::chrono::duration<double, std::milli>(done - scheduled).count();
                const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(done - start).count();
                for (int64_t seen = last_done_ns; ns > seen && !last_done_ns.compare_exchange_weak(seen, ns);) {
                }
            }
        });
    for (std::thread& thread : connections) thread.join();
    const json after = target.stats();

    std::vector<double> ok_latencies;
    std::map<std::string, uint64_t> errors;
    for (size_t i = 0; i < arrivals.size(); ++i) {
        if (statuses[i] == 200) ok_latencies.push_back(latencies_ms[i]);
        else if (statuses[i] == -2) ++errors["not sent: no free connection within --give-up"];
        else ++errors[statuses[i] == -1 ? "no answer" : "HTTP " + std::to_string(statuses[i])];
    }
    const double elapsed_s = std::max(o.duration_s, static_cast<double>(last_done_ns.load()) * 1e-9);
    uint64_t error_count = 0;
    for (const auto& entry : errors) error_count += entry.second;
    return {{"offered_per_s", rate},
            {"sent", arrivals.size()},
            {"ok", ok_latencies.size()},
            {"errors", error_count},
            {"error_kinds", errors},
            {"throughput_per_s", static_cast<double>(ok_latencies.size()) / elapsed_s},
            {"latency_ms", {{"p50", percentile(ok_latencies, 0.50)}, {"p90", percentile(ok_latencies, 0.90)},
                            {"p99", percentile(ok_latencies, 0.99)}, {"max", percentile(ok_latencies, 1.0)}}},
            {"batch_size", batch_sizes_between(before, after)}};
}

}  // namespace

int main(int argc, char** argv) {
    using namespace infer;
    CLI::App app{"infer-load: open-loop load on a KServe v2 server (infer-serve), rate by rate"};
    Options o;
    std::string url = "http://127.0.0.1:8000", json_path, label, in_process;
    serve::ServingArguments serving;
    app.add_option("--url", url, "the server")->capture_default_str();
    app.add_option("--model", o.model, "model name")->capture_default_str();
    app.add_option("--in-process", in_process,
                   "serve this model (file, folder or prepared name) in this process instead of using --url; "
                   "--device, --precision, --max-batch and the other serving options as in infer-serve");
    CLI::App* serving_options = app.add_option_group("serving", "with --in-process: how the model is served");
    serving.add_to(*serving_options);
    app.add_option("--rates", o.rates, "mean arrival rates, requests per second")->delimiter(',');
    app.add_option("--duration", o.duration_s, "seconds of arrivals per rate")->capture_default_str();
    app.add_option("--connections", o.connections, "client connections (requests in flight at most)")
        ->capture_default_str();
    app.add_option("--min-length", o.min_length, "shortest sequence")->capture_default_str();
    app.add_option("--max-length", o.max_length, "longest sequence")->capture_default_str();
    app.add_option("--vocabulary", o.vocabulary, "token ids are drawn below this")->capture_default_str();
    app.add_option("--output", o.output, "output to ask for (default: the model's first)");
    app.add_option("--give-up", o.give_up_s, "seconds a request may wait for a free connection before it counts as an error")
        ->capture_default_str();
    app.add_option("--seed", o.seed, "random seed")->capture_default_str();
    app.add_option("--label", label, "a name for this run in the JSON (e.g. 'batching on')");
    app.add_option("--json", json_path, "write the results as JSON here");
    CLI11_PARSE(app, argc, argv);

    try {
        if (o.min_length < 1 || o.max_length < o.min_length) throw std::runtime_error("need 1 <= --min-length <= --max-length");
        if (o.vocabulary < 2) throw std::runtime_error("--vocabulary must be at least 2");
        std::unique_ptr<load::LoadTarget> target;
        if (in_process.empty()) {
            target = load::http_target(url, o.model);
        } else {
            const auto [name, path] = serve::resolve_model(in_process);
            o.model = name;
            url = "in-process " + serving.devices + " " + serving.precision;
            target = load::in_process_target(name, Graph::load(path.string()), serving.model_options());
        }
        const json metadata = target->metadata();
        const std::vector<std::string> bodies = request_bodies(o, metadata, 512);

        json results = json::array();
        std::printf("%-10s %8s %8s %7s %12s %9s %9s %10s\n", "offered/s", "sent", "ok", "errors", "answered/s",
                    "p50 ms", "p99 ms", "mean batch");
        for (double rate : o.rates) {
            const json r = run_rate(o, rate, bodies, *target);
            std::printf("%-10.1f %8llu %8llu %7llu %12.1f %9.1f %9.1f %10.2f\n", rate,
                        static_cast<unsigned long long>(r["sent"].get<uint64_t>()),
                        static_cast<unsigned long long>(r["ok"].get<uint64_t>()),
                        static_cast<unsigned long long>(r["errors"].get<uint64_t>()), r["throughput_per_s"].get<double>(),
                        r["latency_ms"]["p50"].get<double>(), r["latency_ms"]["p99"].get<double>(),
                        r["batch_size"]["mean"].get<double>());
            if (!r["batch_size"]["worker_ms_per_batch"].empty())
                std::printf("           per batch: %s ms\n", r["batch_size"]["worker_ms_per_batch"].dump().c_str());
            std::fflush(stdout);
            results.push_back(r);
        }
        if (!json_path.empty()) {
            const json document = {{"schema", "infer-load/1"},
                                   {"label", label},
                                   {"url", url},
                                   {"model", o.model},
                                   {"duration_s", o.duration_s},
                                   {"connections", o.connections},
                                   {"sequence_length", {o.min_length, o.max_length}},
                                   {"server_stats", target->stats()},
                                   {"rates", results}};
            std::ofstream(json_path) << document.dump(1) << "\n";
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "infer-load: " << e.what() << "\n";
        return 1;
    }
}
