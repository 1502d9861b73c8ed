#!/usr/bin/env bash
# Load test of infer-serve: open-loop arrivals at increasing rates (build/bin/infer-load), once
# with dynamic batching and once without (--max-batch 1, one request per run), on one device.
# Per rate: requests sent, answered, errors, answers per second, latency p50/p99 (from each
# request's scheduled arrival), and the mean batch size the server formed (its /stats). Writes
# load-on.json, load-off.json and load-test.json (both, with the machine) to the output folder.
#   scripts/load-test.sh                                   MiniLM on the CPU, a short run
#   scripts/load-test.sh --device cuda --rates 100,500,1000,2000,4000,8000 --duration 10
# Options: --device D, --model NAME|PATH, --rates R1,R2,..., --duration S, --max-batch N (on),
#   --max-delay-ms MS, --connections N, --threads N (CPU threads), --precision P,
#   --workers N (batches running at once; 0: one per device), --output NAME (the output asked
#   for; default the model's first), --build DIR (default build), --out DIR (default DIR/load-test). Sequence lengths are drawn
#   uniformly between 8 and 128 (--min-length, --max-length). --in-process 1: no server; infer-load
#   serves the model itself with the same options and its client threads call it directly, so
#   that the figures leave HTTP out (compare with a run without it to see what HTTP costs).
# Needs only infer-serve and infer-load (built with cpp-httplib) and python3 (standard library).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

device=cpu model=all-MiniLM-L6-v2 rates=5,10,20,40 duration=10 max_batch=32 max_delay=2
connections=64 threads=0 precision=f32 build=build out="" min_length=8 max_length=128 workers=0 output=""
in_process=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --device) device=$2 ;; --model) model=$2 ;; --rates) rates=$2 ;; --duration) duration=$2 ;;
    --max-batch) max_batch=$2 ;; --max-delay-ms) max_delay=$2 ;; --connections) connections=$2 ;;
    --threads) threads=$2 ;; --precision) precision=$2 ;; --build) build=$2 ;; --out) out=$2 ;;
    --min-length) min_length=$2 ;; --max-length) max_length=$2 ;; --workers) workers=$2 ;;
    --output) output=$2 ;; --in-process) in_process=$2 ;;
    *) echo "load-test: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
out=${out:-$build/load-test}
mkdir -p "$out"
for program in infer-serve infer-load; do
  [[ -x $build/bin/$program ]] || { echo "load-test: $build/bin/$program is not built (needs libcpp-httplib-dev)" >&2; exit 1; }
done

server_pid=""
stop_server() {
  if [[ -n $server_pid ]]; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
  fi
}
trap stop_server EXIT

run() {  # tag label max_batch
  local log=$out/server-$1.log
  if [[ $in_process == 1 ]]; then
    echo "== $2 (max batch $3) on $device, in process"
    "$build/bin/infer-load" --in-process "$model" --device "$device" --max-batch "$3" --max-delay-ms "$max_delay" \
      --threads "$threads" --precision "$precision" --workers "$workers" --queue 100000 --rates "$rates" \
      --duration "$duration" --connections "$connections" --min-length "$min_length" --max-length "$max_length" \
      --label "$2 in process" --json "$out/load-$1.json" ${output:+--output "$output"} 2>"$log"
    return
  fi
  # Enough HTTP threads for every client connection, so that waiting happens in the batcher.
  "$build/bin/infer-serve" "$model" --host 127.0.0.1 --port 0 --device "$device" --max-batch "$3" \
    --max-delay-ms "$max_delay" --threads "$threads" --precision "$precision" --workers "$workers" \
    --http-threads $((connections + 8)) --queue 100000 >"$log" 2>&1 &
  server_pid=$!
  local port=""
  for _ in $(seq 600); do
    port=$(sed -n 's|.*listening on http://[^:]*:\([0-9]*\).*|\1|p' "$log")
    [[ -n $port ]] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$log"; echo "load-test: infer-serve exited" >&2; exit 1; }
    sleep 0.5
  done
  [[ -n $port ]] || { cat "$log"; echo "load-test: infer-serve did not start" >&2; exit 1; }
  local name
  name=$(sed -n "s/^infer-serve: model '\([^']*\)'.*/\1/p" "$log" | head -n 1)
  echo "== $2 (max batch $3) on $device"
  "$build/bin/infer-load" --url "http://127.0.0.1:$port" --model "$name" --rates "$rates" \
    --duration "$duration" --connections "$connections" --min-length "$min_length" --max-length "$max_length" \
    --label "$2" --json "$out/load-$1.json" ${output:+--output "$output"}
  stop_server
}

run on "batching on" "$max_batch"
run off "batching off" 1

python3 - "$out" "$device" "$precision" <<'PY'
import json, os, platform, subprocess, sys
out, device, precision = sys.argv[1:4]
runs = [json.load(open(os.path.join(out, f"load-{tag}.json"))) for tag in ("on", "off")]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
gpus = ""
try:
    gpus = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                          text=True, timeout=20).stdout.strip()
except (OSError, subprocess.SubprocessError):
    pass
document = {"schema": "infer-load-test/1", "device": device, "precision": precision,
            "machine": {"cpu": cpu, "cores": os.cpu_count(), "gpus": gpus.splitlines()}, "runs": runs}
json.dump(document, open(os.path.join(out, "load-test.json"), "w"), indent=1)
where = ", in process (no HTTP)" if runs[0]["url"].startswith("in-process") else ""
print(f"\nload test on {device} ({precision}{where}), {runs[0]['model']}, sequences {runs[0]['sequence_length']}, "
      f"{runs[0]['duration_s']} s per rate; {cpu}, {os.cpu_count()} cores")
print(f"{'batching':<9}{'offered/s':>10}{'sent':>7}{'ok':>7}{'errors':>7}{'answered/s':>11}{'p50 ms':>9}{'p99 ms':>9}{'mean batch':>11}{'run ms':>8}{'copy ms':>8}  batch sizes")
for run in runs:
    for r in run["rates"]:
        sizes = " ".join(f"{n}:{c}" for n, c in sorted(r["batch_size"]["histogram"].items(), key=lambda kv: int(kv[0])))
        print(f"{run['label'].split()[1]:<9}{r['offered_per_s']:>10.1f}{r['sent']:>7}{r['ok']:>7}{r['errors']:>7}"
              f"{r['throughput_per_s']:>11.1f}{r['latency_ms']['p50']:>9.1f}{r['latency_ms']['p99']:>9.1f}"
              f"{r['batch_size']['mean']:>11.2f}{r['batch_size'].get('worker_ms_per_batch', {}).get('run', 0):>8.2f}"
              f"{r['batch_size'].get('worker_ms_per_batch', {}).get('copy', 0):>8.2f}  {sizes}")
best = [max(r["throughput_per_s"] for r in run["rates"]) for run in runs]
if best[1] > 0:
    print(f"highest answered/s: {best[0]:.1f} with batching, {best[1]:.1f} without ({best[0] / best[1]:.1f}x)")
print(f"JSON: {os.path.join(out, 'load-test.json')}")
PY
