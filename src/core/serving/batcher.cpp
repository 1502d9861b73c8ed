// The dynamic batcher (include/infer/batcher.hpp). One mutex guards the queue and the
// statistics; workers hold it only to pick requests and to count, never while a batch runs or
// while a caller's callback runs, so a slow callback delays only its own worker.
//
// Which requests may share a batch: those whose inputs have the same shapes apart from axis 0
// (the ragged axis, padded) and, with length buckets, whose lengths fall in the same bucket.
// The highest-priority, oldest waiting request decides the next batch; it runs when max_batch
// compatible requests wait, when it has waited max_delay, or (start_when_idle) when no batch
// is running, whichever comes first. With several
// sessions, each batch goes to the one expected to finish it first (route()).
#include <infer/batcher.hpp>

#include "core/serving/pinned_staging.hpp"

#include <algorithm>
#include <condition_variable>
#include <list>
#include <mutex>
#include <sstream>
#include <thread>
#include <tuple>
#include <unordered_map>

namespace infer {

namespace {

using Clock = std::chrono::steady_clock;

// Submit-to-answer latencies kept for percentiles: the most recent answers only.
constexpr size_t kLatencyWindow = 4096;

struct Request {
    uint64_t id = 0;
    Batch item;
    Batcher::Callback done;
    RequestOptions options;
    Clock::time_point arrived;
    int64_t length = 0;       // axis 0 of its first ragged input (0 when none)
    std::string compatible;   // requests with equal keys may share a batch
};

// What every item must agree on: input names, dtypes and ranks, fixed by the first item.
struct ItemSignature {
    std::vector<std::string> names;
    std::vector<DType> dtypes;
    std::vector<size_t> ranks;
};

double percentile(std::vector<double> values, double q) {
    if (values.empty()) return 0;
    const size_t k = std::min(values.size() - 1, static_cast<size_t>(q * static_cast<double>(values.size())));
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(k), values.end());
    return values[k];
}

}  // namespace

std::string BatcherStats::to_string() const {
    std::ostringstream out;
    out << "accepted " << accepted << ", rejected " << rejected << ", completed " << completed << ", failed "
        << failed << ", cancelled " << cancelled << "; " << batches << " batches; queue " << queue_depth
        << "; latency p50 " << latency_p50_ms << " ms, p90 " << latency_p90_ms << " ms, p99 " << latency_p99_ms
        << " ms; batch sizes";
    for (size_t n = 1; n < batch_sizes.size(); ++n)
        if (batch_sizes[n]) out << " " << n << ":" << batch_sizes[n];
    if (batches > 0)
        out << "; per batch: stack " << stack_ms / static_cast<double>(batches) << " ms, run "
            << run_ms / static_cast<double>(batches) << " ms, copy " << copy_ms / static_cast<double>(batches)
            << " ms, split " << split_ms / static_cast<double>(batches) << " ms";
    if (batches_per_session.size() > 1) {
        out << "; batches per session";
        for (uint64_t b : batches_per_session) out << " " << b;
    }
    return out.str();
}

struct Batcher::State {
    std::vector<const Session*> sessions;
    BatcherOptions options;
    std::mutex mutex;
    std::condition_variable work;   // a request arrived, or shutdown began
    std::condition_variable idle;   // a batch finished
    std::list<Request> queue;       // by priority (highest first), then arrival
    // Waiting requests per compatibility key (keys with none are erased, so the map holds at
    // most one entry per waiting request) and how many have a deadline: a worker deciding
    // whether the head's batch is full, or whether deadlines need a look, reads a count
    // instead of walking a queue that 1 000 client threads keep long.
    std::unordered_map<std::string, int64_t> waiting;
    size_t with_deadline = 0;
    std::optional<ItemSignature> signature;
    uint64_t next_id = 1;
    size_t running = 0;             // requests taken by workers and not yet answered
    bool stopping = false;
    BatcherStats stats;
    std::vector<double> latencies;  // ring of kLatencyWindow
    size_t latency_next = 0;
    std::vector<std::thread> workers;
    // Routing (several sessions): per session, (batch size, milliseconds) measured once, and
    // the estimated milliseconds of the batches sent to it and not finished.
    std::once_flag profiled;
    std::vector<std::vector<std::pair<int64_t, double>>> profile;
    std::vector<double> in_flight_ms;
    // Page-locked buffers for outputs copied from a GPU (pinned_outputs): two per worker and
    // output, so that a worker's next batch finds one free while the last one's answers are
    // still being read.
    detail::PinnedStaging staging;

