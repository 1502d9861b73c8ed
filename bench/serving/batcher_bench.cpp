// batcher-bench: how many requests a second infer-serve's model answers without HTTP or JSON:
// the same sessions, batcher options (length buckets, batch sizes) and warm-up as the server
// (serve::ServedModel), requests handed over as tensors.
//
// Client threads in a closed loop each submit a one-row request and wait for its answer, as
// a server's connection threads do. With a cheap model (the default: one small product per
// token) the figure is the batcher's own cost per request (queueing, stacking, splitting,
// answering); with a real model (--model x.onnx, token inputs drawn between --min-length and
// --max-length) it is what the device sustains through the batcher. --max-batch 1 gives the
// one-at-a-time figure.
//
//   build/bin/batcher-bench --clients 64 --seconds 3
//   build/bin/batcher-bench --model .cache/models/all-MiniLM-L6-v2/model.onnx --device cuda --precision f16
//   build/bin/batcher-bench --model ... --device cpu,cuda --clients 1   (routing, one request at a time)
#include "served_model.hpp"

#include <infer/infer.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace infer;

namespace {

struct Options {
    std::string model;  // empty: the built-in cheap model
    std::string device = "cpu", precision = "f32";
    int clients = 64, workers = 1, threads = 0;
    bool pinned_outputs = true;
    int64_t max_batch = 32, min_length = 8, max_length = 128;
    double seconds = 3, max_delay_ms = 2;
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "batcher-bench: %s\nusage: batcher-bench [--model X.onnx] [--device D] [--precision P] [--clients N]\n"
                 "  [--workers N] [--threads N] [--max-batch N] [--max-delay-ms MS] [--seconds S]\n"
                 "  [--min-length N] [--max-length N] [--pinned-outputs 0|1]\n",
                 why);
    std::exit(2);
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc) usage("every option takes a value");
        const std::string key = argv[i], value = argv[i + 1];
        if (key != "--model" && key != "--device" && key != "--precision" &&
            value.find_first_not_of("0123456789.") != std::string::npos)
            usage((key + " takes a number, not '" + value + "'").c_str());
        if (key == "--model") o.model = value;
        else if (key == "--device") o.device = value;
        else if (key == "--precision") o.precision = value;
        else if (key == "--clients") o.clients = std::stoi(value);
        else if (key == "--workers") o.workers = std::stoi(value);
        else if (key == "--threads") o.threads = std::stoi(value);
        else if (key == "--pinned-outputs") o.pinned_outputs = value != "0";
        else if (key == "--max-batch") o.max_batch = std::stoll(value);
        else if (key == "--max-delay-ms") o.max_delay_ms = std::stod(value);
        else if (key == "--seconds") o.seconds = std::stod(value);
        else if (key == "--min-length") o.min_length = std::stoll(value);
        else if (key == "--max-length") o.max_length = std::stoll(value);
        else usage(("unknown option " + key).c_str());
    }
    if (o.clients < 1 || o.min_length < 1 || o.max_length < o.min_length) usage("bad counts or lengths");
    return o;
}

// A token model as cheap as one can be: ids → an embedding of 16 → relu(x · W). The cost of a
// run is mostly fixed, so the batcher's own shows; as a token model it gets the server's
// length buckets, so few shapes (plans) serve every request.
Graph cheap_model() {
    GraphBuilder b("cheap");
    auto ids = b.input("input_ids", DType::i64, {kDynamic, kDynamic});
    std::vector<float> table(2000 * 16), w(16 * 16);
    for (size_t i = 0; i < table.size(); ++i) table[i] = 0.001f * static_cast<float>(i % 97);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i % 7);
    auto x = b.op1("Gather", {b.constant(Tensor::from_vector(table, {2000, 16})), ids});
    b.output("y", b.relu(b.matmul(x, b.constant(Tensor::from_vector(w, {16, 16})))));
    return b.build();
}

// A one-row request for the graph's inputs: token ids (and ones for masks, zeros for token
// types) of a random length.
serve::InferRequest make_request(const Graph& graph, int64_t length, std::mt19937& random) {
    Batch item;
    for (const TensorInfo& input : graph.inputs()) {
        std::vector<int64_t> ids(static_cast<size_t>(length), 0);
        if (input.name.find("mask") != std::string::npos) std::fill(ids.begin(), ids.end(), 1);
        else if (input.name.find("token_type") == std::string::npos)
            for (int64_t& id : ids) id = std::uniform_int_distribution<int64_t>(1000, 1999)(random);
        item.set(input.name, Tensor::from_vector(ids, {1, length}));
    }
    serve::InferRequest request;
    request.inputs = std::move(item);
    request.rows = 1;
    return request;
}

