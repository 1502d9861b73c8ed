#pragma once
// A dynamic batcher: many threads submit single items, the batcher runs them in batches.
//
// On a GPU the batch size decides throughput (a DistilBERT batch of 256 costs about 30 times a
// batch of 1, not 256 times), so a service receiving one request at a time should group them.
// The batcher queues items, forms a batch when `max_batch` items are waiting, the oldest has
// waited `max_delay`, or nothing is running, pads ragged items to a common length (zeros, so
// token ids become padding and attention masks 0), runs the batch on the session, and hands
// each caller its own slice of the outputs (token-level outputs trimmed back to its own
// length). Memory is bounded: at most `max_queue` items wait; beyond that a submit fails at
// once with Overloaded, which a server turns into "retry later" rather than letting latency
// and memory grow without limit.
//
//   infer::Batcher batcher(session, {.max_batch = 32, .max_delay = std::chrono::milliseconds(2)});
//   infer::Batcher::Ticket ticket = batcher.submit({{"input_ids", ids}, {"attention_mask", mask}});
//   infer::Tensor embedding = ticket.result.get()["sentence_embedding"];
#include <infer/batch.hpp>
#include <infer/error.hpp>
#include <infer/session.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace infer {

struct BatcherOptions {
    int64_t max_batch = 32;  // items per run
    // How long the oldest waiting item may wait for others before its batch runs anyway.
    std::chrono::microseconds max_delay{2000};
    // When no batch is running, the waiting items run at once instead of waiting max_delay
    // for company: a single request at low load gets the device's own latency, and under load
    // (batches running) items still wait and group. false: every batch waits for max_batch
    // items or max_delay.
    bool start_when_idle = true;
    size_t max_queue = 4096;  // items waiting; a submit beyond it throws Overloaded
    int workers = 1;          // batches run at the same time (Session::run is thread-safe)
    // Ragged items (token sequences of different lengths) are padded along their axis 0 to the
    // smallest of these lengths that holds the batch's longest item, so that a few distinct
    // shapes (and plans) serve every request; empty: to the longest item. An item longer than
    // the last bucket is padded to its own length.
    std::vector<int64_t> length_buckets;
    // Token-level outputs (their axis 1 follows the padded length, as last_hidden_state does)
    // to cut back to each item's own length; other outputs are returned as computed. Named,
    // not guessed: a [B, 8] output is not token-level just because the padded length is 8.
    std::vector<std::string> trim_outputs;
    // Batches are filled up to the smallest of these sizes that holds them, with copies of
    // their last item whose results are dropped, so that a few batch shapes (and plans, which
    // sessions cache up to SessionOptions::max_cached_plans) serve every load; a batch larger
    // than the last size runs as it is. Empty: every batch runs with exactly its items.
    std::vector<int64_t> batch_sizes;
    // Results are copied to the host (a caller thread's tensors should not pin device memory);
    // each item's outputs are then views of its batch's outputs, which stay allocated until the
    // last item of the batch is released. false: outputs stay where the session made them and
    // each item gets a copy of its rows.
    bool outputs_on_host = true;
    // With outputs_on_host, outputs a GPU computed are copied into page-locked buffers the
    // batcher keeps (at most two per worker and output, each reused once the answers viewing
    // it are released), several times faster than into fresh ordinary memory; when all are
    // in use, into ordinary memory. false: always ordinary memory.
    bool pinned_outputs = true;
};

struct RequestOptions {
    int priority = 0;  // higher runs first; equal priorities run in arrival order
    // Not run after this time: the request fails with Cancelled instead.
    std::optional<std::chrono::steady_clock::time_point> deadline;
};

struct BatcherStats {
    uint64_t accepted = 0, rejected = 0, completed = 0, failed = 0, cancelled = 0;
    uint64_t batches = 0;
    size_t queue_depth = 0;                  // items waiting now
    std::vector<uint64_t> batch_sizes;       // [n] = batches of n items (index 0 unused)
    std::vector<uint64_t> batches_per_session;  // in the order the sessions were given
    // Where the workers' time went, summed over all batches, in milliseconds: stacking and
    // padding the items, the session's run, copying its outputs to the host (outputs_on_host),
    // splitting the outputs per item. Divided by `batches`, the cost of one batch; compared
    // with the latency, how long requests waited in the queue.
    double stack_ms = 0, run_ms = 0, copy_ms = 0, split_ms = 0;
    // Submit-to-answer latency of the most recent answers (a bounded window), in milliseconds.
    double latency_p50_ms = 0, latency_p90_ms = 0, latency_p99_ms = 0;
    std::string to_string() const;
};

class Batcher {
public:
    using Callback = std::function<void(std::exception_ptr error, Batch outputs)>;
    struct Ticket {
        uint64_t id;                // for cancel()
        std::future<Batch> result;  // the item's outputs, or its error
    };

    // The session must outlive the batcher. Throws InvalidArgument for bad options.
    Batcher(const Session& session, BatcherOptions options = {});
    // Routing across devices: sessions of one model on several devices (the CPU and each GPU).
    // Before the first batch runs, each session is timed on batches of the first item repeated
    // 1, 2, 4, ... max_batch times; then every formed batch goes to the session expected to
    // finish it first, counting the work already sent to each. A single request at low load
    // thus runs where its latency is lowest, and under load the devices share the batches.
    // Give at least one worker per session so that they run at the same time.
    Batcher(std::vector<const Session*> sessions, BatcherOptions options = {});
    // Finishes every accepted request (see shutdown), then stops the workers.
    ~Batcher();
    Batcher(const Batcher&) = delete;
    Batcher& operator=(const Batcher&) = delete;

    // One item: the model's inputs without their batch axis (input_ids [S], pixel_values
    // [3, H, W]), on the host. The result holds the item's outputs (without the batch axis),
    // or the error of its batch (every item of a batch that failed gets that error), or
    // Cancelled. Throws Overloaded when the queue is full or the batcher shuts down, and
    // InvalidArgument when the item's input names, dtypes or ranks differ from the first
    // item's. The callback form calls `done` exactly once, on a worker thread (or on the
    // caller's, for a request cancelled there); it returns the request's id.
    Ticket submit(Batch item, RequestOptions options = {});
    uint64_t submit(Batch item, Callback done, RequestOptions options = {});
    // Removes a waiting request, which fails with Cancelled; false when it is no longer waiting
    // (already running or answered).
    bool cancel(uint64_t id);

    // Stops accepting requests (submits throw Overloaded); with `drain`, runs every waiting
    // request, else fails them with Cancelled. Returns when no request is waiting or running.
    // Every accepted request is answered exactly once either way.
    void shutdown(bool drain = true);

    BatcherStats stats() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

}  // namespace infer