    State(std::vector<const Session*> s, BatcherOptions o)
        : sessions(std::move(s)), options(std::move(o)),
          staging(options.pinned_outputs && !sessions.empty() && sessions.front()
                      ? 2 * static_cast<size_t>(std::max(options.workers, 1)) * sessions.front()->graph().outputs().size()
                      : 0) {}

    // The batch's outputs on the host: copied into a kept page-locked buffer when one is free.
    void copy_to_host(Batch& outputs) {
        for (const std::string& name : outputs.names()) {
            const Tensor& output = outputs[name];
            if (output.device().is_cpu()) continue;
            Tensor host = staging.take(output.dtype(), output.shape(), output.device());
            if (host.defined()) host.copy_from(output);
            else host = output.to(Device::CPU);
            outputs.set(name, std::move(host));
        }
    }

    int64_t bucket(int64_t length) const {
        for (int64_t b : options.length_buckets)
            if (b >= length) return b;
        return length;
    }

    // The item's signature (input names, dtypes, ranks) and the key of the requests it may
    // share a batch with. Needs no lock: it reads only the item and the options.
    ItemSignature describe(Request& r) const {
        ItemSignature s;
        std::string key;
        for (const std::string& name : r.item.names()) {
            const Tensor& t = r.item[name];
            if (!t.defined()) throw InvalidArgument("batcher: input '" + name + "' of the item is an undefined tensor");
            if (t.device() != Device::CPU)
                throw InvalidArgument("batcher: input '" + name + "' is on " + t.device().to_string() +
                                      "; items are given on the host");
            s.names.push_back(name);
            s.dtypes.push_back(t.dtype());
            s.ranks.push_back(t.rank());
            const Shape& shape = t.shape();
            if (shape.rank() > 0 && r.length == 0) r.length = shape[0];
            for (size_t axis = 1; axis < shape.rank(); ++axis) key += std::to_string(shape[axis]) + ",";
            key += ";";
        }
        if (!options.length_buckets.empty()) key += "bucket " + std::to_string(bucket(r.length));
        r.compatible = std::move(key);
        return s;
    }

    // The first item's signature becomes every item's. Called with the mutex held.
    void check_signature(ItemSignature s) {
        if (!signature) signature = std::move(s);
        else if (s.names != signature->names || s.dtypes != signature->dtypes || s.ranks != signature->ranks) {
            std::string expected;
            for (size_t i = 0; i < signature->names.size(); ++i)
                expected += (i ? ", " : "") + signature->names[i] + " " + std::string(dtype_name(signature->dtypes[i])) +
                            " of rank " + std::to_string(signature->ranks[i]);
            throw InvalidArgument("batcher: every item must have the inputs of the first (" + expected + ")");
        }
    }

    // Bookkeeping of a request entering or leaving the queue. Called with the mutex held.
    void count_in(const Request& r) {
        ++waiting[r.compatible];
        if (r.options.deadline) ++with_deadline;
    }
    void count_out(const Request& r) {
        const auto it = waiting.find(r.compatible);
        if (--it->second == 0) waiting.erase(it);
        if (r.options.deadline) --with_deadline;
    }

