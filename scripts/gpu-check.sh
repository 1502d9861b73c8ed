#!/usr/bin/env bash
# On a GPU machine with no package registry: unpacks .deps/debs/*.deb (from
# scripts/offline-deps.sh) into a private prefix, builds infer for sm_90 into build-gpu/, runs
# the cuda tests and the op tests on cuda, then compute-sanitizer's memcheck on the cuda test
# programs. Logs go to $OUT when it is set (else build-gpu/logs); a summary is printed last.
#   scripts/gpu-check.sh               build, cuda tests, op tests, memcheck
#   scripts/gpu-check.sh conformance   build, then the ONNX node tests through infer-run on cuda
#                                      (writes the passing names to expected_pass_cuda.txt in logs)
#   scripts/gpu-check.sh models        build, export the random-weight models with the machine's
#                                      Python (torch, transformers), unpack a carried MiniLM
#                                      (.carry/, from scripts/models/pack-minilm-for-device.py),
#                                      then the end-to-end model tests and embed on cuda
#   scripts/gpu-check.sh checkpoints   build, make the small random-weight Hugging Face checkpoints
#                                      with the machine's Python (torch, transformers), then the
#                                      graphs infer builds from them against transformers on cuda
#   scripts/gpu-check.sh generation    build, prepare gpt2/t5-tiny-generation and the full-size
#                                      $INFER_GEN_MODELS (default "gpt2-small t5-small": their
#                                      -generation folders, random weights and generate()'s ids made
#                                      with the machine's transformers), the generation tests on cuda
#                                      and cpu (ids against generate(); the tiny ones under memcheck
#                                      too), then the speed against generate():
#                                      bench/generation/compare.py at $INFER_GEN_POINTS for each of
#                                      $INFER_GEN_MODELS (and the CPU at each of $INFER_GEN_CPU_THREADS);
#                                      INFER_GEN_TESTS=0 leaves the tests out
#   scripts/gpu-check.sh bench         build infer-bench, then DistilBERT-base at sequence 128,
#                                      batches 1-256, f32/f16, pinned/pageable, cpu and cuda, and
#                                      the peers (ONNX Runtime, PyTorch): JSON and report in logs
#   scripts/gpu-check.sh compare       build infer-bench here and in $INFER_BASELINE_TREE (a source
#                                      tree of the commit to compare with, e.g. from git archive),
#                                      then DistilBERT-base at sequence 128, alternating the two
#                                      builds point by point: cuda f16/f32 and cpu f32
#   scripts/gpu-check.sh serve         build infer-serve and infer-load, unpack the carried MiniLM
#                                      (.carry/, as for models), then scripts/load-test.sh with
#                                      batching on and off on each of $INFER_LOAD_DEVICES
#                                      (default: cuda cpu), at $INFER_LOAD_RATES_CUDA / _CPU,
#                                      with $INFER_LOAD_ARGS added (e.g. "--precision f16 --workers 2"),
#                                      through HTTP and/or in process ($INFER_LOAD_WAYS, default http),
#                                      $INFER_LOAD_CONNECTIONS client connections (default 256 cuda, 128 cpu)
#   scripts/gpu-check.sh cnn           build, the Conv/FusedConv/pool op tests (planes and channel-last) on cuda
#                                      (and under memcheck), cuda_graph_tests,
#                                      the CNNs among the prepared architectures ($INFER_CNN_MODELS,
#                                      default all nine; made with the machine's torchvision) against the framework on cuda in
#                                      f32/f16/bf16, then ResNet-50 on cuda in f16 at
#                                      $INFER_CNN_PEER_BATCHES (default 64) with PyTorch eager and
#                                      torch.compile beside it (infer measured again point by point
#                                      between them), and ResNet-50 and MobileNetV2
#                                      (depthwise) alone at $INFER_CNN_BATCHES (default 1,64)
#   scripts/gpu-check.sh cpu           build infer-bench (and the unit and op tests: on a host with
#                                      AMX, its kernels' tests and the bf16 and int8 op tests through
#                                      them), then $INFER_CPU_MODEL (default DistilBERT-base) on the CPU alone at
#                                      a few batches, once per OpenBLAS kernel choice in
#                                      $INFER_CPU_CORETYPES (default: the detected one), with
#                                      ONNX Runtime beside it and the ops that took the time;
#                                      $INFER_CPU_PRECISIONS (default f32; e.g. f32,int8) picks
#                                      the precisions, ONNX Runtime quantizing for int8
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode=${1:-tests}
logs=${OUT:-build-gpu/logs}
mkdir -p "$logs"
prefix=${INFER_DEPS_PREFIX:-/tmp/infer-deps}
jobs=$(nproc)
status=0

