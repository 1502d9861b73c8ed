#!/usr/bin/env bash
# Fuzzes the ONNX loader with libFuzzer under ASan and UBSan.
#   scripts/fuzz.sh [SECONDS]   (default 600)
# Builds into build-fuzz/ with clang, seeds the corpus with the ONNX node-test models, and
# prints libFuzzer's final statistics. Crashes land in build-fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
./scripts/install-deps.sh
command -v clang++ >/dev/null || { echo "fuzz.sh: installing clang"; apt-get install -y -qq clang libclang-rt-dev >/dev/null; }
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DINFER_BUILD_FUZZERS=ON -DINFER_WITH_CUDA=OFF -DINFER_BUILD_TESTS=OFF -DINFER_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-fuzz --target fuzz_onnx_load -j"$(nproc)"
corpus=build-fuzz/corpus
mkdir -p "$corpus" build-fuzz/crashes
for model in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
  cp -n "$model" "$corpus/$(basename "$(dirname "$model")").onnx"
done
# Huge tensors in hostile models must become infer::OutOfMemory, so allocations may fail.
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
  build-fuzz/bin/fuzz_onnx_load "$corpus" -max_total_time="$seconds" -rss_limit_mb=4096 \
  -malloc_limit_mb=2048 -timeout=10 -artifact_prefix=build-fuzz/crashes/ -print_final_stats=1