    void record_latency(Clock::time_point arrived) {
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - arrived).count();
        if (latencies.size() < kLatencyWindow) latencies.push_back(ms);
        else latencies[latency_next] = ms;
        latency_next = (latency_next + 1) % kLatencyWindow;
    }

    // Answers outside the mutex; a callback that throws must not take the worker down.
    static void answer(Request& r, std::exception_ptr error, Batch outputs) {
        try {
            r.done(std::move(error), std::move(outputs));
        } catch (...) {
        }
    }

    // The next batch to run, taken off the queue, or nothing when the worker should stop.
    // Requests whose deadline passed are moved to `expired`.
    std::vector<Request> next_batch(std::unique_lock<std::mutex>& lock, std::vector<Request>& expired) {
        while (true) {
            const Clock::time_point now = Clock::now();
            if (with_deadline > 0)
                for (auto it = queue.begin(); it != queue.end();) {
                    if (it->options.deadline && *it->options.deadline <= now) {
                        count_out(*it);
                        expired.push_back(std::move(*it));
                        it = queue.erase(it);
                    } else {
                        ++it;
                    }
                }
            if (!expired.empty()) return {};
            if (queue.empty()) {
                if (stopping) return {};
                work.wait(lock);
                continue;
            }
            const Request& head = queue.front();
            const Clock::time_point due = head.arrived + options.max_delay;
            const bool idle = options.start_when_idle && running == 0;
            if (waiting[head.compatible] < options.max_batch && now < due && !stopping && !idle) {
                // Wake for the head's due time, or sooner when submit() says the batch is full,
                // the head changed, or a request with a deadline came.
                Clock::time_point wake = due;
                if (with_deadline > 0)
                    for (const Request& r : queue)
                        if (r.options.deadline) wake = std::min(wake, *r.options.deadline);
                work.wait_until(lock, wake);
                continue;
            }
            std::vector<Request> batch;
            const std::string key = head.compatible;
            for (auto it = queue.begin(); it != queue.end() && static_cast<int64_t>(batch.size()) < options.max_batch;) {
                if (it->compatible == key) {
                    count_out(*it);
                    batch.push_back(std::move(*it));
                    it = queue.erase(it);
                } else {
                    ++it;
                }
            }
            running += batch.size();
            // Another worker may form the next batch while this one runs.
            if (!queue.empty()) work.notify_one();
            return batch;
        }
    }

    // The items stacked into one batch, each input padded along its axis 0 to a common
    // (bucketed) length; `padded_length` is that length for the first ragged input, and
    // `ragged` says whether any item needed padding.
    Batch stacked(const std::vector<const Batch*>& items, int64_t& padded_length, bool& ragged) const {
        Batch inputs;
        padded_length = 0;
        ragged = false;
        for (const std::string& name : items.front()->names()) {
            std::vector<Tensor> tensors;
            int64_t longest = 0;
            for (const Batch* item : items) {
                tensors.push_back((*item)[name]);
                if (tensors.back().rank() > 0) longest = std::max(longest, tensors.back().shape()[0]);
            }
            if (tensors.front().rank() == 0) {
                inputs.set(name, stack(tensors));
                continue;
            }
            const int64_t target = bucket(longest);
            for (const Tensor& t : tensors) ragged = ragged || t.shape()[0] != target;
            if (padded_length == 0) padded_length = target;
            inputs.set(name, stack_padded(tensors, target));
        }
        return inputs;
    }

    // Times every session on batches of `item` repeated 1, 2, 4, ... max_batch times.
    void measure_sessions(const Batch& item) {
        std::vector<std::vector<std::pair<int64_t, double>>> measured(sessions.size());
        for (int64_t n = 1;; n = std::min(n * 2, options.max_batch)) {
            const std::vector<const Batch*> items(static_cast<size_t>(n), &item);
            int64_t padded = 0;
            bool ragged = false;
            const Batch inputs = stacked(items, padded, ragged);
            for (size_t s = 0; s < sessions.size(); ++s) {
                sessions[s]->run(inputs);  // warm-up: plans, uploads, captures
                std::vector<double> ms;
                for (int r = 0; r < 3; ++r) {
                    const auto start = Clock::now();
                    sessions[s]->run(inputs);
                    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
                }
                std::sort(ms.begin(), ms.end());
                measured[s].emplace_back(n, ms[1]);
            }
            if (n == options.max_batch) break;
        }
        std::lock_guard lock(mutex);
        profile = std::move(measured);
    }

    // Milliseconds session `s` is expected to take for a batch of n, from its profile.
    double estimate(size_t s, int64_t n) const {
        const auto& points = profile[s];
        const auto above = std::lower_bound(points.begin(), points.end(), n,
                                            [](const auto& point, int64_t size) { return point.first < size; });
        if (above == points.end()) return points.back().second * static_cast<double>(n) / static_cast<double>(points.back().first);
        if (above == points.begin() || above->first == n) return above->second;
        const auto below = above - 1;
        const double t = static_cast<double>(n - below->first) / static_cast<double>(above->first - below->first);
        return below->second + t * (above->second - below->second);
    }

    // The session for a batch of n items: the one expected to finish it first, counting what
    // it has in flight; the estimate is added to that count until the batch finishes.
    std::pair<size_t, double> route(int64_t n, const Batch& first_item) {
        if (sessions.size() == 1) return {0, 0.0};
        std::call_once(profiled, [&] { measure_sessions(first_item); });
        std::lock_guard lock(mutex);
        size_t best = 0;
        double best_finish = 0, best_estimate = 0;
        for (size_t s = 0; s < sessions.size(); ++s) {
            const double e = estimate(s, n), finish = in_flight_ms[s] + e;
            if (s == 0 || finish < best_finish) {
                best = s;
                best_finish = finish;
                best_estimate = e;
            }
        }
        in_flight_ms[best] += best_estimate;
        return {best, best_estimate};
    }

    // Stacks the items (padding their axis 0), runs the batch, and answers every request.
    void run(std::vector<Request>& batch) {
        std::exception_ptr error;
        std::vector<Batch> results(batch.size());
        size_t session = 0;
        double estimate_ms = 0;
        bool routed = false;
        const auto started = Clock::now();
        auto stacked_at = started, ran_at = started, copied_at = started;
        try {
            std::vector<const Batch*> items;
            for (const Request& r : batch) items.push_back(&r.item);
            // Filled to a batch size of the list with copies of the last item (dropped below).
            const auto size = std::lower_bound(options.batch_sizes.begin(), options.batch_sizes.end(),
                                               static_cast<int64_t>(items.size()));
            if (size != options.batch_sizes.end()) items.resize(static_cast<size_t>(*size), items.back());
            int64_t padded_length = 0;
            bool ragged = false;
            const Batch inputs = stacked(items, padded_length, ragged);
            std::tie(session, estimate_ms) = route(static_cast<int64_t>(items.size()), batch.front().item);
            routed = true;
            stacked_at = Clock::now();
            Batch outputs = sessions[session]->run(inputs);
            ran_at = Clock::now();
            if (options.outputs_on_host) copy_to_host(outputs);
            copied_at = Clock::now();
            for (const std::string& name : outputs.names()) {
                const Tensor& all = outputs[name];
                const bool trimmed = ragged && std::find(options.trim_outputs.begin(), options.trim_outputs.end(),
                                                         name) != options.trim_outputs.end();
                if (all.rank() == 0 || all.shape()[0] != static_cast<int64_t>(items.size()))
                    throw Unsupported("batcher: output '" + name + "' of shape " + all.shape().to_string() +
                                      " has no batch axis of " + std::to_string(items.size()) + " items to split");
                for (size_t i = 0; i < batch.size(); ++i) {
                    Tensor item = all.slice(0, static_cast<int64_t>(i), static_cast<int64_t>(i) + 1);
                    std::vector<int64_t> dims(item.shape().dims().begin() + 1, item.shape().dims().end());
                    item = item.reshape(Shape(dims));
                    // Token-level outputs follow the padded axis: cut back to the item's length.
                    if (trimmed && item.rank() > 0 && item.shape()[0] == padded_length && batch[i].length < padded_length)
                        item = item.slice(0, 0, batch[i].length);
                    // On the host the item is a view of the batch's output, which no later run
                    // reuses: copying 32 rows of last_hidden_state cost 0.8 ms a batch. On a
                    // device a copy, so that a caller's item does not hold the whole batch.
                    results[i].set(name, options.outputs_on_host ? item : item.clone());
                }
            }
        } catch (...) {
            error = std::current_exception();
        }
        const auto split_at = Clock::now();
        {
            // Counted before the answers go out: a caller that has its answer sees it in stats().
            std::lock_guard lock(mutex);
            if (copied_at > started) {
                using Ms = std::chrono::duration<double, std::milli>;
                stats.stack_ms += Ms(stacked_at - started).count();
                stats.run_ms += Ms(ran_at - stacked_at).count();
                stats.copy_ms += Ms(copied_at - ran_at).count();
                stats.split_ms += Ms(split_at - copied_at).count();
            }
            if (routed) {
                in_flight_ms[session] -= estimate_ms;
                ++stats.batches_per_session[session];
            }
            ++stats.batches;
            if (stats.batch_sizes.size() <= batch.size()) stats.batch_sizes.resize(batch.size() + 1, 0);
            ++stats.batch_sizes[batch.size()];
            (error ? stats.failed : stats.completed) += batch.size();
            for (const Request& r : batch) record_latency(r.arrived);
        }
        // Answered outside the lock (callbacks may call back into the batcher), then no longer running.
        for (size_t i = 0; i < batch.size(); ++i) answer(batch[i], error, error ? Batch{} : std::move(results[i]));
        std::lock_guard lock(mutex);
        running -= batch.size();
        idle.notify_all();
    }

    void worker() {
        std::unique_lock lock(mutex);
        while (true) {
            std::vector<Request> expired;
            std::vector<Request> batch = next_batch(lock, expired);
            if (!expired.empty()) {
                stats.cancelled += expired.size();
                lock.unlock();
                for (Request& r : expired)
                    answer(r, std::make_exception_ptr(Cancelled("batcher: request " + std::to_string(r.id) +
                                                                " passed its deadline before it ran")),
                           {});
                lock.lock();
                idle.notify_all();
                continue;
            }
            if (batch.empty()) return;  // stopping, and nothing left
            lock.unlock();
            run(batch);
            lock.lock();
        }
    }
};

