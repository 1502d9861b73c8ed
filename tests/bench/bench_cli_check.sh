#!/usr/bin/env bash
# infer-bench end to end on the prepared MiniLM: a short sweep on the devices present, its JSON
# checked for the documented keys and for sane statistics, the memory estimate, re-rendering
# from JSON, and clear errors for a missing model or device; then --generate on the prepared
# gpt2-tiny-generation when it is there. Skipped (77) without MiniLM.
#   bench_cli_check.sh INFER_BENCH MODEL_CACHE WORK_DIR
set -uo pipefail
bench=$1 cache=$2 work=$3
if [[ ! -f "$cache/all-MiniLM-L6-v2/model.onnx" ]]; then
  echo "all-MiniLM-L6-v2 is not prepared: run scripts/models/prepare.sh all-MiniLM-L6-v2"
  exit 77
fi
mkdir -p "$work"
export INFER_MODEL_CACHE=$cache
fail() { echo "FAIL: $*"; exit 1; }

"$bench" --batch 1,2 --seq 16 --precision f32,f16 --warmup 1 --min-time 0 --min-runs 3 --profiled-runs 2 \
  --json "$work/bench.json" --report "$work/report.html" >"$work/out.txt" 2>&1 || { cat "$work/out.txt"; fail "sweep"; }
cat "$work/out.txt"
grep -q "recommendation: " "$work/out.txt" || fail "no recommendation printed"
python3 - "$work/bench.json" <<'PY' || fail "JSON check"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "infer-bench/1"
for key in ("library", "machine", "model", "settings", "measurements", "crossover", "recommendation", "notes"):
    assert key in doc, key
machine = doc["machine"]
assert machine["cpu_cores"] >= 1 and machine["cpu_model"]
gpus = machine["gpus"]
series = 2 * (1 + 2 * len(gpus))  # f32 and f16; cpu, and per GPU pinned
points = doc["measurements"]
cpu = [m for m in points if m["device"] == "cpu"]
assert len(cpu) == 4, len(cpu)
if not gpus:
    assert any("no GPU present" in n for n in doc["notes"]), doc["notes"]
    assert doc["crossover"] is None
for m in points:
    lat = m["latency_ms"]
    assert 0 < lat["min"] <= lat["median"] <= lat["p90"] <= lat["p99"], lat
    assert m["runs"] >= 3
    assert abs(m["throughput_per_s"] - 1000.0 * m["batch"] / lat["median"]) < 1e-6 * m["throughput_per_s"]
    assert set(m["breakdown_ms"]) == {"h2d", "compute", "d2h"}
    assert m["cold_start_ms"] > 0
    assert m["memory_bytes"]["weights"] > 0 and m["memory_bytes"]["activations"] > 0
    if m["device"] == "cpu":
        assert m["gpu_busy_fraction"] is None and m["host_memory"] is None
        assert m["breakdown_ms"]["h2d"] == 0 and m["breakdown_ms"]["d2h"] == 0
    else:
        assert 0 < m["gpu_busy_fraction"] <= 1.0001 and m["breakdown_ms"]["h2d"] > 0
# Each device's runtime is started (and timed apart) for each precision, before that precision's
# first series on it only.
for start in {(m["device"], m["precision"]) for m in points}:
    starts = [m["runtime_start_ms"] for m in points if (m["device"], m["precision"]) == start]
    assert starts[0] is not None and starts[0] > 0 and all(s is None for s in starts[1:]), (start, starts)
f16 = {m["batch"]: m for m in cpu if m["precision"] == "f16"}
f32 = {m["batch"]: m for m in cpu if m["precision"] == "f32"}
assert f16[1]["memory_bytes"]["weights"] < 0.6 * f32[1]["memory_bytes"]["weights"]
assert doc["recommendation"].startswith("batch 1")
print("json ok:", len(points), "measurements")
PY
grep -q "<svg" "$work/report.html" || fail "report has no chart"

"$bench" --estimate --devices cpu --batch 1,64 --precision f32 >"$work/estimate.txt" || fail "estimate"
cat "$work/estimate.txt"
grep -q "cpu f32 batch 64: cpu: weights .* (fits)" "$work/estimate.txt" || fail "estimate output"