// The counters the bench reports, from the served model's statistics.
struct ServedCounts {
    double completed = 0, batches = 0, stack_ms = 0, run_ms = 0, copy_ms = 0, split_ms = 0;
};

ServedCounts batcher_stats(const serve::ServedModel& model) {
    const nlohmann::json stats = model.stats();
    const nlohmann::json& worker = stats.at("worker_ms");
    return {stats.at("completed").get<double>(), stats.at("batches").get<double>(), worker.at("stack").get<double>(),
            worker.at("run").get<double>(), worker.at("copy").get<double>(), worker.at("split").get<double>()};
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const Options o = parse(argc, argv);  // a count that is no number throws std::invalid_argument
        Graph graph = o.model.empty() ? cheap_model() : Graph::load(o.model);
        serve::ModelOptions options;
        // Several devices (cpu,cuda): a session on each and the batcher's routing between them.
        options.devices.clear();
        for (size_t start = 0; start <= o.device.size();) {
            const size_t comma = std::min(o.device.find(',', start), o.device.size());
            options.devices.push_back(Device::parse(o.device.substr(start, comma - start)));
            start = comma + 1;
        }
        options.precision = parse_precision(o.precision);
        options.threads = o.threads;
        options.batcher.max_batch = o.max_batch;
        options.batcher.max_delay = std::chrono::microseconds(static_cast<int64_t>(o.max_delay_ms * 1000));
        options.batcher.workers = o.workers;
        options.batcher.pinned_outputs = o.pinned_outputs;
        options.batcher.max_queue = static_cast<size_t>(std::max<int64_t>(o.clients, o.max_batch)) * 2;
        serve::ServedModel model("bench", graph, options);  // warms every shape up on a GPU
        {
            // With several devices the batcher times each on its first batch (routing's
            // profile, seconds on a CPU): that happens here, not in the measured window.
            std::mt19937 random(7);
            model.infer(make_request(graph, o.max_length, random));
        }
        const ServedCounts before = batcher_stats(model);
        std::atomic<bool> stop{false};
        std::atomic<uint64_t> answered{0}, errors{0};
        std::vector<std::thread> clients;
        const auto start = std::chrono::steady_clock::now();
        for (int c = 0; c < o.clients; ++c)
            clients.emplace_back([&, c] {
                std::mt19937 random(static_cast<uint32_t>(100 + c));
                // Items made before the clock matters: a client's cost is submitting and waiting.
                std::vector<serve::InferRequest> items;
                for (int i = 0; i < 16; ++i)
                    items.push_back(make_request(
                        graph, std::uniform_int_distribution<int64_t>(o.min_length, o.max_length)(random), random));
                for (size_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
                    try {
                        model.infer(items[i % items.size()]);
                        answered.fetch_add(1, std::memory_order_relaxed);
                    } catch (const std::exception&) {
                        errors.fetch_add(1, std::memory_order_relaxed);
                    }
                }
            });
        std::this_thread::sleep_for(std::chrono::duration<double>(o.seconds));
        stop = true;
        for (std::thread& t : clients) t.join();
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const ServedCounts after = batcher_stats(model);
        const double batches = after.batches - before.batches;
        std::printf("batcher-bench: %s on %s (%s), %d clients, %d workers, max batch %lld, outputs to %s memory\n",
                    o.model.empty() ? "cheap model" : o.model.c_str(), o.device.c_str(), o.precision.c_str(),
                    o.clients, o.workers, static_cast<long long>(o.max_batch),
                    o.pinned_outputs ? "page-locked" : "ordinary");
        std::printf("  %.0f answers/s, %llu errors, mean batch %.1f, per batch: stack %.3f ms, run %.3f ms, copy %.3f ms, split %.3f ms\n",
                    static_cast<double>(answered.load()) / elapsed, static_cast<unsigned long long>(errors.load()),
                    (after.completed - before.completed) / std::max(1.0, batches),
                    (after.stack_ms - before.stack_ms) / std::max(1.0, batches),
                    (after.run_ms - before.run_ms) / std::max(1.0, batches),
                    (after.copy_ms - before.copy_ms) / std::max(1.0, batches),
                    (after.split_ms - before.split_ms) / std::max(1.0, batches));
        const nlohmann::json final_stats = model.stats();
        if (options.devices.size() > 1)
            std::printf("  batches per device (warm-up included): %s\n", final_stats.at("batches_per_device").dump().c_str());
        const nlohmann::json latency = final_stats.at("latency_ms");
        std::printf("  latency of the last 4 096 answers: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms\n",
                    latency.at("p50").get<double>(), latency.at("p90").get<double>(), latency.at("p99").get<double>());
        return errors.load() == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "batcher-bench: %s\n", e.what());
        return 1;
    }
}