Batcher::Batcher(const Session& session, BatcherOptions options)
    : Batcher(std::vector<const Session*>{&session}, std::move(options)) {}

Batcher::Batcher(std::vector<const Session*> sessions, BatcherOptions options)
    : state_(std::make_unique<State>(std::move(sessions), std::move(options))) {
    const BatcherOptions& o = state_->options;
    if (state_->sessions.empty() || std::count(state_->sessions.begin(), state_->sessions.end(), nullptr) > 0)
        throw InvalidArgument("batcher: give at least one session, and no null ones");
    if (o.max_batch < 1 || o.max_queue < 1 || o.workers < 1 || o.max_delay.count() < 0)
        throw InvalidArgument("batcher: max_batch, max_queue and workers must be >= 1 and max_delay >= 0");
    if (!std::is_sorted(o.length_buckets.begin(), o.length_buckets.end()) ||
        std::any_of(o.length_buckets.begin(), o.length_buckets.end(), [](int64_t b) { return b < 1; }))
        throw InvalidArgument("batcher: length_buckets must be positive and ascending");
    if (!std::is_sorted(o.batch_sizes.begin(), o.batch_sizes.end()) ||
        std::any_of(o.batch_sizes.begin(), o.batch_sizes.end(), [](int64_t b) { return b < 1; }))
        throw InvalidArgument("batcher: batch_sizes must be positive and ascending");
    // Requests are stacked along axis 0 of each input tensor; a sequence or optional value has
    // no such axis.
    for (const Session* session : state_->sessions)
        for (const auto* infos : {&session->graph().inputs(), &session->graph().outputs()})
            for (const TensorInfo& info : *infos)
                if (info.kind != ValueKind::tensor || info.optional)
                    throw Unsupported("batcher: '" + info.name + "' of graph '" + session->graph().name() +
                                      "' is a sequence or optional value, which requests cannot be stacked by");
    state_->stats.batch_sizes.assign(static_cast<size_t>(o.max_batch) + 1, 0);
    state_->stats.batches_per_session.assign(state_->sessions.size(), 0);
    state_->in_flight_ms.assign(state_->sessions.size(), 0.0);
    for (int i = 0; i < o.workers; ++i) state_->workers.emplace_back([this] { state_->worker(); });
}

