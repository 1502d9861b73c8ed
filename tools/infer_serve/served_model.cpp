#include "served_model.hpp"

#include <infer/error.hpp>

#include <algorithm>
#include <barrier>
#include <exception>
#include <thread>
#include <vector>

namespace infer::serve {

namespace {

bool is_token_model(const Graph& graph) {
    return std::all_of(graph.inputs().begin(), graph.inputs().end(), [](const TensorInfo& input) {
        return input.shape.rank() == 2 && input.shape[1] == kDynamic &&
               (input.dtype == DType::i64 || input.dtype == DType::i32);
    });
}

// Row `row` of every input, without the batch axis: a batcher item. Views, no copies.
Batch row_of(const Batch& inputs, int64_t row) {
    Batch item;
    for (const auto& [name, tensor] : inputs) {
        const Tensor slice = tensor.slice(0, row, row + 1);
        item.set(name, slice.reshape(Shape(std::vector<int64_t>(slice.shape().begin() + 1, slice.shape().end()))));
    }
    return item;
}

// A batch of `rows` token rows of `length`: ids 1 (a valid id in any vocabulary), masks 1,
// everything else (token types) 0. Real-looking enough that no kernel sees a fully masked row.
Batch warm_up_batch(const Graph& graph, int64_t rows, int64_t length) {
    Batch batch;
    for (const TensorInfo& input : graph.inputs()) {
        const int64_t value = input.name.find("mask") != std::string::npos || input.name == "input_ids" ? 1 : 0;
        const size_t n = static_cast<size_t>(rows * length);
        // A token model's inputs are i64 or i32 (is_token_model).
        batch.set(input.name, input.dtype == DType::i64
                                  ? Tensor::from_vector(std::vector<int64_t>(n, value), Shape{rows, length})
                                  : Tensor::from_vector(std::vector<int32_t>(n, static_cast<int32_t>(value)), Shape{rows, length}));
    }
    return batch;
}

}  // namespace

ServedModel::ServedModel(std::string name, Graph graph, ModelOptions options)
    : name_(std::move(name)), graph_(std::move(graph)) {
    for (const auto* list : {&graph_.inputs(), &graph_.outputs()})
        for (const TensorInfo& info : *list)
            if (info.shape.rank() == 0 || info.shape[0] != kDynamic)
                throw Unsupported("infer-serve: model '" + name_ + "': '" + info.name + "' has shape " +
                                  info.shape.to_string() +
                                  ", without a dynamic batch axis 0, which the batcher needs to group requests");
    if (is_token_model(graph_)) {
        if (options.length_buckets_from_model && options.batcher.length_buckets.empty())
            options.batcher.length_buckets = {16, 32, 64, 128, 256, 512};
        if (options.batcher.trim_outputs.empty())
            for (const TensorInfo& output : graph_.outputs())
                if (output.shape.rank() >= 2 && output.shape[1] == kDynamic)
                    options.batcher.trim_outputs.push_back(output.name);
    }
    // Batches padded to powers of two: with the length buckets, few enough shapes that every
    // plan stays cached (a CUDA plan made again costs planning and a graph capture).
    if (options.batch_sizes_from_model && options.batcher.batch_sizes.empty())
        for (int64_t size = 1;; size *= 2) {
            options.batcher.batch_sizes.push_back(std::min(size, options.batcher.max_batch));
            if (size >= options.batcher.max_batch) break;
        }
    const size_t shapes = (options.batcher.length_buckets.size() + 1) * std::max<size_t>(options.batcher.batch_sizes.size(), 1);
    std::vector<const Session*> sessions;
    for (const Device& device : options.devices) {
        SessionOptions session_options;
        session_options.max_cached_plans = std::clamp<size_t>(shapes, 16, 128);
        session_options.device = device;
        session_options.precision = options.precision;
        session_options.threads = options.threads;
        session_options.graph_capture = options.graph_capture;
        sessions_.push_back(std::make_unique<Session>(graph_, session_options));
        sessions.push_back(sessions_.back().get());
        devices_.push_back(device.to_string());
    }
    if (options.warm_up && is_token_model(graph_)) warm_up(options.batcher);
    batcher_ = std::make_unique<Batcher>(sessions, options.batcher);
}

void ServedModel::warm_up(const BatcherOptions& batcher) {
    std::vector<int64_t> sizes = batcher.batch_sizes, lengths = batcher.length_buckets;
    if (sizes.empty()) sizes = {1, batcher.max_batch};
    if (lengths.empty()) return;  // padded to the longest item: any length may come
    // Every worker may run a batch on a session at the same time, each in an execution context
    // of its own, whose plans start cold: so as many threads as workers run every shape
    // together (a barrier between shapes makes their runs overlap, so that the session makes
    // a context for each), and a worker that joins under load finds its context warm too.
    const int threads = std::max(1, batcher.workers);
    for (const auto& session : sessions_) {
        if (session->options().device.is_cpu()) continue;  // nothing captured, planning is cheap
        std::barrier together(threads);
        std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
        std::vector<std::thread> runners;
        for (int t = 0; t < threads; ++t)
            runners.emplace_back([&, t] {
                for (int64_t size : sizes)
                    for (int64_t length : lengths) {
                        together.arrive_and_wait();
                        if (errors[static_cast<size_t>(t)]) continue;  // keep arriving: the others wait for it
                        try {
                            const Batch batch = warm_up_batch(graph_, size, length);
                            // Twice: the first run goes node by node (and checks f16 ranges), the
                            // second captures the CUDA graph that later runs replay.
                            session->run(batch);
                            session->run(batch);
                        } catch (...) {
                            errors[static_cast<size_t>(t)] = std::current_exception();
                        }
                    }
            });
        for (std::thread& runner : runners) runner.join();
        for (const std::exception_ptr& error : errors)
            if (error) std::rethrow_exception(error);
    }
}

ServedModel::~ServedModel() = default;

Batch ServedModel::infer(const InferRequest& request) {
    RequestOptions options;
    options.priority = request.priority;
    if (request.timeout) options.deadline = std::chrono::steady_clock::now() + *request.timeout;

    std::vector<Batcher::Ticket> tickets;
    try {
        for (int64_t row = 0; row < request.rows; ++row) tickets.push_back(batcher_->submit(row_of(request.inputs, row), options));
    } catch (...) {
        // The request fails as a whole: withdraw the rows still waiting and let the running
        // ones finish, so that no row outlives the request it belongs to.
        for (Batcher::Ticket& ticket : tickets) {
            batcher_->cancel(ticket.id);
            ticket.result.wait();
        }
        throw;
    }
    std::vector<Batch> rows;
    std::exception_ptr first_error;
    for (Batcher::Ticket& ticket : tickets) {
        try {
            rows.push_back(ticket.result.get());
        } catch (...) {
            if (!first_error) first_error = std::current_exception();
        }
    }
    if (first_error) std::rethrow_exception(first_error);

    Batch outputs;
    for (const std::string& output : rows.front().names()) {
        std::vector<Tensor> parts;
        for (const Batch& row : rows) parts.push_back(row[output]);
        outputs.set(output, stack(parts));
    }
    return outputs;
}

EncodedResponse ServedModel::answer(std::string_view body, std::optional<size_t> json_length) {
    const InferRequest request = parse_infer_request(body, json_length, graph_.inputs(), graph_.outputs());
    return encode_infer_response(name_, request, infer(request), graph_.outputs());
}

nlohmann::json ServedModel::stats() const {
    const BatcherStats s = batcher_->stats();
    nlohmann::json sizes = nlohmann::json::object();
    for (size_t n = 1; n < s.batch_sizes.size(); ++n)
        if (s.batch_sizes[n] > 0) sizes[std::to_string(n)] = s.batch_sizes[n];
    nlohmann::json per_device = nlohmann::json::object();
    for (size_t i = 0; i < s.batches_per_session.size() && i < devices_.size(); ++i)
        per_device[devices_[i]] = s.batches_per_session[i];
    return {{"model", name_},
            {"accepted", s.accepted},
            {"rejected", s.rejected},
            {"completed", s.completed},
            {"failed", s.failed},
            {"cancelled", s.cancelled},
            {"batches", s.batches},
            {"queue_depth", s.queue_depth},
            {"batch_sizes", sizes},
            {"batches_per_device", per_device},
            {"latency_ms", {{"p50", s.latency_p50_ms}, {"p90", s.latency_p90_ms}, {"p99", s.latency_p99_ms}}},
            // Summed worker time per phase (see BatcherStats): divided by the batches between two
            // readings, what one batch cost.
            {"worker_ms", {{"stack", s.stack_ms}, {"run", s.run_ms}, {"copy", s.copy_ms}, {"split", s.split_ms}}}};
}

void ServedModel::shutdown() { batcher_->shutdown(true); }

}  // namespace infer::serve
