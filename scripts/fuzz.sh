#!/usr/bin/env bash
# Fuzzes a loader with libFuzzer under ASan and UBSan.
#   scripts/fuzz.sh [SECONDS] [TARGET]   (default 600 seconds; TARGET onnx_load or safetensors)
# Builds into build-fuzz/ with clang, seeds the corpus (the ONNX node-test models; small
# safetensors files written here), and prints libFuzzer's final statistics. Crashes land in
# build-fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
target=${2:-onnx_load}
case "$target" in onnx_load|safetensors) ;; *) echo "fuzz.sh: unknown target '$target' (onnx_load, safetensors)" >&2; exit 2 ;; esac
./scripts/install-deps.sh
command -v clang++ >/dev/null || { echo "fuzz.sh: installing clang"; apt-get install -y -qq clang libclang-rt-dev >/dev/null; }
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DINFER_BUILD_FUZZERS=ON -DINFER_WITH_CUDA=OFF -DINFER_BUILD_TESTS=OFF -DINFER_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-fuzz --target "fuzz_$target" -j"$(nproc)"
corpus=build-fuzz/corpus-$target
mkdir -p "$corpus" build-fuzz/crashes
if [[ $target == onnx_load ]]; then
  for model in /usr/share/libonnx-testdata/data/node/*/model.onnx; do
    cp -n "$model" "$corpus/$(basename "$(dirname "$model")").onnx"
  done
else
  python3 - "$corpus" <<'PY'
import json, struct, sys, pathlib
out = pathlib.Path(sys.argv[1])
def write(name, tensors, metadata=None):
    header, data = {}, b""
    if metadata:
        header["__metadata__"] = metadata
    for key, (dtype, shape, payload) in tensors.items():
        header[key] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    (out / name).write_bytes(struct.pack("<Q", len(text)) + text + data)
write("one.safetensors", {"w": ("F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4))}, {"format": "pt"})
write("types.safetensors", {"a": ("F16", [3], b"\0\x3c" * 3), "b": ("BF16", [1, 1], b"\x80\x3f"),
                            "c": ("I64", [2], struct.pack("<2q", 7, -7)), "d": ("BOOL", [2], b"\1\0"),
                            "e": ("U8", [], b"\5"), "f": ("I32", [0, 4], b""), "g": ("F64", [1], struct.pack("<d", 1))})
write("empty.safetensors", {})
PY
fi
# Huge tensors in hostile models must become infer::OutOfMemory, so allocations may fail.
ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 \
  "build-fuzz/bin/fuzz_$target" "$corpus" -max_total_time="$seconds" -rss_limit_mb=4096 \
  -malloc_limit_mb=2048 -timeout=10 -artifact_prefix=build-fuzz/crashes/ -print_final_stats=1