# Never into /: these Debian 12 libraries would replace the machine's own, newer ones.
shopt -s nullglob
debs=(.deps/debs/*.deb)
if [[ ${#debs[@]} -eq 0 ]]; then
  echo "gpu-check: no packages in .deps/debs; run scripts/offline-deps.sh on a connected machine" >&2
  exit 2
fi
mkdir -p "$prefix"
for deb in "${debs[@]}"; do dpkg -x "$deb" "$prefix"; done

lib=$prefix/usr/lib/x86_64-linux-gnu
export CMAKE_PREFIX_PATH=$prefix/usr:$prefix/usr/share/eigen3/cmake:$lib/cmake
export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=/usr/local/cuda/bin:$PATH

{
  nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  nvcc --version | tail -n 2
  cmake --version | head -n 1
  # The host's CPU too: its cores (and whether they are hyperthreads) decide the CPU figures.
  lscpu | grep -E "Model name|^CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|L2|L3"
} >"$logs/gpu-info.log" 2>&1
cat "$logs/gpu-info.log"

# Only what the checks below run: the rest of the tree (tools, examples) is CPU work. The op
# tests are built separately, so that a broken op case cannot stop the CUDA tests from running.
targets=(cuda_transfer_tests cuda_device_tests cuda_graph_tests cuda_encoder_tests cuda_gemm_tests
         cuda_capture_tests cuda_timing_tests)
[[ $mode == conformance ]] && targets=(infer-run onnx_conformance)
[[ $mode == models ]] && targets=(e2e_tests embed)
[[ $mode == checkpoints ]] && targets=(e2e_tests)
[[ $mode == generation ]] && targets=(e2e_tests infer-bench)
[[ $mode == bench || $mode == compare ]] && targets=(infer-bench)
[[ $mode == cpu ]] && targets=(infer-bench unit_tests op_tests)
[[ $mode == serve ]] && targets=(infer-serve infer-load)
[[ $mode == cnn ]] && targets=(op_tests e2e_tests infer-bench cuda_graph_tests)
start=$SECONDS
if ! { cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_CUDA_ARCHITECTURES=90 -DProtobuf_ROOT="$prefix/usr" -DBLA_VENDOR=OpenBLAS \
         -DCMAKE_LIBRARY_PATH="$lib;$lib/openblas-pthread" \
         -DCMAKE_INCLUDE_PATH="$prefix/usr/include;$prefix/usr/include/x86_64-linux-gnu/openblas-pthread" &&
       cmake --build build-gpu --parallel "$jobs" --target "${targets[@]}"; } >"$logs/build.log" 2>&1; then
  tail -n 60 "$logs/build.log"
  echo "gpu-check: build FAILED after $((SECONDS - start)) s (log: $logs/build.log)"
  exit 1
fi
# Per measured point of an infer-bench JSON document: its median and the ops that took the time.
top_ops() {
  python3 - "$1" <<'PY'
import json, sys
for m in json.load(open(sys.argv[1]))["measurements"]:
    ops = ", ".join(f'{o["op"]} {o["ms"]:.3f}' for o in m.get("top_ops_ms", []))
    print(f'{m["precision"]} batch {m["batch"]}: median {m["latency_ms"]["median"]:.3f} ms; ops (ms): {ops}')
PY
}
# MiniLM with real weights cannot be exported here (no registry): it is carried in .carry/
# (scripts/models/pack-minilm-for-device.py), its model.onnx perhaps xz-compressed.
unpack_carried_minilm() {
  if [[ -f .carry/all-MiniLM-L6-v2/model.onnx.xz ]]; then
    rm -rf .cache/models/all-MiniLM-L6-v2 && mkdir -p .cache/models
    cp -r .carry/all-MiniLM-L6-v2 .cache/models/
    python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
      .cache/models/all-MiniLM-L6-v2/model.onnx.xz .cache/models/all-MiniLM-L6-v2/model.onnx
    rm .cache/models/all-MiniLM-L6-v2/model.onnx.xz
  elif [[ -d .carry/all-MiniLM-L6-v2 ]]; then
    rm -rf .cache/models/all-MiniLM-L6-v2 && mkdir -p .cache/models && cp -r .carry/all-MiniLM-L6-v2 .cache/models/
  fi
}
if [[ $mode == serve ]]; then
  echo "gpu-check: built in $((SECONDS - start)) s"
  unpack_carried_minilm
  [[ -f .cache/models/all-MiniLM-L6-v2/model.onnx ]] ||
    { echo "gpu-check: no MiniLM: carry .carry/all-MiniLM-L6-v2 (scripts/models/pack-minilm-for-device.py)"; exit 1; }
  for device in ${INFER_LOAD_DEVICES:-cuda cpu}; do
    if [[ $device == cpu ]]; then rates=${INFER_LOAD_RATES_CPU:-25,50,100,200,400}; connections=${INFER_LOAD_CONNECTIONS:-128}
    else rates=${INFER_LOAD_RATES_CUDA:-250,500,1000,2000,4000,8000}; connections=${INFER_LOAD_CONNECTIONS:-256}; fi
    for way in ${INFER_LOAD_WAYS:-http}; do  # http, in-process (no server: what HTTP costs)
      run=$logs/load-$device-$way
      timeout 500 scripts/load-test.sh --build build-gpu --device "$device" --rates "$rates" \
        --duration "${INFER_LOAD_DURATION:-8}" --connections "$connections" --out "$run" \
        --in-process "$([[ $way == in-process ]] && echo 1 || echo 0)" ${INFER_LOAD_ARGS:-} >"$run.log" 2>&1 || status=1
      sed -n '/^load test on/,$p' "$run.log"
      [[ $status -eq 0 ]] || tail -n 30 "$run.log"
    done
  done
  echo "gpu-check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED) in $SECONDS s"
  exit $status
fi
if [[ $mode == cnn ]]; then
  echo "gpu-check: built in $((SECONDS - start)) s"
  conv_ops="op Conv,op FusedConv,op MaxPool,op AveragePool,op ChannelsLastConv,op ChannelsLastMaxPool"
  timeout 120 build-gpu/bin/op_tests --backends=cuda "$conv_ops" >"$logs/op-tests-conv.log" 2>&1 || status=1
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  timeout 200 "$sanitizer" --tool memcheck --report-api-errors no --error-exitcode 99 build-gpu/bin/op_tests \
    --backends=cuda "$conv_ops" >"$logs/memcheck-conv.log" 2>&1 || status=1
  grep -E "FAILED|failed|test cases|All tests passed" "$logs/op-tests-conv.log"
  grep -E "ERROR SUMMARY|test cases|All tests passed" "$logs/memcheck-conv.log"
  # The graph tests' channel-last CNN stretch (f16, bf16) among them.
  timeout 120 build-gpu/bin/cuda_graph_tests >"$logs/cuda-graph-tests.log" 2>&1 || status=1
  grep -E "FAILED|test cases|All tests passed" "$logs/cuda-graph-tests.log"
  INFER_PYTHON=python3 timeout 240 scripts/models/prepare.sh ${INFER_CNN_MODELS:-resnet50-random resnet18-random \
    mobilenet-v2-random mobilenet-v3-small-random efficientnet-b0-random densenet121-random convnext-tiny-random \
    fcn-resnet50-random fpn-resnet50-random} >"$logs/prepare.log" 2>&1 || status=1
  tail -n 4 "$logs/prepare.log"
  timeout 240 build-gpu/bin/e2e_tests --architectures --device cuda "[architectures]" >"$logs/e2e-cnn-cuda.log" 2>&1 || status=1
  grep -E "^e2e|FAILED|test cases|All tests passed" "$logs/e2e-cnn-cuda.log"
  # ResNet-50 f16 at the peers' batches (each a torch.compile), then both CNNs at the others alone.
  timeout 120 build-gpu/bin/infer-bench resnet50-random --devices cuda --batch "${INFER_CNN_PEER_BATCHES:-64}" \
    --precision f16 --warmup 3 --min-runs 10 --min-time 0.5 --profiled-runs 3 --json "$logs/resnet50.json" \
    >"$logs/resnet50.log" 2>&1 || status=1
  cat "$logs/resnet50.log"
  timeout 300 python3 bench/peers/compare.py --no-torch-cpu --peers torch,torch.compile "$logs/resnet50.json" \
    --infer-bench build-gpu/bin/infer-bench --out "$logs/resnet50-with-peers.json" >"$logs/resnet50-peers.log" 2>&1 ||
    status=1
  cat "$logs/resnet50-peers.log"
  for model in resnet50-random mobilenet-v2-random; do
    timeout 60 build-gpu/bin/infer-bench $model --devices cuda --batch "${INFER_CNN_BATCHES:-1,64}" \
      --precision f16 --warmup 3 --min-runs 10 --min-time 0.5 --profiled-runs 3 --json "$logs/$model.json" \
      >"$logs/$model.log" 2>&1 || status=1
    cat "$logs/$model.log"
    top_ops "$logs/$model.json" || status=1
  done
  echo "gpu-check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED) in $SECONDS s"
  exit $status
fi
if [[ $mode == models ]]; then
  echo "gpu-check: built in $((SECONDS - start)) s"
  unpack_carried_minilm
  INFER_PYTHON=python3 timeout 400 scripts/models/prepare.sh ${INFER_MODELS:-distilbert-base-random \
    bert-base-random gpt2-small-random resnet50-random vit-base-random resnet18-random \
    mobilenet-v3-small-random efficientnet-b0-random mobilenet-v2-random densenet121-random \
    convnext-tiny-random fcn-resnet50-random fpn-resnet50-random} >"$logs/prepare.log" 2>&1 || status=1
  tail -n 8 "$logs/prepare.log"
  timeout 300 build-gpu/bin/e2e_tests --models --device cuda "[models]" >"$logs/e2e-models-cuda.log" 2>&1 || status=1
  timeout 400 build-gpu/bin/e2e_tests --architectures --device cuda "[architectures]" \
    >>"$logs/e2e-models-cuda.log" 2>&1 || status=1
  for precision in f32 f16 bf16; do  # into the log, then shown: a loop piped to tee loses its status
    echo "== embed --device cuda --precision $precision"
    build-gpu/bin/embed --device cuda --precision "$precision" "A man is eating food." \
      "A man is eating a piece of bread." "The girl is carrying a baby." || status=1
  done >"$logs/embed-cuda.log" 2>&1
  cat "$logs/embed-cuda.log"
  grep -E "^e2e|FAILED|test cases|All tests passed" "$logs/e2e-models-cuda.log" | head -n 60
  echo "gpu-check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED) in $SECONDS s"
  exit $status
fi
if [[ $mode == checkpoints ]]; then
  echo "gpu-check: built in $((SECONDS - start)) s"
  INFER_PYTHON=python3 timeout 300 scripts/models/prepare.sh bert-tiny-checkpoint roberta-tiny-checkpoint \
    distilbert-tiny-checkpoint gpt2-tiny-checkpoint bert-base-checkpoint distilbert-base-checkpoint \
    gpt2-small-checkpoint >"$logs/prepare.log" 2>&1 || status=1
  tail -n 4 "$logs/prepare.log"
  for device in cuda cpu; do
    timeout 200 build-gpu/bin/e2e_tests --checkpoints --device "$device" "[checkpoints]" >>"$logs/e2e-checkpoints.log" 2>&1 || status=1
  done
  grep -E "^e2e|FAILED|test cases|All tests passed" "$logs/e2e-checkpoints.log"
  echo "gpu-check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED) in $SECONDS s"
  exit $status
fi
if [[ $mode == generation ]]; then
  echo "gpu-check: built in $((SECONDS - start)) s"
  full_size=()
  for model in ${INFER_GEN_MODELS-gpt2-small t5-small}; do full_size+=("$model-generation"); done
  INFER_PYTHON=python3 timeout 400 scripts/models/prepare.sh gpt2-tiny-generation t5-tiny-generation "${full_size[@]}" \
    >"$logs/prepare.log" 2>&1 || { tail -n 20 "$logs/prepare.log"; exit 1; }
  if [[ ${INFER_GEN_TESTS:-1} != 0 ]]; then
  # (Loops write to their log, shown after: a loop piped to tee runs in a subshell, losing status.)
  for device in cuda cpu; do
    timeout 300 build-gpu/bin/e2e_tests --checkpoints --device "$device" "[generation]" >>"$logs/e2e-generation.log" 2>&1 || status=1
  done
  grep -E "^e2e|FAILED|failed|test cases|All tests passed" "$logs/e2e-generation.log"
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  # Memcheck on the tiny models only (a folder of links to them): the full-size ones take minutes under it.
  mkdir -p /tmp/infer-tiny-generation
  for model in gpt2-tiny-generation t5-tiny-generation; do ln -sfn "$PWD/.cache/models/$model" /tmp/infer-tiny-generation/; done
  INFER_MODEL_CACHE=/tmp/infer-tiny-generation timeout 200 "$sanitizer" --tool memcheck --report-api-errors no \
    --error-exitcode 99 build-gpu/bin/e2e_tests --checkpoints --device cuda "[generation]" "~one generator serves*" \
    >"$logs/memcheck-generation.log" 2>&1 || status=1
  grep -E "ERROR SUMMARY|test cases|All tests passed" "$logs/memcheck-generation.log"
  fi
  # The speed: GPT-2 small and T5-small (transformers' default configurations, random weights)
  # against generate() on the same GPU and CPU cores.
  for model in "${full_size[@]}"; do
    echo "== $model, prompt 32, 64 new tokens" >>"$logs/generation-speed.log"
    timeout 400 python3 bench/generation/compare.py .cache/models/$model --infer-bench build-gpu/bin/infer-bench \
      --points "${INFER_GEN_POINTS:-cuda:f16:1,cuda:f16:32,cuda:f32:1,cpu:f32:1}" --prompt 32 --new 64 --runs 5 \
      --json "$logs/generation-$model.json" >>"$logs/generation-speed.log" 2>&1 || status=1
    # The CPU at other thread counts (both sides), e.g. INFER_GEN_CPU_THREADS="8 4": where the
    # cores are hyperthreads, all of them may be slower than half.
    for threads in ${INFER_GEN_CPU_THREADS:-}; do
      echo "== $model on the CPU with $threads threads" >>"$logs/generation-speed.log"
      timeout 200 python3 bench/generation/compare.py .cache/models/$model --infer-bench build-gpu/bin/infer-bench \
        --points cpu:f32:1 --prompt 32 --new 64 --runs 5 --threads "$threads" >>"$logs/generation-speed.log" 2>&1 || status=1
    done
  done
  [[ -f "$logs/generation-speed.log" ]] && cat "$logs/generation-speed.log"
  echo "gpu-check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED) in $SECONDS s"
  exit $status
fi
if [[ $mode == bench ]]; then
  echo "gpu-check: built in $((SECONDS - start)) s"
  INFER_PYTHON=python3 timeout 300 scripts/models/prepare.sh distilbert-base-random >"$logs/prepare.log" 2>&1 ||
    { tail -n 20 "$logs/prepare.log"; exit 1; }
  timeout 420 build-gpu/bin/infer-bench distilbert-base-random --devices cpu,cuda --seq 128 \
    --batch "${INFER_BENCH_BATCHES:-1,2,4,8,16,32,64,128,256}" --precision f32,f16 --cpu-precision f32 \
    --host-memory both --warmup 2 --min-runs 3 --profiled-runs 3 --min-time "${INFER_BENCH_MIN_TIME:-0.5}" --json "$logs/bench.json" --report "$logs/report.html" \
    >"$logs/bench.log" 2>&1 || status=1
  cat "$logs/bench.log"
  timeout 400 python3 bench/peers/compare.py --no-torch-cpu "$logs/bench.json" --out "$logs/bench-with-peers.json" \
    >"$logs/peers.log" 2>&1 || status=1
  cat "$logs/peers.log"
  [[ -f "$logs/bench-with-peers.json" ]] &&
    build-gpu/bin/infer-bench --from-json "$logs/bench-with-peers.json" --report "$logs/report.html" >/dev/null
  echo "gpu-check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED) in $SECONDS s"
  exit $status
fi
if [[ $mode == compare ]]; then
  baseline=${INFER_BASELINE_TREE:?set INFER_BASELINE_TREE to the baseline source tree}
  ( cd "$baseline" && cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DProtobuf_ROOT="$prefix/usr" -DBLA_VENDOR=OpenBLAS -DINFER_BUILD_TESTS=OFF -DINFER_BUILD_EXAMPLES=OFF \
      -DCMAKE_LIBRARY_PATH="$lib;$lib/openblas-pthread" \
      -DCMAKE_INCLUDE_PATH="$prefix/usr/include;$prefix/usr/include/x86_64-linux-gnu/openblas-pthread" &&
    cmake --build build-gpu --parallel "$jobs" --target infer-bench ) >"$logs/build-baseline.log" 2>&1 ||
    { tail -n 30 "$logs/build-baseline.log"; echo "gpu-check: baseline build FAILED"; exit 1; }
  echo "gpu-check: both built in $((SECONDS - start)) s"
  INFER_PYTHON=python3 timeout 300 scripts/models/prepare.sh distilbert-base-random >"$logs/prepare.log" 2>&1 ||
    { tail -n 20 "$logs/prepare.log"; exit 1; }
  model=.cache/models/distilbert-base-random
  point() {  # build-dir tag device precision batch
    timeout 120 "$1"/bin/infer-bench "$model" --devices "$3" --seq 128 --batch "$5" --precision "$4" \
      --cpu-precision "$4" --host-memory pinned --warmup 3 --min-runs 10 --profiled-runs 1 --min-time 1 \
      --json "$logs/compare-$2-$3-$4-$5.json" >/dev/null 2>&1 || { echo "  $2 $3 $4 batch $5 FAILED"; status=1; }
  }
  for spec in "cuda f16 1" "cuda f16 32" "cuda f16 256" "cuda f32 32" "cpu f32 1" "cpu f32 8"; do
    read -r device precision batch <<<"$spec"
    for round in 1 2; do  # alternate, twice, so drift on the machine shows
      point "$baseline/build-gpu" "old$round" "$device" "$precision" "$batch"
      point build-gpu "new$round" "$device" "$precision" "$batch"
    done
  done
  python3 - "$logs" <<'PY' || status=1
import glob, json, os, sys
logs = sys.argv[1]
def median(tag, d, p, b):
    path = os.path.join(logs, f"compare-{tag}-{d}-{p}-{b}.json")
    ms = [m for m in json.load(open(path))["measurements"] if m["device"].startswith(d)]
    return ms[0]["latency_ms"]["median"]
print(f"{'point':<18}{'old ms':>10}{'new ms':>10}{'new/old':>9}")
for spec in ["cuda f16 1", "cuda f16 32", "cuda f16 256", "cuda f32 32", "cpu f32 1", "cpu f32 8"]:
    d, p, b = spec.split()
    old = min(median(f"old{r}", d, p, b) for r in (1, 2))
    new = min(median(f"new{r}", d, p, b) for r in (1, 2))
    print(f"{spec:<18}{old:>10.3f}{new:>10.3f}{new / old:>9.3f}")
PY
  echo "gpu-check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED) in $SECONDS s"
  exit $status
fi
if [[ $mode == cpu ]]; then
  echo "gpu-check: built in $((SECONDS - start)) s"
  lscpu | grep -E "Model name|^CPU\(s\)"
  echo "AVX-512 / AMX flags: $(grep -o -w -E 'avx512f|avx512_bf16|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  # The AMX kernels run only on such a host: their unit tests, then the op tests' bf16 and int8
  # products through them (INFER_BF16_GEMM, INFER_INT8_KERNEL).
  if grep -q -w amx_tile /proc/cpuinfo; then
    { timeout 120 build-gpu/bin/unit_tests "[amx],INFER_BF16_GEMM*" &&
      INFER_BF16_GEMM=amx_bf16 timeout 200 build-gpu/bin/op_tests --backends=cpu "op FusedMatMul,op MatMul,op Gemm,op Attention,op Conv,op FusedConv" &&
      INFER_INT8_KERNEL=amx_int8 timeout 200 build-gpu/bin/unit_tests "[int8],[qdq]" &&
      INFER_INT8_KERNEL=amx_int8 timeout 200 build-gpu/bin/op_tests --backends=cpu \
        "op QLinearMatMul,op MatMulInteger,op QLinearConv,op ConvInteger,op QuantizedMatMul,op ChannelsLastQLinearConv"; } \
      >"$logs/amx-tests.log" 2>&1 || status=1
    grep -E "test cases|FAILED|failed|warning" "$logs/amx-tests.log"
  fi
  cpu_model=${INFER_CPU_MODEL:-distilbert-base-random}
  INFER_PYTHON=python3 timeout 300 scripts/models/prepare.sh "$cpu_model" >"$logs/prepare.log" 2>&1 ||
    { tail -n 20 "$logs/prepare.log"; exit 1; }
  for coretype in ${INFER_CPU_CORETYPES:-detected}; do
    tag=cpu-$coretype
    ( [[ $coretype != detected ]] && export OPENBLAS_CORETYPE=$coretype
      timeout 240 build-gpu/bin/infer-bench "$cpu_model" --devices cpu --seq 128 \
        --batch "${INFER_BENCH_BATCHES:-1,8,32}" --precision "${INFER_CPU_PRECISIONS:-f32}" --warmup 2 --min-runs 5 --profiled-runs 3 \
        --min-time 1 --json "$logs/$tag.json" ${INFER_BENCH_ARGS:-} ) >"$logs/$tag.log" 2>&1 || status=1
    echo "== OPENBLAS_CORETYPE=$coretype"
    cat "$logs/$tag.log"
    top_ops "$logs/$tag.json" || status=1
  done
  # The peers once, against the first kernel choice measured.
  coretypes=(${INFER_CPU_CORETYPES:-detected})
  timeout 300 python3 bench/peers/compare.py --no-torch-cpu "$logs/cpu-${coretypes[0]}.json" --out "$logs/cpu-with-peers.json" \
    >"$logs/peers.log" 2>&1 || status=1
  cat "$logs/peers.log"
  echo "gpu-check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED) in $SECONDS s"
  exit $status
fi
if [[ $mode == conformance ]]; then
  echo "gpu-check: built in $((SECONDS - start)) s"
  timeout 540 build-gpu/bin/onnx_conformance --tests "$prefix/usr/share/libonnx-testdata/data/node" \
    --infer-run build-gpu/bin/infer-run --device cuda --expected "$logs/expected_pass_cuda.txt" \
    --work /tmp/infer-conformance --update >"$logs/conformance-cuda.log" 2>&1
  status=$?
  grep -E "^FAIL" "$logs/conformance-cuda.log" | head -n 30
  grep -E "ONNX node tests on|wrote" "$logs/conformance-cuda.log"
  exit $status
fi
op_tests=true
if ! cmake --build build-gpu --parallel "$jobs" --target op_tests >>"$logs/build.log" 2>&1; then
  grep -E -m 20 "error|FAILED" "$logs/build.log"
  echo "gpu-check: op_tests did not build; running the CUDA tests without them"
  op_tests=false
  status=1
fi
echo "gpu-check: built in $((SECONDS - start)) s"

# The cuda-labelled tests except the op tests, which run next with their full summary.
ctest --test-dir build-gpu -L cuda -E '^(op_tests|onnx_conformance|e2e)' --output-on-failure >"$logs/ctest-cuda.log" 2>&1 ||
  status=1
if $op_tests; then
  timeout 300 build-gpu/bin/op_tests --backends=cuda >"$logs/op-tests-cuda.log" 2>&1 || status=1
fi

# memcheck: the API errors the tests provoke on purpose (10 PB allocations, bad indices) are
# not memory errors, so only kernel and memory faults count.
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: >"$logs/memcheck.log"
# (The encoder test is left out: twelve BERT-base layers under memcheck take too long.)
for program in build-gpu/bin/cuda_{transfer,device,graph,gemm,capture}_tests; do
  echo "=== $program" >>"$logs/memcheck.log"
  timeout 300 "$sanitizer" --tool memcheck --report-api-errors no --error-exitcode 99 \
    "$program" >>"$logs/memcheck.log" 2>&1 || status=1
done
# Every op kernel, once per case and dtype (the harness self-test uses no GPU, so skip it).
if $op_tests; then
  echo "=== build-gpu/bin/op_tests --backends=cuda" >>"$logs/memcheck.log"
  timeout 300 "$sanitizer" --tool memcheck --report-api-errors no --error-exitcode 99 \
    build-gpu/bin/op_tests --backends=cuda "~[harness]" >"$logs/memcheck-op-tests.log" 2>&1 || status=1
  grep -E "ERROR SUMMARY|test cases|All tests passed" "$logs/memcheck-op-tests.log" >>"$logs/memcheck.log"
fi

build-gpu/bin/cuda_encoder_tests >"$logs/encoder.log" 2>&1 || status=1

echo "================ gpu-check summary"
head -n 2 "$logs/gpu-info.log"
grep -E "tests passed|tests failed|Failed|\*\*\*|Skipped|Not Run" "$logs/ctest-cuda.log"
if $op_tests; then
  grep -E -A 60 "^op +cuda" "$logs/op-tests-cuda.log" | grep -E "^(op |TOTAL)|/[1-9][0-9]*/" | head -n 40
  grep -E "test cases|All tests passed|op_tests:" "$logs/op-tests-cuda.log" | tail -n 5
fi
grep -E "^===|ERROR SUMMARY|test cases|All tests passed" "$logs/memcheck.log"
grep -E "^encoder|test cases|All tests passed" "$logs/encoder.log"
echo "gpu-check: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED) in $SECONDS s"
exit $status