# The PyTorch peer on the same document, where the models' venv has torch (the GPU machine's
# bench mode depends on it; a refactor once left it without its measure_points).
venv_python=${INFER_PYTHON:-${INFER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/infer/venv}/bin/python}
if [[ -x "$venv_python" ]] && "$venv_python" -c 'import torch, transformers' 2>/dev/null; then
  "$venv_python" "$(dirname "$0")/../../bench/peers/compare.py" "$work/bench.json" --peers torch \
    --out "$work/bench-peers.json" >"$work/peers.txt" 2>&1 || { cat "$work/peers.txt"; fail "torch peer"; }
  python3 -c 'import json, sys; doc = json.load(open(sys.argv[1])); assert any(p["peer"] == "torch" for p in doc["peers"]), doc.get("peers")' \
    "$work/bench-peers.json" || fail "torch peer JSON"
  echo "torch peer ok"
fi

"$bench" --from-json "$work/bench.json" --report "$work/again.html" >/dev/null || fail "--from-json"
cmp -s "$work/report.html" "$work/again.html" || fail "re-rendered report differs"

"$bench" no-such-model >"$work/err.txt" 2>&1
[[ $? -eq 2 ]] && grep -q "no model 'no-such-model'" "$work/err.txt" || fail "missing model error"
"$bench" --devices tpu >"$work/err.txt" 2>&1
[[ $? -eq 2 ]] && grep -q "tpu" "$work/err.txt" || fail "unknown device error"
"$bench" --devices cpu --host-memory nowhere >"$work/err.txt" 2>&1
[[ $? -eq 2 ]] && grep -q "host-memory 'nowhere'" "$work/err.txt" || fail "unknown host memory error"
"$bench" --devices cpu --vocabulary 1 >"$work/err.txt" 2>&1
[[ $? -eq 2 ]] && grep -q -- "--vocabulary 1" "$work/err.txt" || fail "vocabulary of one id error"
# A vocabulary of fewer than 2000 ids (the folder's vocab_size, 1000): ids drawn below it.
if [[ -f "$cache/bert-tiny-checkpoint/config.json" ]]; then
  "$bench" "$cache/bert-tiny-checkpoint" --devices cpu --batch 1 --seq 8 --warmup 1 --min-time 0 --min-runs 2 \
    --profiled-runs 0 --json "$work/tiny.json" >"$work/tiny.txt" 2>&1 || { cat "$work/tiny.txt"; fail "small vocabulary"; }
  python3 - "$work/tiny.json" <<'PY' || { cat "$work/tiny.txt"; fail "small vocabulary JSON"; }
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["model"]["vocabulary"] == 1000, doc["model"]
assert len(doc["measurements"]) == 1, doc.get("notes")
PY
fi
if [[ -f "$cache/gpt2-tiny-generation/config.json" ]]; then
  "$bench" "$cache/gpt2-tiny-generation" --generate --batch 1,3 --prompt 5 --new-tokens 6 --runs 2 \
    --json "$work/generation.json" >"$work/generation.txt" 2>&1 || { cat "$work/generation.txt"; fail "--generate"; }
  cat "$work/generation.txt"
  python3 - "$work/generation.json" <<'PY' || fail "generation JSON check"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "infer-bench-generation/1"
cpu = [m for m in doc["measurements"] if m["device"] == "cpu"]
assert [m["batch"] for m in cpu] == [1, 3], cpu
for m in doc["measurements"]:
    assert m["prompt_tokens"] == 5 and m["new_tokens"] == 6 and len(m["decode_tokens_per_s_runs"]) == 2
    assert m["prefill_ms"] > 0 and m["decode_tokens_per_s"] > 0
    step = m["step_profile"]
    assert step["wall_ms"] > 0 and step["top_ops_ms"], step
    assert any(o["op"] == "ArgMax" for o in step["top_ops_ms"]) or len(step["top_ops_ms"]) == 8
print("generation json ok:", len(doc["measurements"]), "measurements")
PY
  "$bench" "$cache/all-MiniLM-L6-v2" --generate >"$work/err.txt" 2>&1
  [[ $? -eq 2 ]] && grep -q "needs a Hugging Face folder" "$work/err.txt" || fail "--generate on an ONNX model"
fi
echo "infer-bench checks passed"