Batcher::~Batcher() {
    shutdown(true);
    for (std::thread& t : state_->workers) t.join();
}

Batcher::Ticket Batcher::submit(Batch item, RequestOptions options) {
    auto promise = std::make_shared<std::promise<Batch>>();
    std::future<Batch> result = promise->get_future();
    const uint64_t id = submit(
        std::move(item),
        [promise](std::exception_ptr error, Batch outputs) {
            if (error) promise->set_exception(error);
            else promise->set_value(std::move(outputs));
        },
        options);
    return {id, std::move(result)};
}

uint64_t Batcher::submit(Batch item, Callback done, RequestOptions options) {
    State& s = *state_;
    Request r;
    r.item = std::move(item);
    r.done = std::move(done);
    r.options = options;
    ItemSignature signature = s.describe(r);  // outside the lock: 1 000 submitters share it
    r.arrived = Clock::now();
    std::lock_guard lock(s.mutex);
    if (s.stopping || s.queue.size() >= s.options.max_queue) {
        ++s.stats.rejected;
        throw Overloaded(s.stopping ? "batcher: shutting down, not accepting requests"
                                    : "batcher: " + std::to_string(s.queue.size()) +
                                          " requests are waiting (max_queue); try again later");
    }
    s.check_signature(std::move(signature));
    r.id = s.next_id++;
    // After the last request of at least its priority: searched from the back, where a request
    // of the common priority goes at once.
    auto at = s.queue.end();
    while (at != s.queue.begin() && std::prev(at)->options.priority < r.options.priority) --at;
    const bool new_head = at == s.queue.begin();
    const uint64_t id = r.id;
    s.count_in(r);
    const std::string& head_key = new_head ? r.compatible : s.queue.front().compatible;
    const bool fills_head = s.waiting[head_key] >= s.options.max_batch;
    const bool has_deadline = r.options.deadline.has_value();
    s.queue.insert(at, std::move(r));
    ++s.stats.accepted;
    // A waiting worker needs waking only when its decision may change: a new head (the queue
    // was empty, or this request outranks it), the head's batch just filled, or a deadline it
    // must watch. Waking it on every submit cost a queue walk under the lock per request.
    if (new_head || fills_head || has_deadline) s.work.notify_one();
    return id;
}

