"""Timing shared by every peer, by the rules infer-bench follows (src/core/measure): untimed
warm-up runs first, the device synchronized before the clock is read, runs repeated until both
a minimum time and a minimum count, then min / median / nearest-rank p90 and p99 / mean, and
throughput as batch items per second at the median."""
import math
import time

MAX_RUNS = 10000  # infer-bench's MeasureOptions::max_runs


def median(sorted_samples):
    n = len(sorted_samples)
    middle = n // 2
    return sorted_samples[middle] if n % 2 else 0.5 * (sorted_samples[middle - 1] + sorted_samples[middle])


def nearest_rank(sorted_samples, fraction):
    """The nearest-rank percentile: the smallest sample with at least `fraction` of all at or below it."""
    n = len(sorted_samples)
    rank = min(max(math.ceil(fraction * n), 1), n)
    return sorted_samples[rank - 1]


def summarize(samples_ms, batch):
    """The "runs", "latency_ms" and "throughput_per_s" of an infer-bench measurement."""
    if not samples_ms:
        raise ValueError("no samples")
    ordered = sorted(samples_ms)
    middle = median(ordered)
    return {
        "runs": len(ordered),
        "latency_ms": {"min": ordered[0], "median": middle, "p90": nearest_rank(ordered, 0.90),
                       "p99": nearest_rank(ordered, 0.99), "mean": sum(ordered) / len(ordered)},
        "throughput_per_s": 1000.0 * batch / middle,
    }


def measure(run_once, batch, warmup, min_time_s, min_runs, synchronize=lambda: None):
    """Times run_once(), which must leave its result on the host. synchronize() waits for the
    device (torch.cuda.synchronize); it is called after every run, warm-up included, and before
    the clock is read, so asynchronous work is counted when it finishes, not when it is queued."""
    for _ in range(max(1, warmup)):  # at least one: the first run is never inference alone
        run_once()
        synchronize()
    samples = []
    loop_start = time.perf_counter()
    while len(samples) < MAX_RUNS and (len(samples) < min_runs or time.perf_counter() - loop_start < min_time_s):
        start = time.perf_counter()
        run_once()
        synchronize()
        samples.append(1000.0 * (time.perf_counter() - start))
    return summarize(samples, batch)