bool Batcher::cancel(uint64_t id) {
    State& s = *state_;
    std::unique_lock lock(s.mutex);
    const auto it = std::find_if(s.queue.begin(), s.queue.end(), [&](const Request& r) { return r.id == id; });
    if (it == s.queue.end()) return false;
    s.count_out(*it);
    Request r = std::move(*it);
    s.queue.erase(it);
    ++s.stats.cancelled;
    s.idle.notify_all();
    lock.unlock();
    State::answer(r, std::make_exception_ptr(Cancelled("batcher: request " + std::to_string(id) + " was cancelled")),
                  {});
    return true;
}

void Batcher::shutdown(bool drain) {
    State& s = *state_;
    std::vector<Request> dropped;
    std::unique_lock lock(s.mutex);
    s.stopping = true;
    if (!drain) {
        dropped.assign(std::make_move_iterator(s.queue.begin()), std::make_move_iterator(s.queue.end()));
        s.queue.clear();
        s.waiting.clear();
        s.with_deadline = 0;
        s.stats.cancelled += dropped.size();
    }
    s.work.notify_all();
    lock.unlock();
    for (Request& r : dropped)
        State::answer(r, std::make_exception_ptr(Cancelled("batcher: shut down before request " +
                                                           std::to_string(r.id) + " ran")),
                      {});
    lock.lock();
    s.idle.wait(lock, [&] { return s.queue.empty() && s.running == 0; });
}

BatcherStats Batcher::stats() const {
    State& s = *state_;
    std::lock_guard lock(s.mutex);
    BatcherStats out = s.stats;
    out.queue_depth = s.queue.size();
    out.latency_p50_ms = percentile(s.latencies, 0.50);
    out.latency_p90_ms = percentile(s.latencies, 0.90);
    out.latency_p99_ms = percentile(s.latencies, 0.99);
    return out;
}

}  // namespace infer
